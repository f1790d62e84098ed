"""The signal: what it is, how its type is normalised, and the message and chunk it becomes.

A signal always reaches the model as a user message. It is stored as the framework stores it:
role ``signal``, its tag as ``type``, its raw contents as the text, and its type, tag and
attributes in ``metadata.signal`` (no second copy of the contents); the XML the model sees is
rendered when the prompt is built (``core.signal_xml``). Subscribers see it as a transient
``data-user-message`` (user signals) or ``data-signal`` chunk.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, TypeAlias

from ..core.chunks import Chunk
from ..core.errors import InvalidArgumentError
from ..core.messages import FilePart, Message, MessageContent, Part, TextPart, new_id, utcnow
from .render import check_attributes, render_signal, signal_prompt_text

SignalType: TypeAlias = Literal["user", "state", "reactive", "notification"]
TYPES: tuple[SignalType, ...] = ("user", "state", "reactive", "notification")
_LEGACY: dict[str, tuple[SignalType, str]] = {
    "user-message": ("user", ""),
    "system-reminder": ("reactive", "system-reminder"),
}


def normalise_type(type: str, tag_name: str = "") -> tuple[SignalType, str]:
    """(type, tag) for a requested type: legacy names mapped, unknown ones rejected."""
    if type in _LEGACY:
        legacy, legacy_tag = _LEGACY[type]
        return legacy, tag_name or legacy_tag or legacy
    if type not in TYPES:
        raise InvalidArgumentError(
            f"signal.type {type!r} is unknown: use user, state, reactive or notification "
            "(set tag_name for a custom XML tag)"
        )
    kind: SignalType = type  # type: ignore[assignment]
    if tag_name:
        check_attributes({tag_name: None}, "signal.tag_name")
        return kind, tag_name
    return kind, "system-reminder" if kind == "reactive" else kind


@dataclass
class Signal:
    type: SignalType
    tag_name: str
    contents: str = ""
    files: list[FilePart] = field(default_factory=list)
    attributes: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] | None = None
    provider_options: dict[str, Any] | None = None
    id: str = field(default_factory=lambda: new_id("sig"))
    created_at: datetime = field(default_factory=utcnow)
    accepted_at: datetime | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    """Facts an earlier version stored beside the signal's fields (kept when read back)."""

    def with_attributes(self, more: dict[str, Any] | None) -> Signal:
        """The chosen ``if_active`` / ``if_idle`` branch's attributes, merged in after ours."""
        if more:
            check_attributes(more, "attributes")
            self.attributes = {**self.attributes, **more}
        return self

    @property
    def text(self) -> str:
        """What the model sees."""
        return render_signal(self.type, self.tag_name, self.contents, self.attributes)

    @property
    def chunk_type(self) -> str:
        return "data-user-message" if self.type == "user" else "data-signal"

    def info(self, *, contents: bool = True) -> dict[str, Any]:
        """The signal as subscribers see it (the framework's field names); without ``contents``,
        as a stored message's ``metadata.signal`` holds it (the contents are its text)."""
        out: dict[str, Any] = {"id": self.id, "type": self.type, "tagName": self.tag_name}
        if contents:
            out["contents"] = self.contents
        out["createdAt"] = self.created_at.isoformat()
        if self.accepted_at is not None:
            out["acceptedAt"] = self.accepted_at.isoformat()
        for key, value in (("attributes", self.attributes), ("metadata", self.metadata),
                           ("providerOptions", self.provider_options)):
            if value:
                out[key] = value
        out.update(self.extra)
        return out

    def to_message(self, *, thread_id: str = "", resource_id: str = "") -> Message:
        """The stored form: the raw contents as text, the signal in ``metadata.signal``. Raises
        ``InvalidArgumentError`` when the attributes cannot be rendered (before anything is
        stored)."""
        message = Message(
            id=self.id, role="signal", type=self.tag_name, created_at=self.created_at,
            thread_id=thread_id, resource_id=resource_id,
            content=MessageContent(metadata={"signal": self.info(contents=False)}),
        )
        parts: list[Part] = [TextPart(self.contents, self.provider_options)] if self.contents else []
        parts.extend(self.files)
        message.content.parts = parts
        signal_prompt_text(message)  # bad attribute names raise here
        return message

    def to_chunk(self, run_id: str = "") -> Chunk:
        chunk = Chunk.custom(self.chunk_type, self.info(), transient=True, id=self.id)
        chunk.run_id = run_id
        chunk.from_ = "USER" if self.type == "user" else "SYSTEM"
        return chunk


def signal_from_message(message: Message) -> Signal:
    """The signal a stored ``signal`` message was made from (for re-delivery after a restart).
    Reads both stored forms: the raw contents as text, and that of earlier versions (the
    rendered XML as text, the contents in ``metadata.signal.contents``)."""
    info = dict((message.content.metadata or {}).get("signal") or {})
    known = {"id", "type", "tagName", "contents", "createdAt", "acceptedAt", "attributes",
             "metadata", "providerOptions"}
    text = "".join(p.text for p in message.content.parts if isinstance(p, TextPart))
    return Signal(
        type=info.get("type", "user"), tag_name=info.get("tagName", message.type or "user"),
        contents=info["contents"] if "contents" in info else text,
        files=[p for p in message.content.parts if isinstance(p, FilePart)],
        attributes=dict(info.get("attributes") or {}), metadata=info.get("metadata"),
        provider_options=info.get("providerOptions"), id=message.id, created_at=message.created_at,
        extra={k: v for k, v in info.items() if k not in known},
    )


__all__ = ["TYPES", "Signal", "SignalType", "normalise_type", "signal_from_message"]
