"""Builds the step's assistant message from the chunks the client was sent."""

from __future__ import annotations

from ..core.chunks import Chunk, ToolCall, ToolCallPayload
from ..core.messages import Message, ReasoningPart, SourcePart, TextPart, ToolInvocationPart


class StepCollector:
    """Deltas are gathered per part and joined when the part ends (or at ``seal``), so a long
    answer costs linear time, not quadratic."""

    def __init__(self, message: Message) -> None:
        self.message = message
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.tool_calls: list[ToolCallPayload] = []
        self._text_part: TextPart | None = None
        self._text_pieces: list[str] = []
        self._reasoning_part: ReasoningPart | None = None
        self._reasoning_pieces: list[str] = []

    def add(self, chunk: Chunk) -> None:
        parts = self.message.content.parts
        t, p = chunk.type, chunk.payload
        if t == "text-delta":
            if self._text_part is None:
                self._text_part = TextPart("")
                parts.append(self._text_part)
            self._text_pieces.append(p.text)
            self.text.append(p.text)
        elif t == "text-end":
            self._end_text()
        elif t == "reasoning-delta":
            if self._reasoning_part is None:
                self._reasoning_part = ReasoningPart("")
                parts.append(self._reasoning_part)
            self._reasoning_pieces.append(p.text)
            self.reasoning.append(p.text)
        elif t == "reasoning-end":
            if self._reasoning_part is not None:
                self._reasoning_part.signature = p.signature or ""
                self._reasoning_part.provider_metadata = p.provider_metadata
            self._end_reasoning()
        elif t == "tool-call":
            self.tool_calls.append(p)
            parts.append(ToolInvocationPart(p.tool_call_id, p.tool_name, p.args, state="call"))
        elif t == "source":
            parts.append(SourcePart(p.source_type, p.id, p.url, p.title, p.mime_type, p.filename))

    def seal(self) -> None:
        """Write out parts whose end chunk never came (a stream that stopped early)."""
        self._end_text()
        self._end_reasoning()

    def _end_text(self) -> None:
        if self._text_part is not None:
            self._text_part.text = "".join(self._text_pieces)
        self._text_part, self._text_pieces = None, []

    def _end_reasoning(self) -> None:
        if self._reasoning_part is not None:
            self._reasoning_part.text = "".join(self._reasoning_pieces)
        self._reasoning_part, self._reasoning_pieces = None, []

    @property
    def step_text(self) -> str:
        return "".join(self.text)

    @property
    def step_reasoning(self) -> str:
        return "".join(self.reasoning)

    def calls(self) -> list[ToolCall]:
        return [ToolCall(c.tool_call_id, c.tool_name, c.args) for c in self.tool_calls]
