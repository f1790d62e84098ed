"""The seed's processor examples, ported to Python as a user would write them.

Each class mirrors one TypeScript example of the Processor page; the tests run them in-process
(and later as remote processors) against scripted providers.
"""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

from treadle.core.chunks import Chunk
from treadle.core.errors import APICallError
from treadle.core.messages import Message, MessageContent, ReasoningPart, TextPart, ToolInvocationPart
from treadle.processors import (
    ProcessAPIErrorArgs,
    ProcessAPIErrorResult,
    ProcessInputArgs,
    ProcessInputStepArgs,
    ProcessInputStepResult,
    ProcessOutputStepArgs,
    ProcessOutputStreamArgs,
    ProcessToolResultArgs,
)


class LowercaseProcessor:
    id = "lowercase"

    async def process_input(self, args: ProcessInputArgs) -> list[Message]:
        return [
            dataclasses.replace(
                msg,
                content=MessageContent(
                    parts=[
                        TextPart(p.text.lower()) if isinstance(p, TextPart) else p
                        for p in msg.content.parts
                    ],
                    metadata=msg.content.metadata,
                ),
            )
            for msg in args.messages
        ]


class DynamicModelWithCutoff:
    """The seed's intent made reachable: the verbatim example returns from its tool-call branch
    before its ``stepNumber > 5`` branch, so tools are never disabled while the model keeps
    calling them. This variant applies both on the same step."""

    id = "dynamic-model"

    async def process_input_step(self, args: ProcessInputStepArgs) -> ProcessInputStepResult:
        # Use a fast model for the first response
        if args.step_number == 0:
            return ProcessInputStepResult(model="openai/gpt-5-mini")
        # Switch to a powerful model after tool calls
        if args.steps and args.steps[-1].tool_calls:
            if args.step_number > 5:
                return ProcessInputStepResult(model="openai/gpt-5.6-sol", tool_choice="none")
            return ProcessInputStepResult(model="openai/gpt-5.6-sol")
        # Disable tools after 5 steps to force completion
        if args.step_number > 5:
            return ProcessInputStepResult(tool_choice="none")
        return ProcessInputStepResult()


class DynamicModelProcessor:
    """The seed's example verbatim."""

    id = "dynamic-model"

    async def process_input_step(self, args: ProcessInputStepArgs) -> dict[str, Any]:
        if args.step_number == 0:
            return {"model": "openai/gpt-5-mini"}
        if args.steps and args.steps[-1].tool_calls:
            return {"model": "openai/gpt-5.6-sol"}
        if args.step_number > 5:
            return {"tool_choice": "none"}
        return {}


class ReasoningTransformer:
    """Rewrites reasoning parts for a provider that cannot take them back as reasoning.

    The seed flips ``part.type`` to ``'thinking'``; Treadle's parts are typed, so the port turns
    each reasoning part into a ``<thinking>`` text part, in place, and returns the message list.
    """

    id = "reasoning-transformer"

    async def process_input_step(self, args: ProcessInputStepArgs) -> Any:
        for msg in args.messages:
            if msg.role == "assistant":
                parts = msg.content.parts
                for i, part in enumerate(parts):
                    if isinstance(part, ReasoningPart):
                        parts[i] = TextPart(f"<thinking>{part.text}</thinking>")
        return args.message_list


class ContentFilter:
    id = "content-filter"

    def __init__(self, blocked_words: list[str]) -> None:
        self.blocked_words = blocked_words

    async def process_input(self, args: ProcessInputArgs) -> list[Message]:
        for msg in args.messages:
            text = " ".join(p.text for p in msg.content.parts if isinstance(p, TextPart))
            if any(word in text for word in self.blocked_words):
                args.abort("Blocked content detected in input")
        return args.messages

    async def process_output_stream(self, args: ProcessOutputStreamArgs) -> Chunk | None:
        part = args.part
        if part.type == "text-delta":
            if any(word in part.payload.text for word in self.blocked_words):
                args.abort("Blocked content detected in output")
        return part


class AlertingContentFilter(ContentFilter):
    """The content filter with the framework's ``onViolation`` side effect: it records each
    violation (an alert or a log line, in a real one) and tells which word it blocked."""

    id = "alerting-filter"

    def __init__(self, blocked_words: list[str]) -> None:
        super().__init__(blocked_words)
        self.violations: list[dict[str, Any]] = []

    async def process_input(self, args: ProcessInputArgs) -> list[Message]:
        for msg in args.messages:
            text = " ".join(p.text for p in msg.content.parts if isinstance(p, TextPart))
            for word in self.blocked_words:
                if word in text:
                    args.abort("Blocked content detected in input", metadata={"word": word})
        return args.messages

    def on_violation(self, violation: Any) -> None:
        self.violations.append({"processorId": violation.processor_id, "message": violation.message,
                                "detail": violation.detail, "hook": violation.hook})
        raise RuntimeError("the alert service is down")  # swallowed: the run is not affected


class WordCounter:
    id = "word-counter"

    def __init__(self) -> None:
        self.totals: list[int] = []

    async def process_output_stream(self, args: ProcessOutputStreamArgs) -> Chunk:
        part, state = args.part, args.state
        state.setdefault("word_count", 0)
        if part.type == "text-delta":
            state["word_count"] += len(part.payload.text.split())
        if part.type == "finish":
            self.totals.append(state["word_count"])  # the seed logs it; a test reads it here
        return part


class QualityGuardrail:
    id = "quality-guardrail"

    def __init__(self, evaluate: Any) -> None:
        self.evaluate = evaluate

    async def process_output_step(self, args: ProcessOutputStepArgs) -> list[Message]:
        score = self.evaluate(args.text)
        if score < 0.7:
            if args.retry_count < 3:
                # Request a retry with feedback for the model
                args.abort(
                    "Response quality too low. Please provide more detail.",
                    retry=True,
                    metadata={"quality_score": score},
                )
            else:
                # Max retries reached: block the response
                args.abort("Response quality too low after multiple attempts.")
        return []


class RedactToolResult:
    id = "redact-tool-result"

    async def process_tool_result(self, args: ProcessToolResultArgs) -> None:
        if args.tool_name != "lookup-customer":
            return
        redacted = {**args.result, "ssn": "[REDACTED]", "email": "[REDACTED]"}
        args.message_list.update_tool_invocation(
            ToolInvocationPart(
                state="result",
                tool_call_id=args.tool_call_id,
                tool_name=args.tool_name,
                args=args.args,
                result=redacted,
            )
        )


class ScanToolResult:
    id = "scan-tool-result"

    async def process_tool_result(self, args: ProcessToolResultArgs) -> None:
        text = args.result if isinstance(args.result, str) else json.dumps(args.result)
        if contains_prompt_injection(text):
            args.abort("blocked by scan-tool-result: suspected prompt injection")


def contains_prompt_injection(text: str) -> bool:
    return re.search(r"ignore (all )?(previous|prior) instructions", text, re.I) is not None


class ErrorRecoveryProcessor:
    id = "error-recovery"

    def process_api_error(self, args: ProcessAPIErrorArgs) -> ProcessAPIErrorResult | None:
        # Only retry once
        if args.retry_count > 0:
            return None
        # Check for a specific API error
        error = args.error
        if isinstance(error, APICallError) and "context length exceeded" in error.message:
            # Trim older messages to fit within the context
            messages = args.message_list.get_all()
            if len(messages) > 4:
                args.message_list.remove_by_ids([messages[1].id, messages[2].id])
                return ProcessAPIErrorResult(retry=True)
        return None


class ModerationCollector:
    id = "moderation-collector"
    process_data_parts = True

    async def process_output_stream(self, args: ProcessOutputStreamArgs) -> Chunk:
        part = args.part
        if part.type == "data-moderation":
            args.state.setdefault("warnings", []).append(part.data)
        return part


class ModerationEmitter:
    """Emits the seed's ``data-moderation`` chunk with ``writer.custom`` after each step."""

    id = "moderation-emitter"

    async def process_output_step(self, args: ProcessOutputStepArgs) -> None:
        assert args.writer is not None
        await args.writer.custom(
            {"type": "data-moderation", "data": {"level": "warn", "reason": "Possibly unsafe"}}
        )
        await args.writer.custom(
            {"type": "data-progress", "data": {"status": "Processing"}, "transient": True}
        )


class AddToolProcessor:
    """``processInputStep`` returning ``tools``: adds a tool to the first step, keeping the
    agent's (the framework's ``{...tools, newTool}``). Remotely the tool goes by its name, which
    the server finds among the tools it can attach to an agent."""

    id = "add-tool"

    def __init__(self, tool: Any) -> None:
        self.tool = tool

    async def process_input_step(self, args: ProcessInputStepArgs) -> ProcessInputStepResult:
        if args.step_number == 0:
            return ProcessInputStepResult(tools={**args.tools, self.tool.name: self.tool})
        return ProcessInputStepResult()


class AddUnknownToolProcessor:
    """Names a tool nobody has: the hook fails, naming it."""

    id = "add-unknown-tool"

    async def process_input_step(self, args: ProcessInputStepArgs) -> dict[str, Any]:
        return {"tools": [*args.tools, "no-such-tool"]}
