"""What a model call is given besides the prompt: tool specs, tool choice and model settings.

Shared by the server (providers, the loop) and the processor SDKs (``processLLMRequest`` sees and
may replace them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias


@dataclass
class ToolSpec:
    """A tool as the model sees it."""

    name: str
    description: str = ""
    input_schema: dict[str, Any] = field(
        default_factory=lambda: {"type": "object", "properties": {}}
    )


ToolChoice: TypeAlias = Literal["auto", "none", "required"] | dict[str, str]
"""``"auto" | "none" | "required"`` or ``{"type": "tool", "tool_name": NAME}``."""


@dataclass
class ModelSettings:
    temperature: float | None = None
    max_output_tokens: int | None = None
    top_p: float | None = None
    seed: int | None = None
    stop_sequences: list[str] = field(default_factory=list)
    presence_penalty: float | None = None
    frequency_penalty: float | None = None
    max_retries: int | None = None
    """Retries the provider SDK makes on its own (429, 5xx, connection errors); SDK default 2."""
