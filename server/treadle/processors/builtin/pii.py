"""``PII``: deterministic detection of e-mail addresses, phone numbers, card numbers, IBANs and
IP addresses in the input, in tool results and in the output stream; redact, block or warn."""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import Any, Literal

from ...core.chunks import Chunk, ReasoningDelta, TextDelta
from ...core.messages import Message, TextPart, ToolInvocationPart
from ...core.args import (
    ProcessInputArgs,
    ProcessOutputStreamArgs,
    ProcessToolResultArgs,
    ProcessorStreamWriter,
)
from ._options import require
from .pii_detect import PII_TYPES, Match, find, hold_point, redact

log = logging.getLogger(__name__)

Strategy = Literal["redact", "block", "warn"]
Where = Literal["input", "tool-results", "output"]

_DELTAS: dict[str, type[TextDelta] | type[ReasoningDelta]] = {
    "text-delta": TextDelta, "reasoning-delta": ReasoningDelta,
}
_ENDS = {"text-end": "text-delta", "reasoning-end": "reasoning-delta"}
"""The end chunk of each delta kind: what is still held of that part is released before it."""


@dataclass(frozen=True)
class PIIOptions:
    strategy: Strategy = "redact"
    """``redact`` replaces each match, ``block`` aborts the run, ``warn`` lets it through and
    sends a ``data-pii`` chunk saying what was found."""
    types: tuple[str, ...] = PII_TYPES
    """What to look for: any of ``email``, ``phone``, ``card``, ``iban``, ``ip``."""
    apply_to: tuple[Where, ...] = ("input", "tool-results", "output")
    """Where to look."""
    replacement: str = "[{type}]"
    """What a redacted match becomes; ``{type}`` is its upper-case type (``[EMAIL]``)."""

    def __post_init__(self) -> None:
        for t in self.types:
            require(t in PII_TYPES, f"option 'types' has unknown type {t!r} (known: {', '.join(PII_TYPES)})")
        for w in self.apply_to:
            require(w in ("input", "tool-results", "output"),
                    f"option 'applyTo' has unknown place {w!r} (known: input, tool-results, output)")
        try:
            self.replacement.format(type="EMAIL")
        except (KeyError, IndexError, ValueError):
            raise ValueError("option 'replacement' may only use the placeholder {type}") from None


class PII:
    """The PII guard. On the output stream it holds back only text that may still be growing
    into a match (a trailing word or digit group) and releases it, redacted, once the next
    delta or the end of the text part settles it."""

    name = "PII"
    description = "Detects and redacts, blocks or reports personal data."

    def __init__(
        self, *, strategy: Strategy = "redact", types: tuple[str, ...] | list[str] = PII_TYPES,
        apply_to: tuple[Where, ...] | list[Where] = ("input", "tool-results", "output"),
        replacement: str = "[{type}]", id: str = "pii",
    ) -> None:
        self.id = id
        self.options = PIIOptions(strategy, tuple(types), tuple(apply_to), replacement)

    # --- the three places -----------------------------------------------------------------------

    async def process_input(self, args: ProcessInputArgs) -> list[Message] | None:
        if "input" not in self.options.apply_to:
            return None
        found: list[Match] = []
        for message in args.messages:
            if message.role != "user":
                continue
            parts = []
            for part in message.content.parts:
                if isinstance(part, TextPart):
                    text, matches = self._scan(part.text)
                    found += matches
                    part = replace(part, text=text)
                parts.append(part)
            message.content = replace(message.content, parts=parts)
        await self._act(found, "input", args)
        return None

    async def process_tool_result(self, args: ProcessToolResultArgs) -> None:
        if "tool-results" not in self.options.apply_to:
            return
        found: list[Match] = []

        def clean(value: Any) -> Any:
            if isinstance(value, str):
                text, matches = self._scan(value)
                found.extend(matches)
                return text
            if isinstance(value, list):
                return [clean(v) for v in value]
            if isinstance(value, dict):
                return {k: clean(v) for k, v in value.items()}
            return value

        cleaned = clean(args.result)
        await self._act(found, f"tool result of {args.tool_name}", args)
        if found and self.options.strategy == "redact":
            args.message_list.update_tool_invocation(ToolInvocationPart(
                tool_call_id=args.tool_call_id, tool_name=args.tool_name, args=args.args,
                state="result", result=cleaned,
            ))

    async def process_output_stream(self, args: ProcessOutputStreamArgs) -> Chunk | None:
        if "output" not in self.options.apply_to:
            return args.part
        part = args.part
        writer = args.writer
        holding = writer is not None and writer.can_write
        held: dict[tuple[str, str], str] = args.state.setdefault("held", {})
        if part.type in _DELTAS:
            delta = part.payload
            if not holding:  # no way to release held text later: look at each delta alone
                return await self._release(part, delta.text, args)
            key = (part.type, delta.id)
            buffer = held.get(key, "") + delta.text
            matches = find(buffer, self.options.types)
            cut = hold_point(buffer, matches)
            held[key] = buffer[cut:]
            if cut == 0:
                return None  # all of it may still be growing into a match: hold it
            settled = [m for m in matches if m.end <= cut]
            return await self._release(part, buffer[:cut], args, settled)
        if held and (part.type in _ENDS or part.type in ("step-finish", "finish")):
            kind = _ENDS.get(part.type)
            part_id = getattr(part.payload, "id", None)
            for key in [k for k in held if kind is None or k == (kind, part_id)]:
                rest = held.pop(key)
                if rest and isinstance(writer, ProcessorStreamWriter):
                    payload = _DELTAS[key[0]](key[1], rest)
                    await writer.write(await self._release(Chunk.of(payload), rest, args))
        return part

    # --- helpers --------------------------------------------------------------------------------

    def _scan(self, text: str) -> tuple[str, list[Match]]:
        matches = find(text, self.options.types)
        if matches and self.options.strategy == "redact":
            return redact(text, matches, self.options.replacement), matches
        return text, matches

    async def _release(
        self, part: Chunk, text: str, args: ProcessOutputStreamArgs,
        matches: list[Match] | None = None,
    ) -> Chunk:
        """``part`` carrying ``text`` cleaned; ``matches`` are its matches when known."""
        if matches is None:
            cleaned, matches = self._scan(text)
        elif matches and self.options.strategy == "redact":
            cleaned = redact(text, matches, self.options.replacement)
        else:
            cleaned = text
        await self._act(matches, "output", args)
        if cleaned == getattr(part.payload, "text", None):
            return part
        payload = _DELTAS[part.type](part.payload.id, cleaned, part.payload.provider_metadata)
        return Chunk(part.type, payload, run_id=part.run_id, from_=part.from_, metadata=part.metadata)

    async def _act(self, found: list[Match], where: str, args: Any) -> None:
        if not found:
            return
        kinds = sorted({m.type for m in found})
        if self.options.strategy == "block":
            args.abort(f"PII detected in the {where}: {', '.join(kinds)}",
                       metadata={"types": kinds, "where": where})
        if self.options.strategy == "warn":
            log.warning("PII detected in the %s: %s", where, ", ".join(kinds))
            if args.writer is not None:
                await args.writer.custom({"type": "data-pii", "transient": True,
                                          "data": {"types": kinds, "where": where,
                                                   "count": len(found)}})
