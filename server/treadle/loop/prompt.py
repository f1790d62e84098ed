"""The message list as a provider prompt (the Mastra framework's ``LanguageModelV2Prompt``)."""

from __future__ import annotations

from ..core.message_list import MessageList
from ..core.signal_xml import signal_prompt_text
from ..core.messages import (
    FilePart,
    Message,
    Prompt,
    PromptMessage,
    PromptPart,
    ReasoningPart,
    StepStartPart,
    TextPart,
    ToolCallPart,
    ToolInvocationPart,
    ToolResultPart,
)


def build_prompt(message_list: MessageList) -> Prompt:
    prompt: Prompt = [
        PromptMessage("system", [TextPart(m.content)], m.provider_options)
        for m in message_list.get_all_system_messages()
    ]
    for message in message_list.get_all():
        prompt.extend(_convert(message))
    return prompt


def _convert(message: Message) -> list[PromptMessage]:
    if message.role == "signal" and (rendered := signal_prompt_text(message)) is not None:
        # A signal is stored as its raw contents; the model sees it rendered (an XML element, or
        # plain text for a plain user message), then its files.
        texts = [p for p in message.content.parts if isinstance(p, TextPart)]
        meta = texts[0].provider_metadata if texts else None
        parts: list[PromptPart] = [TextPart(rendered, meta)] if rendered else []
        parts.extend(p for p in message.content.parts if isinstance(p, FilePart))
        return [PromptMessage("user", parts)] if parts else []
    if message.role in ("user", "signal"):
        parts = [p for p in message.content.parts if isinstance(p, (TextPart, FilePart))]
        return [PromptMessage("user", parts)] if parts else []
    if message.role == "system":
        return [PromptMessage("system", [TextPart(message.text)])]
    # One assistant message holds every step of a call: each step-start part begins a new turn
    # (the step's text and tool calls, then their results), as the providers expect them.
    out: list[PromptMessage] = []
    assistant: list[PromptPart] = []
    results: list[PromptPart] = []
    for part in message.content.parts:
        if isinstance(part, StepStartPart):
            out.extend(_turn(assistant, results))
            assistant, results = [], []
        elif isinstance(part, (TextPart, ReasoningPart, FilePart)):
            assistant.append(part)
        elif isinstance(part, ToolInvocationPart):
            # A call without a result (aborted, or still running) is left out: providers reject
            # a tool call that has no matching result.
            if part.state not in ("result", "output-error"):
                continue
            assistant.append(ToolCallPart(part.tool_call_id, part.tool_name, part.args))
            result = part.error_text if part.state == "output-error" else part.result
            results.append(
                ToolResultPart(part.tool_call_id, part.tool_name, result, part.state == "output-error")
            )
    out.extend(_turn(assistant, results))
    return out


def _turn(assistant: list[PromptPart], results: list[PromptPart]) -> list[PromptMessage]:
    out: list[PromptMessage] = []
    if assistant:
        out.append(PromptMessage("assistant", assistant))
    if results:
        out.append(PromptMessage("tool", results))
    return out
