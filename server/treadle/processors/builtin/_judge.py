"""A second model that judges text: the shared half of ``Moderation`` and ``PromptInjection``.

The judge's call goes through the same provider router as the agent's, in a ``chat {model}``
span of its own under the hook's span; its chunks never reach the user's stream and its tokens
are not added to the run's usage.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode, Tracer

from ...core.messages import Message, PromptMessage, TextPart
from ...providers.base import ModelConfig, ModelRequest, ModelSettings
from ...tracing.spans import ATTR, chat_span
from ._options import require

log = logging.getLogger(__name__)

ErrorStrategy = Literal["warn", "strict"]


@dataclass(frozen=True)
class JudgeOptions:
    model: str = ""
    """The judging model, ``provider/model`` (required)."""
    base_url: str = ""
    """An OpenAI- or Anthropic-compatible server for the judge; empty for the provider's own."""
    categories: tuple[str, ...] = ()
    strategy: Literal["block", "warn"] = "block"
    """``block`` aborts the run with a tripwire; ``warn`` sends a ``data-*`` chunk and goes on."""
    error_strategy: ErrorStrategy = "warn"
    """When the judge cannot answer: ``warn`` (fail open: log and go on) or ``strict`` (fail
    closed: the run ends with an error naming the processor)."""
    apply_to: tuple[str, ...] = ("input",)
    instructions: str = ""
    """Extra instructions for the judge."""

    def __post_init__(self) -> None:
        require(bool(self.model), "option 'model' is required (e.g. 'openai/gpt-4o-mini')")
        require("/" in self.model.strip("/"), f"option 'model' {self.model!r} must be 'provider/model'")


@dataclass
class Verdict:
    flagged: bool
    categories: list[str] = field(default_factory=list)
    reason: str = ""


class JudgeError(Exception):
    """The judge model failed or answered something that is not a verdict."""


_JSON = re.compile(r"\{.*\}", re.S)

VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "flagged": {"type": "boolean"},
        "categories": {"type": "array", "items": {"type": "string"}},
        "reason": {"type": "string"},
    },
    "required": ["flagged", "categories", "reason"],
    "additionalProperties": False,
}
"""What the judge is asked to answer with (as native structured output where the provider has it)."""


def parse_verdict(text: str) -> Verdict:
    found = _JSON.search(text)
    if found is None:
        raise JudgeError(f"the judge did not answer with JSON: {text[:200]!r}")
    try:
        data = json.loads(found.group())
    except ValueError as e:
        raise JudgeError(f"the judge's JSON is malformed: {e}") from None
    if not isinstance(data, dict) or not isinstance(data.get("flagged"), bool):
        raise JudgeError("the judge's answer has no boolean 'flagged'")
    categories = data.get("categories") or []
    return Verdict(data["flagged"], [str(c) for c in categories] if isinstance(categories, list) else [],
                   str(data.get("reason") or ""))


class Judge:
    """Calls the judging model; ``models`` is the app's provider router."""

    def __init__(self, options: JudgeOptions, models: Any, tracer: Tracer | None) -> None:
        self.options = options
        self.models = models
        self.tracer_given = tracer is not None
        self.tracer = tracer or trace.get_tracer("treadle")

    async def judge(self, system: str, text: str) -> Verdict:
        if self.models is None:
            raise JudgeError("no model router: this processor must run inside a Treadle server")
        model = self.models.resolve(ModelConfig(id=self.options.model, base_url=self.options.base_url))
        request = ModelRequest(
            prompt=[PromptMessage("system", [TextPart(system)]), PromptMessage("user", [TextPart(text)])],
            settings=ModelSettings(temperature=0),
            structured_output={"schema": VERDICT_SCHEMA, "name": "verdict"},
        )
        span = chat_span(self.tracer, provider=model.provider, model=model.model_id,
                         temperature=0, max_tokens=None)
        span.set_attribute("treadle.judge", "true")
        out: list[str] = []
        try:
            with trace.use_span(span, end_on_exit=False):
                async for chunk in model.stream(request):
                    if chunk.type == "text-delta":
                        out.append(chunk.payload.text)
                    elif chunk.type == "finish":
                        usage = chunk.payload.usage
                        span.set_attribute(ATTR.INPUT_TOKENS, usage.input_tokens)
                        span.set_attribute(ATTR.OUTPUT_TOKENS, usage.output_tokens)
        except Exception as e:
            span.set_status(Status(StatusCode.ERROR, str(e)))
            raise JudgeError(f"the judge model failed: {e}") from e
        finally:
            span.end()
        return parse_verdict("".join(out))


def last_user_text(messages: list[Message]) -> str:
    for message in reversed(messages):
        if message.role == "user" and message.text:
            return message.text
    return ""


class JudgedProcessor:
    """Hooks shared by the model-backed detectors; subclasses give ``system_prompt`` and
    ``label`` (what a flag is called in a tripwire reason)."""

    id: str
    label = "Flagged"
    default_categories: tuple[str, ...] = ()

    def __init__(self, options: JudgeOptions, models: Any = None, tracer: Tracer | None = None) -> None:
        if not options.categories:
            options = dataclasses.replace(options, categories=self.default_categories)
        self.options = options
        self.judge = Judge(options, models, tracer)

    def system_prompt(self) -> str:
        raise NotImplementedError

    def bind_context(self, context: Any) -> None:
        """Called by the server before a run: the provider router and tracer, unless given."""
        self.judge.models = self.judge.models or context.models
        if self.judge.tracer_given is False and context.tracer is not None:
            self.judge.tracer = context.tracer

    async def check(self, text: str, where: str, args: Any) -> None:
        if not text.strip():
            return
        try:
            verdict = await self.judge.judge(self.system_prompt(), text)
        except JudgeError as e:
            if self.options.error_strategy == "strict":
                raise
            log.warning("%s: %s; letting the %s through (errorStrategy warn)", self.id, e, where)
            return
        if not verdict.flagged:
            return
        reason = f"{self.label} in the {where}" + (
            f": {', '.join(verdict.categories)}" if verdict.categories else "")
        detail = {"categories": verdict.categories, "reason": verdict.reason, "where": where}
        if self.options.strategy == "block":
            args.abort(reason, metadata=detail)
        log.warning("%s: %s", self.id, reason)
        if args.writer is not None:
            await args.writer.custom({"type": f"data-{self.id}", "data": detail, "transient": True})

    async def process_input(self, args: Any) -> None:
        if "input" in self.options.apply_to:
            await self.check(last_user_text(args.messages), "input", args)

    async def process_output_step(self, args: Any) -> None:
        if "output" in self.options.apply_to:
            await self.check(args.text, "output", args)

    async def process_tool_result(self, args: Any) -> None:
        if "tool-results" in self.options.apply_to:
            text = args.result if isinstance(args.result, str) else json.dumps(args.result, default=str)
            await self.check(text, f"tool result of {args.tool_name}", args)


def judge_instructions(task: str, categories: tuple[str, ...], extra: str) -> str:
    return (
        f"{task} Categories: {', '.join(categories)}. Answer with one JSON object and nothing "
        'else: {"flagged": true|false, "categories": [the matching categories], "reason": '
        '"one short sentence"}.' + (f" {extra}" if extra else "")
    )
