"""How a signal looks to the model: an XML element, or plain text for a plain user message.

A stored signal message keeps its raw contents as its text and the signal (type, tag,
attributes) in ``metadata.signal``; the XML is rendered only when a prompt is built
(``signal_prompt_text``). Pure functions, matched to the renderings of the Mastra framework
Treadle re-creates::

    render_signal("user", "user", "hi", {"name": "Devin", "from": "slack"})
    # '<user name="Devin" from="slack">hi</user>'

Text escapes ``& < >`` (quotes stay); attribute values escape ``& < "``. Null attributes are
dropped, attribute names must match ``^[A-Za-z_][A-Za-z0-9_.-]*$``, and empty contents give a
self-closing tag.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from .errors import InvalidArgumentError
from .messages import Message, TextPart

ATTRIBUTE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")

_TEXT = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})
_ATTR = str.maketrans({"&": "&amp;", "<": "&lt;", '"': "&quot;"})


def escape_text(text: str) -> str:
    return text.translate(_TEXT)


def escape_attribute(value: str) -> str:
    return value.translate(_ATTR)


def check_attributes(attributes: Mapping[str, Any], where: str = "attributes") -> None:
    """Raise ``InvalidArgumentError`` for a name the XML rendering cannot carry."""
    for name in attributes:
        if not ATTRIBUTE_NAME.match(name):
            raise InvalidArgumentError(
                f"{where}: attribute name {name!r} is not valid; names match "
                "^[A-Za-z_][A-Za-z0-9_.-]*$"
            )


def attribute_value(value: Any) -> str:
    """Strings as they are, whole numbers without ``.0``, booleans in lower case, others as JSON."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return str(int(value))
    if isinstance(value, (int, float, str)):
        return str(value)
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def render_tag(tag: str, contents: str, attributes: Mapping[str, Any] | None = None) -> str:
    """``<tag k="v">contents</tag>``; ``<tag k="v" />`` when ``contents`` is empty."""
    attrs = {k: v for k, v in (attributes or {}).items() if v is not None}
    check_attributes(attrs)
    head = tag + "".join(f' {k}="{escape_attribute(attribute_value(v))}"' for k, v in attrs.items())
    if not contents:
        return f"<{head} />"
    return f"<{head}>{escape_text(contents)}</{tag}>"


def render_signal(
    type: str, tag: str, contents: str, attributes: Mapping[str, Any] | None = None
) -> str:
    """What the model sees for a signal: plain text for a user signal without attributes."""
    present = {k: v for k, v in (attributes or {}).items() if v is not None}
    if type == "user" and not present:
        return contents
    return render_tag(tag, contents, present)


def render_summary(counts: Mapping[str, int], priority: str) -> str:
    """``<notification-summary pending="N" priority="p">src: n, ...</notification-summary>``."""
    pending = sum(counts.values())
    text = ", ".join(f"{source}: {n}" for source, n in counts.items())
    return render_tag("notification-summary", text, {"pending": pending, "priority": priority})


def signal_prompt_text(message: Message) -> str | None:
    """The text the model sees for a stored ``signal`` message: its raw contents rendered with
    the tag and attributes of ``metadata.signal``. None when the message has no signal metadata,
    or holds its rendering already (the stored form of earlier versions, whose
    ``metadata.signal`` carries a ``contents`` copy): its text is then used as it is."""
    info = (message.content.metadata or {}).get("signal")
    if not isinstance(info, Mapping) or "contents" in info:
        return None
    contents = "".join(p.text for p in message.content.parts if isinstance(p, TextPart))
    attributes = info.get("attributes")
    return render_signal(str(info.get("type") or "user"), str(info.get("tagName") or message.type or "user"),
                         contents, attributes if isinstance(attributes, Mapping) else None)


__all__ = [
    "ATTRIBUTE_NAME", "attribute_value", "check_attributes", "escape_attribute", "escape_text",
    "render_signal", "render_summary", "render_tag", "signal_prompt_text",
]
