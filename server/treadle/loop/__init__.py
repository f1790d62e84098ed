"""The agent loop: ``AgentLoop.stream`` runs a call; ``generate`` consumes the same stream."""

from .run import AgentLoop, GenerateResult

__all__ = ["AgentLoop", "GenerateResult"]
