"""``TextGate``: hold a text part's deltas only while a guarded span is still open.

A streaming guardrail (PII redaction, a banned phrase) must see a whole span before it decides,
but a span may arrive split across deltas ("jo", "hn@exa", "mple.com"). The gate buffers the
part's text only from the point where a span that is not yet complete begins, calls the guard on
the complete text before that point, and releases it at once: text that cannot be part of a
match is never held, so the guard adds latency only where a match is possible. Whatever is still
held is released (guarded) before the part's ``text-end``, or before any other chunk of the run.

It answers ``process_output_stream`` with a list of chunks (protocol version 2): ``[]`` while
everything is held, the released deltas otherwise. Use it in a remote or in-process processor::

    class EmailRedactor:
        id = "email-redactor"
        gate = TextGate(lambda s: EMAIL.sub("[email]", s), boundary=EMAIL)

        async def process_output_stream(self, args):
            return await self.gate.process(args)

Boundaries: ``"word"`` holds a trailing partial word, ``"sentence"`` a trailing partial
sentence, a pattern (string or compiled ``regex``/``re``) holds from the earliest place where a
match could still be in progress (a partial match, or a complete one that reaches the end of
the text and might grow).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable
from typing import Any

from treadle.core.chunks import Chunk, TextDelta

Guard = Callable[[str], "str | Awaitable[str]"]
"""Called on each complete span; returns the text to release (e.g. redacted)."""

_SENTENCE_END = re.compile(r"[.!?…](?=\s)|\n")


class TextGate:
    def __init__(self, guard: Guard, *, boundary: str | re.Pattern[str] | Any = "word") -> None:
        self.guard = guard
        self._hold_from = _boundary(boundary)
        self._held: dict[tuple[str, str], str] = {}
        """(run id, text part id) -> the text held back."""

    def held(self, run_id: str) -> str:
        """The text held for ``run_id`` right now (for tests and logs)."""
        return "".join(t for (r, _), t in self._held.items() if r == run_id)

    async def process(self, args: Any) -> Chunk | list[Chunk]:
        """The body of a ``process_output_stream`` hook: what takes ``args.part``'s place."""
        part: Chunk = args.part
        run_id = args.run.run_id if getattr(args, "run", None) is not None else ""
        if part.type == "text-delta":
            return await self._delta(run_id, part)
        released = await self._flush(run_id, part.payload.id if part.type == "text-end" else None)
        return [*released, part] if released else part

    async def _delta(self, run_id: str, part: Chunk) -> Chunk | list[Chunk]:
        key = (run_id, part.payload.id)
        before = self._held.pop(key, "")
        text = before + part.payload.text
        cut = self._hold_from(text)
        if cut < len(text):
            self._held[key] = text[cut:]
        if cut == 0:
            return []
        out = await self._guarded(text[:cut])
        if not before and cut == len(text) and out == part.payload.text:
            return part  # nothing was held and nothing changed: pass the chunk itself
        return [_delta(part.payload.id, out)] if out else []

    async def _flush(self, run_id: str, text_id: str | None) -> list[Chunk]:
        """Release what is held for the run (only part ``text_id`` when given), guarded."""
        keys = [k for k in self._held if k[0] == run_id and (text_id is None or k[1] == text_id)]
        out: list[Chunk] = []
        for key in keys:
            text = await self._guarded(self._held.pop(key))
            if text:
                out.append(_delta(key[1], text))
        return out

    async def _guarded(self, text: str) -> str:
        result = self.guard(text)
        if inspect.isawaitable(result):
            result = await result
        return str(result)


def _delta(text_id: str, text: str) -> Chunk:
    return Chunk.of(TextDelta(id=text_id, text=text))


def _boundary(boundary: Any) -> Callable[[str], int]:
    """The function giving the index from which a text must be held."""
    if boundary == "word":
        return _hold_word
    if boundary == "sentence":
        return _hold_sentence
    if isinstance(boundary, (str, re.Pattern)) or (hasattr(boundary, "pattern") and hasattr(boundary, "search")):
        regex = _regex()
        if isinstance(boundary, str):
            return _hold_pattern(regex.compile(boundary))
        if isinstance(boundary, re.Pattern):
            return _hold_pattern(regex.compile(boundary.pattern, _flags(boundary.flags)))
        return _hold_pattern(boundary)
    raise ValueError(f"boundary must be 'word', 'sentence' or a pattern, got {boundary!r}")


def _regex() -> Any:
    """The ``regex`` module: a pattern boundary needs its partial matching, which ``re`` lacks.

    It is the ``text-gate`` extra of treadle-client (``pip install 'treadle-client[text-gate]'``);
    the server's install has it.
    """
    try:
        import regex
    except ImportError as e:  # pragma: no cover - depends on the install
        raise ImportError(
            "a TextGate pattern boundary needs the regex package: pip install 'treadle-client[text-gate]'"
        ) from e
    return regex


def _flags(flags: int) -> int:
    # ``re`` and ``regex`` share the values of the flags both have; drop re's UNICODE default.
    return flags & ~re.UNICODE


def _hold_word(text: str) -> int:
    if not text or text[-1].isspace():
        return len(text)
    for i in range(len(text) - 1, -1, -1):
        if text[i].isspace():
            return i + 1
    return 0


def _hold_sentence(text: str) -> int:
    last = 0
    for m in _SENTENCE_END.finditer(text):
        last = m.end()
    return last


def _hold_pattern(pattern: Any) -> Callable[[str], int]:
    def hold_from(text: str) -> int:
        pos, end = 0, len(text)
        while pos <= end:
            m = pattern.search(text, pos, partial=True)
            if m is None:
                return end
            if m.partial or m.end() == end:
                return min(m.start(), end) if m.end() > m.start() or m.partial else end
            pos = m.end() if m.end() > m.start() else m.end() + 1
        return end

    return hold_from


__all__ = ["Guard", "TextGate"]
