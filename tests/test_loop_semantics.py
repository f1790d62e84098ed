"""SPEC §3 / §3a decisions, one test each, against the scripted OpenAI wire server."""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import Harness, harness_factory, of_type, text_of, types  # noqa: F401
from tests.support import Turn
from treadle.core.chunks import Chunk, TextDelta
from treadle.core.message_list import MessageList
from treadle.core.messages import Message, SystemMessage, TextPart
from treadle.processors import ProcessInputStepResult, ProcessLLMRequestResult
from treadle.core.messages import PromptMessage
from treadle.loop.step import feedback_message
from treadle.tools import Tool

HOOK_ABORTS = [
    ("process_input", "input_processors"),
    ("process_input_step", "input_processors"),
    ("process_llm_request", "input_processors"),
    ("process_llm_response", "input_processors"),
    ("process_output_stream", "output_processors"),
    ("process_output_step", "output_processors"),
    ("process_tool_result", "output_processors"),
    ("process_output_result", "output_processors"),
    ("process_api_error", "error_processors"),
]


def played(hook: str) -> list[Turn]:
    """The turns a run with an abort in ``hook`` plays: a tool call (or a failed call for
    ``process_api_error``), then the answer only when the abort comes after it."""
    if hook in ("process_input", "process_input_step", "process_llm_request", "process_output_stream"):
        return []  # the model is never called (the stream hook aborts on the step-start chunk)
    if hook == "process_api_error":
        return [Turn.fail(400, "bad request")]
    if hook == "process_output_result":
        return [Turn.call("t", {}), Turn.say("done")]
    return [Turn.call("t", {})]


class AbortIn:
    def __init__(self, hook: str) -> None:
        self.id = f"abort-in-{hook}"
        self.violations: list[Any] = []

        def abort(args: Any) -> Any:
            args.abort(f"stopped in {hook}", metadata={"hook": hook})

        setattr(self, hook, abort)

    def on_violation(self, violation: Any) -> None:
        self.violations.append(violation)


@pytest.mark.parametrize(("hook", "lane"), HOOK_ABORTS)
async def test_tripwire_shape_from_every_hook(harness_factory, hook: str, lane: str) -> None:
    h: Harness = harness_factory(played(hook))
    processor = AbortIn(hook)
    agent = h.agent(tools=[Tool("t", lambda a, c: "ok")], **{lane: [processor]})
    chunks = await h.stream(agent, "go")
    tripwires = of_type(chunks, "tripwire")
    assert len(tripwires) == 1
    tw = tripwires[0]
    assert tw.run_id and tw.run_id == chunks[0].run_id
    assert tw.from_ == "AGENT"
    assert (tw.payload.reason, tw.payload.retry, tw.payload.metadata, tw.payload.processor_id) == (
        f"stopped in {hook}", False, {"hook": hook}, processor.id
    )
    assert chunks[-1].type == "finish" and chunks[-1].payload.reason == "other"
    assert types(chunks).index("tripwire") == len(chunks) - 2
    # onViolation is called on every abort
    assert [v.message for v in processor.violations] == [f"stopped in {hook}"]

    h2: Harness = harness_factory(played(hook))
    agent = h2.agent(tools=[Tool("t", lambda a, c: "ok")], **{lane: [processor]})
    result = await h2.generate(agent, "go")
    assert result.finish_reason == "other"
    assert result.tripwire is not None and result.tripwire.processor_id == processor.id
    assert result.text == ""


async def test_process_input_step_retry_is_honoured(harness_factory) -> None:
    class RejectFirstStep:
        id = "reject-first"

        def process_input_step(self, args):
            if args.retry_count == 0:
                args.abort("try a different approach", retry=True)

    h: Harness = harness_factory([Turn.say("second try")])
    agent = h.agent(input_processors=[RejectFirstStep()], max_processor_retries=1)
    result = await h.generate(agent, "go")
    assert result.text == "second try"
    body = h.bodies()[0]
    systems = [m["content"] for m in body["messages"] if m["role"] == "system"]
    assert systems == ["You are a test agent.", feedback_message("try a different approach")]


async def test_chaining_step_overrides(harness_factory) -> None:
    seen: list[Any] = []

    class First:
        id = "first"

        def process_input_step(self, args):
            return {"model": "openai/gpt-5.4-mini"}

    class Second:
        id = "second"

        def process_input_step(self, args):
            seen.append(args.model)
            return ProcessInputStepResult(tool_choice="none")

    h: Harness = harness_factory([Turn.say("hi")])
    agent = h.agent(input_processors=[First(), Second()], tools=[Tool("t", lambda a, c: 1)])
    await h.generate(agent, "go")
    assert seen == ["openai/gpt-5.4-mini"]
    body = h.bodies()[0]
    assert body["model"] == "gpt-5.4-mini" and "tools" not in body


async def test_prepare_step_runs_last(harness_factory) -> None:
    order: list[str] = []

    class P:
        id = "p"

        def process_input_step(self, args):
            order.append("processor")
            return {"model": "openai/from-processor"}

    def prepare_step(args):
        order.append(f"prepare:{args.model}")
        return {"model": "openai/from-prepare-step"}

    h: Harness = harness_factory([Turn.say("hi")])
    await h.generate(h.agent(input_processors=[P()]), "go", prepare_step=prepare_step)
    assert order == ["processor", "prepare:openai/from-processor"]
    assert h.bodies()[0]["model"] == "from-prepare-step"


async def test_processor_model_lasts_only_its_step(harness_factory) -> None:
    class OnlyFirst:
        id = "only-first"

        def process_input_step(self, args):
            return {"model": "openai/special"} if args.step_number == 0 else None

    h: Harness = harness_factory([Turn.call("t", {}), Turn.say("done")])
    await h.generate(h.agent(input_processors=[OnlyFirst()], tools=[Tool("t", lambda a, c: 1)]), "go")
    assert [b["model"] for b in h.bodies()] == ["special", "test-model"]


async def test_llm_request_prompt_replaced_for_one_call_only(harness_factory) -> None:
    class Rewrite:
        id = "rewrite"

        def process_llm_request(self, args):
            prompt = [m for m in args.prompt if m.role != "system"]
            return ProcessLLMRequestResult(prompt=[PromptMessage("system", [TextPart("REWRITTEN")]), *prompt])

    h: Harness = harness_factory([Turn.say("ok")])
    result = await h.generate(h.agent(input_processors=[Rewrite()]), "go")
    assert h.bodies()[0]["messages"][0]["content"] == "REWRITTEN"
    assert all("REWRITTEN" not in str(m) for m in result.messages)


async def test_cached_response_replayed_and_state_pairs_request_with_response(harness_factory) -> None:
    cache: dict[str, list[Chunk]] = {}
    responses: list[tuple[bool, int]] = []

    class Cache:
        id = "cache"

        def process_llm_request(self, args):
            key = str([str(m.content) for m in args.prompt if m.role == "user"])
            args.state["key"] = key
            if key in cache:
                return ProcessLLMRequestResult(response=cache[key])
            return None

        def process_llm_response(self, args):
            responses.append((args.from_cache, len(args.steps)))
            if not args.from_cache:
                cache[args.state["key"]] = args.chunks

    h: Harness = harness_factory([Turn.say(["cached ", "answer"])])
    agent = h.agent(input_processors=[Cache()])
    first = await h.stream(agent, "question")
    second = await h.stream(agent, "question")
    assert len(h.bodies()) == 1  # the second call never reached the provider
    assert text_of(first) == text_of(second) == "cached answer"
    assert responses == [(False, 1), (True, 1)]  # steps include the step just completed


async def test_output_stream_error_is_logged_and_chunk_passes(harness_factory) -> None:
    class Broken:
        id = "broken"

        def process_output_stream(self, args):
            if args.part.type == "text-delta":
                raise ValueError("bug in processor")
            return args.part

    class Upper:
        id = "upper"

        def process_output_stream(self, args):
            if args.part.type == "text-delta":
                return Chunk.of(TextDelta(args.part.payload.id, args.part.payload.text.upper()))
            return args.part

    h: Harness = harness_factory([Turn.say(["a", "b"])])
    chunks = await h.stream(h.agent(output_processors=[Broken(), Upper()]), "go")
    assert text_of(chunks) == "AB"
    assert chunks[-1].payload.reason == "stop"


async def test_dropping_chunks_with_none(harness_factory) -> None:
    class DropVowels:
        id = "drop"

        def process_output_stream(self, args):
            if args.part.type == "text-delta" and args.part.payload.text in "aeiou":
                return None
            return args.part

    h: Harness = harness_factory([Turn.say(["h", "e", "l", "o"])])
    result = await h.generate(h.agent(output_processors=[DropVowels()]), "go")
    assert result.text == "hl"


async def test_step_hook_error_becomes_error_chunk(harness_factory) -> None:
    class Broken:
        id = "broken-step"

        def process_output_step(self, args):
            raise RuntimeError("kaput")

    h: Harness = harness_factory([Turn.say("x")])
    chunks = await h.stream(h.agent(output_processors=[Broken()]), "go")
    error = of_type(chunks, "error")[0].payload
    assert "broken-step" in error.message and "kaput" in error.message
    assert chunks[-1].payload.reason == "error"


async def test_process_input_error_fails_the_run_before_the_model(harness_factory) -> None:
    class Broken:
        id = "broken-input"

        def process_input(self, args):
            raise RuntimeError("cannot parse")

    h: Harness = harness_factory([])
    result = await h.generate(h.agent(input_processors=[Broken()]), "go")
    assert result.error is not None and "broken-input" in result.error.message
    assert result.finish_reason == "error"
    assert h.bodies() == []


async def test_returning_another_message_list_is_an_error(harness_factory) -> None:
    class Other:
        id = "other-list"

        def process_input(self, args):
            return MessageList()

    h: Harness = harness_factory([])
    result = await h.generate(h.agent(input_processors=[Other()]), "go")
    assert result.error is not None and "different MessageList" in result.error.message


async def test_empty_array_means_no_change(harness_factory) -> None:
    class Empty:
        id = "empty"

        def process_output_step(self, args):
            return []

    h: Harness = harness_factory([Turn.call("t", {}), Turn.say("second")])
    result = await h.generate(h.agent(output_processors=[Empty()], tools=[Tool("t", lambda a, c: 1)]), "go")
    assert len(h.bodies()[1]["messages"]) == 4  # system, user, assistant call, tool result
    assert result.text == "second"


async def test_array_result_applied_as_diff_by_id(harness_factory) -> None:
    class Diff:
        id = "diff"

        def process_input(self, args):
            keep = [m for m in args.messages if "drop me" not in m.text]
            return [*keep, Message.user("added by processor")]

    h: Harness = harness_factory([Turn.say("ok")])
    await h.generate(h.agent(input_processors=[Diff()]),
                     [Message.user("drop me"), Message.user("keep me")])
    users = [m["content"] for m in h.bodies()[0]["messages"] if m["role"] == "user"]
    assert users == ["keep me", "added by processor"]


async def test_system_messages_result_and_reset_per_step(harness_factory) -> None:
    class AddSystem:
        id = "add-system"

        def process_input_step(self, args):
            if args.step_number == 0:
                return {"system_messages": [*args.system_messages, SystemMessage("step zero only")]}
            return None

    h: Harness = harness_factory([Turn.call("t", {}), Turn.say("done")])
    await h.generate(h.agent(input_processors=[AddSystem()], tools=[Tool("t", lambda a, c: 1)]), "go")
    first, second = h.bodies()
    assert "step zero only" in str(first["messages"][:2])
    assert "step zero only" not in str(second["messages"])


async def test_max_steps_defaults_to_five(harness_factory) -> None:
    h: Harness = harness_factory([Turn.call("t", {"i": i}) for i in range(5)])  # a sixth is never asked for
    result = await h.generate(h.agent(tools=[Tool("t", lambda a, c: "again")]), "loop forever")
    assert len(h.bodies()) == 5
    assert len(result.steps) == 5
    assert result.finish_reason == "tool-calls"


async def test_api_error_retry_budget_defaults_to_three(harness_factory) -> None:
    class AlwaysRetry:
        id = "always-retry"

        def process_api_error(self, args):
            return {"retry": True}

    h: Harness = harness_factory([Turn.fail(400, "nope")] * 4)  # a fifth is never asked for
    result = await h.generate(h.agent(error_processors=[AlwaysRetry()]), "go", max_steps=10)
    assert len(h.bodies()) == 4  # the call and 3 retries
    assert result.finish_reason == "error"
    assert result.error is not None and result.error.details["statusCode"] == 400


async def test_max_processor_retries_overrides_api_budget(harness_factory) -> None:
    class AlwaysRetry:
        id = "always-retry"

        def process_api_error(self, args):
            return {"retry": True}

    h: Harness = harness_factory([Turn.fail(400, "nope")] * 2)
    await h.generate(h.agent(error_processors=[AlwaysRetry()]), "go", max_processor_retries=1)
    assert len(h.bodies()) == 2


async def test_api_error_reaches_processor_with_status_message_and_body(harness_factory) -> None:
    seen: list[Any] = []

    class Inspect:
        id = "inspect"

        def process_api_error(self, args):
            seen.append((args.error.status_code, args.error.message, args.error.body))

    h: Harness = harness_factory([Turn.fail(429, "slow down")])
    agent = h.agent(error_processors=[Inspect()])
    agent.fallback_models = []
    from treadle.providers.base import ModelSettings

    await h.generate(agent, "go", model_settings=ModelSettings(max_retries=0))
    status, message, body = seen[0]
    assert status == 429 and "slow down" in message and body["error"]["message"] == "slow down"


async def test_per_call_processors_replace_the_agents(harness_factory) -> None:
    calls: list[str] = []

    def make(pid: str):
        class P:
            id = pid

            def process_input(self, args):
                calls.append(pid)

        return P()

    h: Harness = harness_factory([Turn.say("a"), Turn.say("b")])
    agent = h.agent(input_processors=[make("agent-level")])
    await h.generate(agent, "go")
    await h.generate(agent, "go", input_processors=[make("per-call")])
    assert calls == ["agent-level", "per-call"]


async def test_usage_per_step_and_total(harness_factory) -> None:
    h: Harness = harness_factory([Turn.call("t", {}), Turn.say("done")])
    chunks = await h.stream(h.agent(tools=[Tool("t", lambda a, c: 1)]), "go")
    steps = [c.payload.usage for c in of_type(chunks, "step-finish")]
    total = chunks[-1].payload.total_usage
    assert len(steps) == 2 and all(u.total_tokens > 0 for u in steps)
    assert total.input_tokens == sum(u.input_tokens for u in steps)
    assert total.output_tokens == sum(u.output_tokens for u in steps)


async def test_state_is_per_processor_and_per_call(harness_factory) -> None:
    seen: list[dict[str, Any]] = []

    class Counter:
        def __init__(self, pid: str) -> None:
            self.id = pid

        def process_input(self, args):
            args.state["n"] = args.state.get("n", 0) + 1

        def process_output_result(self, args):
            seen.append(dict(args.state))

    h: Harness = harness_factory([Turn.say("a"), Turn.say("b")])
    agent = h.agent(input_processors=[Counter("a")], output_processors=[Counter("a"), Counter("b")])
    await h.generate(agent, "go")
    await h.generate(agent, "go")
    # "a" shares its state across lanes within a call; "b" never sees it; nothing leaks between calls
    assert seen == [{"n": 1}, {}, {"n": 1}, {}]


async def test_fallback_model_answers_when_the_primary_fails(harness_factory) -> None:
    from treadle.providers.base import ModelConfig, ModelSettings

    primary: Harness = harness_factory([Turn.fail(500, "primary down")])
    backup: Harness = harness_factory([Turn.say("from the backup")], "anthropic")
    agent = primary.agent(fallback_models=[
        ModelConfig("anthropic/backup-model", base_url=backup.server.base_url)
    ])
    # No SDK retries: the primary fails at once and the fallback takes the call.
    result = await primary.generate(agent, "hi", model_settings=ModelSettings(max_retries=0))
    assert result.text == "from the backup"
    assert len(primary.bodies()) == 1
    assert len(backup.bodies()) == 1 and backup.bodies()[0]["model"] == "backup-model"


async def test_request_context_is_validated_against_the_agents_schema(harness_factory) -> None:
    from treadle.core.errors import InvalidArgumentError

    h: Harness = harness_factory([Turn.say("ok")])
    agent = h.agent(request_context_schema={
        "type": "object", "properties": {"tier": {"enum": ["free", "pro"]}}, "required": ["tier"],
    })
    with pytest.raises(InvalidArgumentError, match="request_context is invalid at tier"):
        await h.generate(agent, "hi", request_context={"tier": "gold"})
    assert h.bodies() == []  # nothing ran
    seen: list[Any] = []

    class Reader:
        id = "reader"

        def process_input(self, args):
            seen.append(args.request_context)

    agent.input_processors = [Reader()]
    result = await h.generate(agent, "hi", request_context={"tier": "pro"})
    assert result.text == "ok" and seen == [{"tier": "pro"}]


async def test_structured_output_reaches_the_provider(harness_factory) -> None:
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
    h: Harness = harness_factory([Turn.say('{"answer": "42"}')])
    result = await h.generate(h.agent(), "q", structured_output={"schema": schema, "name": "reply"})
    fmt = h.bodies()[0]["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["schema"] == schema
    assert result.text == '{"answer": "42"}'


async def test_text_streamed_before_a_mid_stream_error_is_kept_with_the_error(harness_factory) -> None:
    from tests.support import HttpError
    from treadle.core.messages import ErrorPart

    h: Harness = harness_factory([Turn(text=["Hel", "lo "], stream_error=HttpError(500, "boom"))])
    # Without the default error stack, which would retry the broken stream.
    result = await h.generate(h.agent(error_processor_defaults=False), "hi")
    assert result.finish_reason == "error"
    [message] = result.messages
    texts = [p.text for p in message.content.parts if isinstance(p, TextPart)]
    errors = [p for p in message.content.parts if isinstance(p, ErrorPart)]
    assert texts == ["Hello "] and len(errors) == 1 and "boom" in errors[0].message
