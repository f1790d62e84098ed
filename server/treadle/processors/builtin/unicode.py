"""``UnicodeNormalizer``: normalises user text before the model sees it (NFKC by default), so
look-alike characters, stray control characters and odd spacing cannot slip past later guards."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, replace
from typing import Literal

from ...core.messages import Message, TextPart
from ...core.args import ProcessInputArgs

Form = Literal["NFC", "NFKC", "NFD", "NFKD"]

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u200b-\u200f\u2028-\u202e\u2060-\u2064\ufeff]")
_SPACES = re.compile(r"[ \t\u00a0\u3000]+")
_BLANK_LINES = re.compile(r"\n{3,}")


@dataclass(frozen=True)
class UnicodeNormalizerOptions:
    form: Form = "NFKC"
    strip_control_chars: bool = True
    """Remove control and zero-width characters (keeps newlines and tabs)."""
    collapse_whitespace: bool = True
    """Runs of spaces become one space; three or more newlines become two."""
    trim: bool = True


class UnicodeNormalizer:
    name = "Unicode normalizer"
    description = "Normalises the Unicode form and whitespace of user text."

    def __init__(
        self, *, form: Form = "NFKC", strip_control_chars: bool = True,
        collapse_whitespace: bool = True, trim: bool = True, id: str = "unicode-normalizer",
    ) -> None:
        self.id = id
        self.options = UnicodeNormalizerOptions(form, strip_control_chars, collapse_whitespace, trim)

    def normalize(self, text: str) -> str:
        o = self.options
        text = unicodedata.normalize(o.form, text)
        if o.strip_control_chars:
            text = _CONTROL.sub("", text)
        if o.collapse_whitespace:
            text = _BLANK_LINES.sub("\n\n", _SPACES.sub(" ", text))
        return text.strip() if o.trim else text

    def process_input(self, args: ProcessInputArgs) -> list[Message] | None:
        for message in args.messages:
            if message.role == "user":
                message.content = replace(message.content, parts=[
                    replace(p, text=self.normalize(p.text)) if isinstance(p, TextPart) else p
                    for p in message.content.parts
                ])
        return None
