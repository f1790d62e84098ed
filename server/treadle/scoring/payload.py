"""A finished run as a score row keeps it (messages in the stored-message format) and back."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..agents import ScorerRef
from ..core.messages import Message, SystemMessage
from ..memory.codec import content_from_json, content_to_json
from .builtins import ScoringRun


def message_to_dict(m: Message) -> dict[str, Any]:
    return {"id": m.id, "role": m.role, "createdAt": m.created_at.isoformat(), "threadId": m.thread_id,
            "resourceId": m.resource_id, "type": m.type, "content": content_to_json(m.content)}


def message_from_dict(d: dict[str, Any]) -> Message:
    return Message(id=d["id"], role=d["role"], content=content_from_json(d["content"]),
                   created_at=datetime.fromisoformat(d["createdAt"]), thread_id=d.get("threadId", ""),
                   resource_id=d.get("resourceId", ""), type=d.get("type", ""))


def run_to_payload(run: ScoringRun) -> dict[str, Any]:
    return {
        "inputMessages": [message_to_dict(m) for m in run.input_messages],
        "rememberedMessages": [message_to_dict(m) for m in run.remembered_messages],
        "systemMessages": [{"content": s.content, "providerOptions": s.provider_options} for s in run.system_messages],
        "output": [message_to_dict(m) for m in run.output],
        "requestContext": run.request_context,
        "structuredOutput": run.structured_output,
    }


def run_from_payload(payload: dict[str, Any], **ids: Any) -> ScoringRun:
    return ScoringRun(
        input_messages=[message_from_dict(m) for m in payload.get("inputMessages") or []],
        remembered_messages=[message_from_dict(m) for m in payload.get("rememberedMessages") or []],
        system_messages=[SystemMessage(s["content"], s.get("providerOptions")) for s in payload.get("systemMessages") or []],
        output=[message_from_dict(m) for m in payload.get("output") or []],
        request_context=dict(payload.get("requestContext") or {}),
        structured_output=payload.get("structuredOutput"),
        **ids,
    )


def scorer_to_dict(ref: ScorerRef) -> dict[str, Any]:
    """What a queued row keeps of its scorer (built-ins run from this alone)."""
    out: dict[str, Any] = {"id": ref.scorer_id}
    if ref.builtin:
        out["builtin"] = ref.builtin
    if ref.options:
        out["options"] = ref.options
    if ref.timeout is not None:
        out["timeout"] = ref.timeout
    if ref.failure_policy != "fail_closed":
        out["failurePolicy"] = ref.failure_policy
    return out
