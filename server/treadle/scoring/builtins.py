"""The scorers that ship with the server, and what every scorer sees (``ScoringRun``) and
answers (``ScoreResult``).

Deterministic ones read the run's stored output: ``exact-match``, ``regex-match``,
``json-schema``, ``tool-called``, ``tool-not-called``, ``answer-length`` and ``pii``. ``llm-judge``
asks a model of its own, through the server's provider router, with instructions of its own;
its call is a ``chat`` span under the scoring span, and never touches the run's stream, usage or
thread.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import jsonschema
from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode, Tracer

from ..core.messages import Message, PromptMessage, SystemMessage, TextPart, ToolInvocationPart
from ..processors.builtin import pii_detect
from ..processors.builtin._options import parse_options, require
from ..providers.base import ModelConfig, ModelRequest, ModelSettings
from ..tracing.spans import ATTR, chat_span


@dataclass
class ScoringRun:
    """One finished run, as a scorer sees it."""

    run_id: str
    agent_id: str
    input_messages: list[Message] = field(default_factory=list)
    remembered_messages: list[Message] = field(default_factory=list)
    system_messages: list[SystemMessage] = field(default_factory=list)
    output: list[Message] = field(default_factory=list)
    """The run's response messages, as stored."""
    thread_id: str = ""
    resource_id: str = ""
    request_context: dict[str, Any] = field(default_factory=dict)
    trace_id: str = ""
    span_id: str = ""
    structured_output: dict[str, Any] | None = None
    """The JSON schema the call asked the answer to match, if any."""
    agent_version: str = ""

    @property
    def answer(self) -> str:
        """The text of the run's assistant messages."""
        return "".join(m.text for m in self.output if m.role == "assistant")

    @property
    def question(self) -> str:
        """The text of the run's last user input message."""
        for message in reversed(self.input_messages):
            if message.role == "user" and message.text:
                return message.text
        return ""

    def tool_calls(self) -> list[str]:
        """Names of the tools the run called, in order."""
        return [p.tool_name for m in self.output for p in m.content.parts if isinstance(p, ToolInvocationPart)]


@dataclass
class ScoreResult:
    """A scorer's answer: a score in [0, 1], why, and anything else worth keeping."""

    score: float
    reason: str = ""
    details: dict[str, Any] = field(default_factory=dict)


class ScorerError(Exception):
    """The scorer could not score the run (retried, then recorded as failed)."""


# --- deterministic ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ExactOptions:
    expected: str = ""
    ignore_case: bool = False
    trim: bool = True


@dataclass(frozen=True)
class RegexOptions:
    pattern: str = ""
    ignore_case: bool = False

    def __post_init__(self) -> None:
        require(bool(self.pattern), "option 'pattern' is required")
        try:
            re.compile(self.pattern)
        except re.error as e:
            raise ValueError(f"option 'pattern' is not a valid regular expression: {e}") from None


@dataclass(frozen=True)
class SchemaOptions:
    schema: Any = None

    def __post_init__(self) -> None:
        require(self.schema is None or isinstance(self.schema, dict), "option 'schema' must be an object")
        if self.schema is not None:
            try:
                jsonschema.Draft202012Validator.check_schema(self.schema)
            except jsonschema.SchemaError as e:
                raise ValueError(f"option 'schema' is not a valid JSON schema: {e.message}") from None


@dataclass(frozen=True)
class ToolOptions:
    tool: str = ""

    def __post_init__(self) -> None:
        require(bool(self.tool), "option 'tool' is required (a tool name)")


@dataclass(frozen=True)
class LengthOptions:
    min: int = 0
    max: int | None = None

    def __post_init__(self) -> None:
        require(self.min >= 0, "option 'min' must be >= 0")
        require(self.max is None or self.max >= self.min, "option 'max' must be >= 'min'")


@dataclass(frozen=True)
class PiiOptions:
    types: tuple[str, ...] = pii_detect.PII_TYPES

    def __post_init__(self) -> None:
        unknown = [t for t in self.types if t not in pii_detect.PII_TYPES]
        require(not unknown, f"option 'types' has unknown type(s) {unknown} (known: {', '.join(pii_detect.PII_TYPES)})")


@dataclass(frozen=True)
class JudgeOptions:
    model: str = ""
    instructions: str = ""
    base_url: str = ""

    def __post_init__(self) -> None:
        require(bool(self.model), "option 'model' is required (e.g. 'openai/gpt-4o-mini')")
        require("/" in self.model.strip("/"), f"option 'model' {self.model!r} must be 'provider/model'")
        require(bool(self.instructions.strip()), "option 'instructions' is required (what the judge scores)")


def _exact(o: ExactOptions, run: ScoringRun) -> ScoreResult:
    answer, expected = run.answer, o.expected
    if o.trim:
        answer, expected = answer.strip(), expected.strip()
    if o.ignore_case:
        answer, expected = answer.casefold(), expected.casefold()
    same = answer == expected
    return ScoreResult(1.0 if same else 0.0, "the answer is the expected text" if same
                       else "the answer differs from the expected text")


def _regex(o: RegexOptions, run: ScoringRun) -> ScoreResult:
    found = re.search(o.pattern, run.answer, re.I if o.ignore_case else 0)
    if found is None:
        return ScoreResult(0.0, f"the answer does not match /{o.pattern}/")
    return ScoreResult(1.0, f"the answer matches /{o.pattern}/", {"match": found.group()})


def _schema(o: SchemaOptions, run: ScoringRun) -> ScoreResult:
    schema = o.schema if o.schema is not None else run.structured_output
    if schema is None:
        return ScoreResult(0.0, "no schema: the call asked for no structured output and the scorer names none")
    try:
        value = json.loads(run.answer)
    except ValueError as e:
        return ScoreResult(0.0, f"the answer is not JSON: {e}")
    try:
        jsonschema.validate(value, schema)
    except jsonschema.ValidationError as e:
        path = "/".join(str(p) for p in e.absolute_path) or "(root)"
        return ScoreResult(0.0, f"the answer does not match the schema at {path}: {e.message}")
    return ScoreResult(1.0, "the answer matches the schema")


def _tool_called(o: ToolOptions, run: ScoringRun) -> ScoreResult:
    calls = run.tool_calls()
    n = calls.count(o.tool)
    return ScoreResult(1.0 if n else 0.0, f"{o.tool!r} was called {n} time(s)" if n else f"{o.tool!r} was not called",
                       {"toolCalls": calls})


def _tool_not_called(o: ToolOptions, run: ScoringRun) -> ScoreResult:
    called = _tool_called(o, run)
    return ScoreResult(1.0 - called.score, called.reason, called.details)


def _length(o: LengthOptions, run: ScoringRun) -> ScoreResult:
    n = len(run.answer)
    within = n >= o.min and (o.max is None or n <= o.max)
    bounds = f"[{o.min}, {o.max if o.max is not None else '∞'}]"
    return ScoreResult(1.0 if within else 0.0,
                       f"the answer has {n} characters, {'within' if within else 'outside'} {bounds}", {"length": n})


def _pii(o: PiiOptions, run: ScoringRun) -> ScoreResult:
    found = pii_detect.find(run.answer, o.types)
    kinds = sorted({m.type for m in found})
    if not found:
        return ScoreResult(0.0, "no PII in the answer")
    return ScoreResult(1.0, f"the answer contains PII: {', '.join(kinds)}", {"types": kinds, "count": len(found)})


Deterministic = Callable[[Any, ScoringRun], ScoreResult]

DETERMINISTIC: dict[str, tuple[type, Deterministic]] = {
    "exact-match": (ExactOptions, _exact),
    "regex-match": (RegexOptions, _regex),
    "json-schema": (SchemaOptions, _schema),
    "tool-called": (ToolOptions, _tool_called),
    "tool-not-called": (ToolOptions, _tool_not_called),
    "answer-length": (LengthOptions, _length),
    "pii": (PiiOptions, _pii),
}

NAMES: tuple[str, ...] = (*DETERMINISTIC, "llm-judge")


def parse(builtin: str, options: Mapping[str, Any] | None) -> Any:
    """The built-in's options, checked; ``ValueError`` naming the built-in or the option."""
    if builtin == "llm-judge":
        return parse_options(JudgeOptions, options)
    if builtin not in DETERMINISTIC:
        raise ValueError(f"unknown built-in scorer {builtin!r} (one of {', '.join(NAMES)})")
    return parse_options(DETERMINISTIC[builtin][0], options)


# --- the judge ------------------------------------------------------------------------------------

_JSON = re.compile(r"\{.*\}", re.S)

JUDGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"score": {"type": "number"}, "reason": {"type": "string"}},
    "required": ["score", "reason"],
    "additionalProperties": False,
}

JUDGE_FORMAT = ('Answer with one JSON object and nothing else: {"score": a number from 0 to 1, '
                '"reason": "one short sentence"}.')


async def judge(o: JudgeOptions, run: ScoringRun, models: Any, tracer: Tracer) -> ScoreResult:
    """Ask the judge model; its call is traced as a ``chat`` span of its own and its tokens are
    reported in the details (never added to the run's usage)."""
    model = models.resolve(ModelConfig(id=o.model, base_url=o.base_url))
    transcript = json.dumps({"input": run.question, "answer": run.answer}, ensure_ascii=False)
    request = ModelRequest(
        prompt=[PromptMessage("system", [TextPart(f"{o.instructions.strip()}\n\n{JUDGE_FORMAT}")]),
                PromptMessage("user", [TextPart(transcript)])],
        settings=ModelSettings(temperature=0),
        structured_output={"schema": JUDGE_SCHEMA, "name": "score"},
    )
    span = chat_span(tracer, provider=model.provider, model=model.model_id, temperature=0, max_tokens=None)
    span.set_attribute("treadle.judge", "true")
    out: list[str] = []
    usage: dict[str, int] = {}
    try:
        with trace.use_span(span, end_on_exit=False):
            async for chunk in model.stream(request):
                if chunk.type == "text-delta":
                    out.append(chunk.payload.text)
                elif chunk.type == "finish":
                    u = chunk.payload.usage
                    usage = {"inputTokens": u.input_tokens, "outputTokens": u.output_tokens}
                    span.set_attribute(ATTR.INPUT_TOKENS, u.input_tokens)
                    span.set_attribute(ATTR.OUTPUT_TOKENS, u.output_tokens)
    except Exception as e:
        span.set_status(Status(StatusCode.ERROR, str(e)))
        raise ScorerError(f"the judge model failed: {e}") from e
    finally:
        span.end()
    text = "".join(out)
    found = _JSON.search(text)
    try:
        data = json.loads(found.group()) if found else None
    except ValueError:
        data = None
    score = data.get("score") if isinstance(data, dict) else None
    if not isinstance(score, (int, float)) or isinstance(score, bool) or not 0 <= score <= 1:
        raise ScorerError(f"the judge did not answer with a score in [0, 1]: {text[:200]!r}")
    return ScoreResult(float(score), str(data.get("reason") or "") if isinstance(data, dict) else "",
                       {"model": o.model, "usage": usage})


async def run_builtin(builtin: str, options: Mapping[str, Any] | None, run: ScoringRun,
                      models: Any, tracer: Tracer) -> ScoreResult:
    parsed = parse(builtin, options)
    if builtin == "llm-judge":
        return await judge(parsed, run, models, tracer)
    return DETERMINISTIC[builtin][1](parsed, run)
