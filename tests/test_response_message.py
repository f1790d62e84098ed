"""One call's response is ONE assistant message, as the Mastra framework stores it: the parts of
every step (a step-start part between two steps, none before the first), tool invocations updated in place with their
results; and the prompt of the next call splits it back into the turns the providers expect.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import Harness, harness_factory, of_type  # noqa: F401
from tests.support import Turn
from treadle.core.messages import Message
from treadle.tools import Tool


def shape(message: Message) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for p in message.content.parts:
        if p.type == "text":
            out.append(("text", p.text))
        elif p.type == "tool-invocation":
            out.append(("tool", p.tool_name, p.state, p.result))
        else:
            out.append((p.type,))
    return out


WEATHER = Tool("weather", lambda a, c: {"sky": "clear"})
TWO_STEPS = [Turn.call("weather", {"city": "Oslo"}, text="Let me check."), Turn.say("Sunny in Oslo.")]


async def test_a_call_of_two_steps_answers_one_assistant_message(harness_factory) -> None:
    h: Harness = harness_factory(list(TWO_STEPS))
    agent = h.agent(tools=[WEATHER])
    chunks = await h.stream(agent, "weather?")
    h2: Harness = harness_factory(list(TWO_STEPS))
    result = await h2.generate(h2.agent(tools=[WEATHER]), "weather?")
    [message] = result.messages
    assert message.role == "assistant"
    assert shape(message) == [
        ("text", "Let me check."), ("tool", "weather", "result", {"sky": "clear"}),
        ("step-start",), ("text", "Sunny in Oslo."),
    ]
    # Every step of the streamed call names the same message.
    ids = {c.payload.message_id for c in of_type(chunks, "step-start") + of_type(chunks, "step-finish")}
    assert len(ids) == 1 and ids != {""}


def _openai_turns(body: dict[str, Any]) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for m in body["messages"]:
        if m["role"] == "assistant":
            calls = [c["function"]["name"] for c in m.get("tool_calls") or []]
            out.append(("assistant", m["content"], calls))
        elif m["role"] == "tool":
            out.append(("tool", m["content"]))
        else:
            out.append((m["role"], m["content"]))
    return out


def _anthropic_turns(body: dict[str, Any]) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for m in body["messages"]:
        blocks = []
        for b in m["content"]:
            if b["type"] == "text":
                blocks.append(b["text"])
            elif b["type"] == "tool_use":
                blocks.append(f"tool_use:{b['name']}")
            elif b["type"] == "tool_result":
                blocks.append(f"tool_result:{b['content']}")
        out.append((m["role"], blocks))
    return out


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_the_next_prompt_splits_the_message_into_its_turns(harness_factory, provider: str) -> None:
    h: Harness = harness_factory([*TWO_STEPS, Turn.say("You asked about Oslo.")], provider=provider)
    agent = h.agent(tools=[WEATHER])
    first = await h.generate(agent, "weather?")
    history = [Message.user("weather?"), *first.messages, Message.user("what did I ask?")]
    await h.generate(agent, history)
    last = h.bodies()[-1]
    if provider == "openai":
        assert _openai_turns(last) == [
            ("system", "You are a test agent."), ("user", "weather?"),
            ("assistant", "Let me check.", ["weather"]), ("tool", '{"sky": "clear"}'),
            ("assistant", "Sunny in Oslo.", []), ("user", "what did I ask?"),
        ]
    else:
        assert _anthropic_turns(last) == [
            ("user", ["weather?"]), ("assistant", ["Let me check.", "tool_use:weather"]),
            ("user", ['tool_result:{"sky": "clear"}']), ("assistant", ["Sunny in Oslo."]),
            ("user", ["what did I ask?"]),
        ]
    # Within the call, the second step's request already had those turns.
    assert h.bodies()[1]["messages"][-1]["role"] == ("tool" if provider == "openai" else "user")


class RejectBadStep:
    id = "reject-bad-step"

    def process_output_step(self, args: Any) -> None:
        if args.text == "bad":
            args.abort("not that", retry=True)


class StopAtBadDelta:
    id = "stop-bad-delta"

    def process_output_stream(self, args: Any) -> Any:
        if args.part.type == "text-delta" and args.part.payload.text == "bad":
            args.abort("not that", retry=True)
        return args.part


@pytest.mark.parametrize(("processor", "rejected"), [
    (RejectBadStep(), Turn.say("bad")),  # rejected at the step's end
    (StopAtBadDelta(), Turn.say(["so ", "bad", " it stops"])),  # rejected mid-stream
])
async def test_a_rejected_later_step_leaves_exactly_the_earlier_steps_in_the_message(
    harness_factory, processor: Any, rejected: Turn,
) -> None:
    h: Harness = harness_factory([Turn.call("weather", {"city": "Oslo"}), rejected, Turn.say("good")])
    agent = h.agent(tools=[WEATHER], output_processors=[processor], max_processor_retries=1)
    result = await h.generate(agent, "weather?")
    [message] = result.messages
    assert shape(message) == [
        ("tool", "weather", "result", {"sky": "clear"}), ("step-start",), ("text", "good"),
    ]
    assert [s.tripwire is not None for s in result.steps] == [False, True, False]


async def test_a_retried_api_call_leaves_no_trace_in_the_message(harness_factory) -> None:
    class Retry:
        id = "retry"

        def process_api_error(self, args: Any) -> Any:
            return {"retry": True}

    h: Harness = harness_factory([Turn.call("weather", {"city": "Oslo"}), Turn.fail(400, "boom"), Turn.say("done")])
    result = await h.generate(h.agent(tools=[WEATHER], error_processors=[Retry()], max_processor_retries=1), "go")
    [message] = result.messages
    assert shape(message) == [
        ("tool", "weather", "result", {"sky": "clear"}), ("step-start",), ("text", "done"),
    ]
