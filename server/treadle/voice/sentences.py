"""Text cut into sentences as it streams, so speech can start at the first one."""

from __future__ import annotations

import re

_END = re.compile(r"[.!?…]+[\"'”’)\]]*(?=\s)|\n\s*\n")
MAX_SENTENCE = 400
"""A run-on text is cut at a space after this many characters: speech must not wait for ever."""


class Sentences:
    """Feed text deltas; take each sentence as soon as it is complete."""

    def __init__(self) -> None:
        self._buffer = ""

    def feed(self, delta: str) -> list[str]:
        self._buffer += delta
        out: list[str] = []
        while True:
            match = _END.search(self._buffer)
            if match is None:
                if len(self._buffer) > MAX_SENTENCE and " " in self._buffer[MAX_SENTENCE // 2:]:
                    cut = self._buffer.rindex(" ")
                    out.append(self._buffer[:cut])
                    self._buffer = self._buffer[cut:]
                    continue
                break
            sentence, self._buffer = self._buffer[: match.end()], self._buffer[match.end():]
            out.append(sentence)
        return [s.strip() for s in out if s.strip()]

    def flush(self) -> list[str]:
        rest, self._buffer = self._buffer.strip(), ""
        return [rest] if rest else []


def split(text: str) -> list[str]:
    """Every sentence of a whole text."""
    s = Sentences()
    return s.feed(text) + s.flush()
