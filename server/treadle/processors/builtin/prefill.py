"""``PrefillErrorHandler``: recovers from a provider refusing a prompt that ends with an
assistant turn (Anthropic's "final assistant content" / "assistant message prefill" 400)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ...core.errors import APICallError
from ...core.messages import Message, MessageContent, TextPart, new_id
from ...core.args import ProcessAPIErrorArgs
from ._options import require

_PREFILL = re.compile(
    r"final assistant content|assistant message prefill|assistant response prefill|"
    r"must end with a user message",
    re.I,
)


def is_prefill_rejection(error: Exception) -> bool:
    """A 400 whose message says the prompt may not end with (or prefill) an assistant turn."""
    return (
        isinstance(error, APICallError)
        and error.status_code == 400
        and _PREFILL.search(error.message) is not None
    )


@dataclass(frozen=True)
class PrefillErrorHandlerOptions:
    message: str = "continue"
    """What the added user turn says (inside a ``<system-reminder>`` tag)."""

    def __post_init__(self) -> None:
        require(bool(self.message.strip()), "option 'message' must not be empty")


class PrefillErrorHandler:
    """On a prefill rejection, add a hidden system-reminder signal (a user turn for the model) so
    the prompt ends with the user, and retry once (a second rejection is left to the next error processor)."""

    name = "Prefill error handler"
    description = "Makes a prompt the provider refused for ending on an assistant turn end on a user turn."

    def __init__(self, *, message: str = "continue", id: str = "prefill-error-handler") -> None:
        self.id = id
        self.options = PrefillErrorHandlerOptions(message)

    def process_api_error(self, args: ProcessAPIErrorArgs) -> dict[str, Any] | None:
        if args.retry_count > 0 or not is_prefill_rejection(args.error):
            return None
        # As the framework does: a hidden system-reminder signal, which reaches the model as a
        # user turn and is kept with the thread as a signal, not as something the user said.
        reminder = Message(
            id=new_id(), role="signal", type="system-reminder",
            content=MessageContent(
                parts=[TextPart(f"<system-reminder>{self.options.message}</system-reminder>")],
                metadata={"signal": {"type": "reactive", "tagName": "system-reminder"},
                          "treadle": {"hidden": True, "addedBy": self.id}},
            ),
        )
        args.message_list.add(reminder, "input")
        return {"retry": True}
