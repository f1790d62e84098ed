"""Server settings and declarative agent files (no grpc here: agents are parsed in ``api``)."""

from .agent_file import AgentFileError, load_agent_file
from .settings import Settings

__all__ = ["AgentFileError", "Settings", "load_agent_file"]
