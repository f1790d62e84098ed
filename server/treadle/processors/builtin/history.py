"""``ProviderHistoryCompat``: repairs a history the provider refused as malformed (a tool call
with no result, a reasoning block whose signature it rejects), then retries once."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from ...core.errors import APICallError
from ...core.messages import ReasoningPart, ToolInvocationPart
from ...core.args import ProcessAPIErrorArgs

_ORPHAN_CALL = re.compile(
    r"tool_use.{0,40}without.{0,20}tool_result|corresponding .?tool_result|"
    r"tool_call_id.{0,80}(?:did not have|not found|must be followed)|"
    r"tool_calls.{0,40}must be followed by tool messages",
    re.I | re.S,
)
_SIGNATURE = re.compile(r"signature.{0,40}thinking|thinking.{0,40}signature|invalid .?signature", re.I | re.S)


@dataclass(frozen=True)
class ProviderHistoryCompatOptions:
    pass


class ProviderHistoryCompat:
    """Drops tool calls that never got a result, and signed reasoning, when the provider says
    the history is malformed because of them; retries once."""

    name = "Provider history compatibility"
    description = "Repairs a message history the provider refused as malformed."

    def __init__(self, *, id: str = "provider-history-compat") -> None:
        self.id = id

    def process_api_error(self, args: ProcessAPIErrorArgs) -> dict[str, Any] | None:
        error = args.error
        if args.retry_count > 0 or not isinstance(error, APICallError) or error.status_code != 400:
            return None
        orphans = _ORPHAN_CALL.search(error.message) is not None
        signatures = _SIGNATURE.search(error.message) is not None
        if not (orphans or signatures):
            return None
        changed = False
        for message in args.message_list.get_all():
            if message.role != "assistant":
                continue
            kept = []
            for part in message.content.parts:
                if orphans and isinstance(part, ToolInvocationPart) and part.state not in ("result", "output-error"):
                    changed = True
                    continue
                if signatures and isinstance(part, ReasoningPart) and (part.signature or part.redacted_data):
                    changed = True
                    continue
                kept.append(part)
            if len(kept) != len(message.content.parts):
                message.content = replace(message.content, parts=kept)
        return {"retry": True} if changed else None
