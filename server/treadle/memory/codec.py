"""Messages <-> their stored JSON form, every part intact (the stored-message format).

The stored form is the framework's: ``{"format": 2, "parts": [...], "metadata": ...}`` with
parts tagged by ``type`` (``text``, ``reasoning``, ``file``, ``source``, ``step-start``,
``tool-invocation``, ``error``, ``data-*``). Bytes (inline files, redacted reasoning) are base64.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from ..core.messages import (
    DataPart,
    ErrorPart,
    FilePart,
    MessageContent,
    Part,
    ReasoningPart,
    SourcePart,
    StepStartPart,
    TextPart,
    ToolInvocationPart,
)


def content_to_json(content: MessageContent) -> str:
    out: dict[str, Any] = {"format": content.format or 2, "parts": [part_to_dict(p) for p in content.parts]}
    if content.metadata is not None:
        out["metadata"] = content.metadata
    return json.dumps(out, ensure_ascii=False, separators=(",", ":"))


def content_from_json(text: str) -> MessageContent:
    data = json.loads(text)
    return MessageContent(
        parts=[part_from_dict(p) for p in data.get("parts", [])],
        metadata=data.get("metadata"),
        format=data.get("format", 2),
    )


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def part_to_dict(part: Part) -> dict[str, Any]:
    out: dict[str, Any]
    match part:
        case TextPart():
            out = {"type": "text", "text": part.text}
        case ReasoningPart():
            out = {"type": "reasoning", "text": part.text}
            if part.signature:
                out["signature"] = part.signature
            if part.redacted_data:
                out["redactedData"] = _b64(part.redacted_data)
        case FilePart():
            out = {"type": "file", "mimeType": part.mime_type}
            if part.url:
                out["url"] = part.url
            else:
                out["data"] = _b64(part.data)
            if part.filename:
                out["filename"] = part.filename
        case SourcePart():
            out = {"type": "source", "sourceType": part.source_type, "id": part.id}
            for key, value in (("url", part.url), ("title", part.title),
                               ("mimeType", part.mime_type), ("filename", part.filename)):
                if value:
                    out[key] = value
        case StepStartPart():
            out = {"type": "step-start"}
            if part.model:
                out["model"] = part.model
        case ToolInvocationPart():
            inv: dict[str, Any] = {"toolCallId": part.tool_call_id, "toolName": part.tool_name,
                                   "args": part.args, "state": part.state}
            if part.state in ("result", "output-error") or part.result is not None:
                inv["result"] = part.result
            if part.is_error:
                inv["isError"] = True
            if part.error_text:
                inv["errorText"] = part.error_text
            if part.transcript is not None:
                inv["transcript"] = part.transcript
            out = {"type": "tool-invocation", "toolInvocation": inv}
        case ErrorPart():
            out = {"type": "error", "name": part.name, "message": part.message}
        case DataPart():
            out = {"type": part.name, "data": part.data}
            if part.id:
                out["id"] = part.id
        case _:  # pragma: no cover - the union is closed
            raise TypeError(f"unknown part {type(part).__name__}")
    if part.provider_metadata is not None:
        out["providerMetadata"] = part.provider_metadata
    return out


def part_from_dict(d: dict[str, Any]) -> Part:
    kind = d.get("type", "")
    meta = d.get("providerMetadata")
    if kind == "text":
        return TextPart(d.get("text", ""), provider_metadata=meta)
    if kind == "reasoning":
        return ReasoningPart(d.get("text", ""), signature=d.get("signature", ""),
                             redacted_data=base64.b64decode(d.get("redactedData", "")),
                             provider_metadata=meta)
    if kind == "file":
        return FilePart(d.get("mimeType", ""), data=base64.b64decode(d.get("data", "")),
                        url=d.get("url", ""), filename=d.get("filename", ""), provider_metadata=meta)
    if kind == "source":
        return SourcePart(d.get("sourceType", "url"), d.get("id", ""), url=d.get("url", ""),
                          title=d.get("title", ""), mime_type=d.get("mimeType", ""),
                          filename=d.get("filename", ""), provider_metadata=meta)
    if kind == "step-start":
        return StepStartPart(d.get("model", ""), provider_metadata=meta)
    if kind == "tool-invocation":
        inv = d.get("toolInvocation", {})
        return ToolInvocationPart(
            inv.get("toolCallId", ""), inv.get("toolName", ""), args=inv.get("args"),
            state=inv.get("state", "call"), result=inv.get("result"),
            is_error=bool(inv.get("isError", False)), error_text=inv.get("errorText", ""),
            provider_metadata=meta, transcript=inv.get("transcript"),
        )
    if kind == "error":
        return ErrorPart(d.get("name", ""), d.get("message", ""), provider_metadata=meta)
    if kind.startswith("data-"):
        return DataPart(kind, data=d.get("data"), id=d.get("id", ""), provider_metadata=meta)
    raise ValueError(f"stored part has an unknown type {kind!r}")
