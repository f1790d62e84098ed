"""Memory in the loop, on both engines: history in the provider prompt, and what is stored when.

The provider is the wire-level OpenAI fake; what the model saw is read from its recorded
requests, and what was stored from the store itself.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from tests.harness import Harness, harness_factory, of_type  # noqa: F401
from tests.seed_processors import ModerationEmitter, QualityGuardrail, RedactToolResult
from tests.support import Turn
from tests.support.databases import Database
from treadle.agents import MemoryOptions, MemorySettings
from treadle.core.errors import PermissionDeniedError
from treadle.memory import PageRequest, SqlStore, open_store
from treadle.memory.codec import content_to_json
from treadle.core.messages import DataPart, Message, TextPart, ToolInvocationPart
from treadle.tools import Tool

U1T1 = {"memory": MemoryOptions("u1", "t1")}


@pytest.fixture
async def store(database: Database) -> AsyncIterator[SqlStore]:
    s = await open_store(database.url)
    yield s
    await s.close()


@pytest.fixture
def memory_harness(harness_factory: Callable[..., Harness], store: SqlStore) -> Callable[..., Harness]:
    def make(script: list[Any]) -> Harness:
        h = harness_factory(script)
        h.loop.memory = store
        return h

    return make


async def stored(store: SqlStore, thread: str = "t1") -> list[Message]:
    return (await store.list_messages(thread, PageRequest(1000, 1 << 30))).items


def texts(messages: list[Message]) -> list[tuple[str, str]]:
    return [(m.role, m.text) for m in messages]


def prompt_of(body: dict[str, Any]) -> list[tuple[str, str]]:
    return [(m["role"], m["content"] if isinstance(m["content"], str) else
             "".join(b.get("text", "") for b in m["content"])) for m in body["messages"]]


async def test_history_is_carried_across_calls_through_the_provider_prompt(memory_harness, store) -> None:
    h = memory_harness([Turn.say("Hello, Ada."), Turn.say("Your name is Ada.")])
    agent = h.agent()
    await h.generate(agent, "My name is Ada.", **U1T1)
    result = await h.generate(agent, "What is my name?", **U1T1)
    assert result.text == "Your name is Ada."
    assert prompt_of(h.bodies()[1]) == [
        ("system", "You are a test agent."),
        ("user", "My name is Ada."), ("assistant", "Hello, Ada."), ("user", "What is my name?"),
    ]
    assert texts(await stored(store)) == [
        ("user", "My name is Ada."), ("assistant", "Hello, Ada."),
        ("user", "What is my name?"), ("assistant", "Your name is Ada."),
    ]


async def test_last_messages_bounds_the_history_and_zero_loads_none(memory_harness, store) -> None:
    h = memory_harness([Turn.say(f"a{i}") for i in range(4)])
    await h.generate(h.agent(), "q0", **U1T1)
    await h.generate(h.agent(), "q1", **U1T1)
    await h.generate(h.agent(memory=MemorySettings(last_messages=3)), "q2", **U1T1)
    assert prompt_of(h.bodies()[2])[1:] == [("assistant", "a0"), ("user", "q1"), ("assistant", "a1"),
                                            ("user", "q2")]
    await h.generate(h.agent(memory=MemorySettings(last_messages=0)), "q3", **U1T1)
    assert prompt_of(h.bodies()[3])[1:] == [("user", "q3")]
    assert len(await stored(store)) == 8  # loaded history is not written again


async def test_default_history_is_the_last_ten_messages(memory_harness) -> None:
    h = memory_harness([Turn.say(f"a{i}") for i in range(7)])
    for i in range(7):
        await h.generate(h.agent(), f"q{i}", **U1T1)
    history = prompt_of(h.bodies()[6])[1:-1]
    assert len(history) == 10 and history[0] == ("user", "q1") and history[-1] == ("assistant", "a5")


async def test_thread_of_another_resource_is_refused_and_nothing_stored(memory_harness, store) -> None:
    h = memory_harness([Turn.say("hi")])
    await h.generate(h.agent(), "mine", **U1T1)
    before = texts(await stored(store))
    with pytest.raises(PermissionDeniedError):
        await h.generate(h.agent(), "theirs", memory=MemoryOptions("u2", "t1"))
    with pytest.raises(PermissionDeniedError):
        await h.stream(h.agent(), "theirs", memory=MemoryOptions("u2", "t1", thread_title="x"))
    assert len(h.bodies()) == 1  # the model was never called
    assert texts(await stored(store)) == before
    thread = await store.get_thread("t1")
    assert thread is not None and thread.resource_id == "u1" and thread.title == ""
    assert len((await store.list_runs("t1", PageRequest(10, 1 << 20))).items) == 1


async def test_thread_object_is_created_then_updated(memory_harness, store) -> None:
    h = memory_harness([Turn.say("one"), Turn.say("two"), Turn.say("three")])
    await h.generate(h.agent(), "a", memory=MemoryOptions("u1", "t1", "Trip", {"city": "Oslo"}))
    thread = await store.get_thread("t1")
    assert thread is not None and (thread.title, thread.metadata) == ("Trip", {"city": "Oslo"})
    await h.generate(h.agent(), "b", **U1T1)  # by id only: kept
    await h.generate(h.agent(), "c", memory=MemoryOptions("u1", "t1", "Trip to Bergen", {"city": "Bergen"}))
    thread = await store.get_thread("t1")
    assert thread is not None and (thread.title, thread.metadata) == ("Trip to Bergen", {"city": "Bergen"})


def _quality(text: str) -> float:
    return 0.9 if "detailed" in text else 0.2


async def test_quality_guardrail_rejected_answers_are_never_stored(memory_harness, store) -> None:
    h = memory_harness([Turn.say("short"), Turn.say("a detailed answer")])
    agent = h.agent(output_processors=[QualityGuardrail(_quality)], max_processor_retries=3)
    await h.generate(agent, "explain", **U1T1)
    assert texts(await stored(store)) == [("user", "explain"), ("assistant", "a detailed answer")]

    h.server.add(*[Turn.say("short")] * 4)
    result = await h.generate(agent, "again", memory=MemoryOptions("u1", "t2"))
    assert result.tripwire is not None
    assert texts(await stored(store, "t2")) == [("user", "again")]
    dumped = json.dumps([content_to_json(m.content) for m in await stored(store, "t2")])
    assert "short" not in dumped


async def test_redactor_stores_the_redacted_tool_result_never_the_raw_one(memory_harness, store) -> None:
    customer = {"name": "Ann", "ssn": "123-45-6789", "email": "ann@example.com"}
    h = memory_harness([Turn.call("lookup-customer", {"id": 7}), Turn.say("found Ann")])
    agent = h.agent(output_processors=[RedactToolResult()],
                    tools=[Tool("lookup-customer", lambda a, c: customer)])
    await h.generate(agent, "who is 7?", **U1T1)
    messages = await stored(store)
    dumped = "".join(content_to_json(m.content) for m in messages)
    assert "123-45-6789" not in dumped and "ann@example.com" not in dumped
    parts = [p for m in messages for p in m.content.parts if isinstance(p, ToolInvocationPart)]
    assert [(p.state, p.result) for p in parts] == [
        ("result", {"name": "Ann", "ssn": "[REDACTED]", "email": "[REDACTED]"})
    ]
    assert messages[-1].text == "found Ann"


async def test_transient_data_is_not_stored_and_other_data_is_a_part(memory_harness, store) -> None:
    h = memory_harness([Turn.say("fine")])
    chunks = await h.stream(h.agent(output_processors=[ModerationEmitter()]), "hi", **U1T1)
    assert of_type(chunks, "data-progress")  # streamed to the client
    [user, assistant] = await stored(store)
    data = [p for p in assistant.content.parts if isinstance(p, DataPart)]
    assert [(p.name, p.data) for p in data] == [("data-moderation", {"level": "warn", "reason": "Possibly unsafe"})]
    assert "data-progress" not in content_to_json(assistant.content)


class ReturnsEmptyList:
    """The docs' processOutputStep examples end with ``return []``: that means no change."""

    id = "returns-empty"

    def process_output_step(self, args: Any) -> list[Message]:
        return []


async def test_process_output_step_returning_empty_list_stores_the_full_conversation(
    memory_harness, store
) -> None:
    h = memory_harness([Turn.say("answer")])
    await h.generate(h.agent(output_processors=[ReturnsEmptyList()]), "question", **U1T1)
    assert texts(await stored(store)) == [("user", "question"), ("assistant", "answer")]


class RejectsResult:
    id = "rejects-result"

    def process_output_result(self, args: Any) -> None:
        args.abort("not this answer")


async def test_abort_in_process_output_result_stores_nothing_of_the_answer(memory_harness, store) -> None:
    h = memory_harness([Turn.call("t", {}), Turn.say("secret answer")])
    agent = h.agent(output_processors=[RejectsResult()], tools=[Tool("t", lambda a, c: "tool out")])
    result = await h.generate(agent, "question", **U1T1)
    assert result.tripwire is not None
    assert texts(await stored(store)) == [("user", "question")]
    [run] = (await store.list_runs("t1", PageRequest(10, 1 << 20))).items
    assert run.status == "aborted"


class SeesStoredSteps:
    """From the second step on, records what the store already holds."""

    id = "sees-stored"

    def __init__(self, store: SqlStore) -> None:
        self.store = store
        self.seen: list[list[Message]] = []

    async def process_input_step(self, args: Any) -> None:
        if args.step_number > 0:
            self.seen.append(await stored(self.store))


async def test_each_accepted_step_is_stored_at_its_boundary(memory_harness, store) -> None:
    h = memory_harness([Turn.call("t", {"x": 1}), Turn.say("done")])
    watcher = SeesStoredSteps(store)
    agent = h.agent(input_processors=[watcher], tools=[Tool("t", lambda a, c: {"ok": True})])
    await h.generate(agent, "go", **U1T1)
    [during_step_2] = watcher.seen
    assert during_step_2[0].text == "go"
    calls = [p for m in during_step_2 for p in m.content.parts if isinstance(p, ToolInvocationPart)]
    assert [(p.tool_name, p.state, p.result) for p in calls] == [("t", "result", {"ok": True})]
    assert "done" not in "".join(m.text for m in during_step_2)  # the step in progress is not
    final = await stored(store)
    assert final[-1].text == "done"


class DropsInput:
    """Removes the user's message after the answer: what remains is what is stored."""

    id = "drops-input"

    def process_output_result(self, args: Any) -> None:
        args.message_list.remove_by_ids([m.id for m in args.message_list.get_input()])


async def test_a_message_removed_by_a_processor_is_not_kept(memory_harness, store) -> None:
    h = memory_harness([Turn.say("answer")])
    await h.generate(h.agent(output_processors=[DropsInput()]), "forget me", **U1T1)
    assert texts(await stored(store)) == [("assistant", "answer")]


async def test_runs_are_recorded_with_status_reason_and_usage(memory_harness, store) -> None:
    h = memory_harness([Turn.say("ok"), Turn.fail(400, "bad request")])
    await h.generate(h.agent(), "one", **U1T1)
    failed = await h.generate(h.agent(), "two", **U1T1)
    assert failed.error is not None
    runs = (await store.list_runs("t1", PageRequest(10, 1 << 20))).items
    assert [(r.status, r.finish_reason) for r in runs] == [("failed", "error"), ("finished", "stop")]
    assert runs[1].usage.input_tokens == 10 and runs[1].agent_id == "test-agent"


async def test_the_input_is_stored_before_the_model_is_called_with_or_without_input_processors(
    memory_harness, store
) -> None:
    """The input is kept when the model call fails: saved with the run's opening when no
    processor can change it, after ``processInput`` otherwise (as that processor left it)."""
    h = memory_harness([Turn.fail(400, "bad request"), Turn.fail(400, "bad request")])
    assert (await h.generate(h.agent(), "kept", **U1T1)).error is not None

    class Shout:
        id = "shout"

        def process_input(self, args: Any) -> list[Message]:
            return [Message.user(m.text.upper()) for m in args.messages]

    assert (await h.generate(h.agent(input_processors=[Shout()]), "also kept", **U1T1)).error is not None
    assert texts(await stored(store)) == [("user", "kept"), ("user", "ALSO KEPT")]
    runs = (await store.list_runs("t1", PageRequest(10, 1 << 20))).items
    assert [r.status for r in runs] == ["failed", "failed"]


async def test_a_client_that_resends_the_conversation_keeps_each_message_once(memory_harness, store) -> None:
    """A client that sends the whole conversation each time (ids and all) sends messages the
    thread has: they stay where they are, once, and only the new one is added."""
    h = memory_harness([Turn.say("ok"), Turn.say("ok again")])
    first = Message.user("one")
    await h.generate(h.agent(), [first], **U1T1)
    answer = (await stored(store))[-1]
    await h.generate(h.agent(), [first, answer, Message.user("two")], **U1T1)
    assert texts(await stored(store)) == [("user", "one"), ("assistant", "ok"), ("user", "two"),
                                          ("assistant", "ok again")]


async def test_runs_without_memory_store_nothing(memory_harness, store) -> None:
    h = memory_harness([Turn.say("ok")])
    result = await h.generate(h.agent(), "hello")
    assert result.text == "ok"
    assert (await store.list_threads("u1", PageRequest(10, 1 << 20))).items == []


async def test_a_user_message_with_every_text_part_is_stored_as_sent(memory_harness, store) -> None:
    h = memory_harness([Turn.say("ok")])
    message = Message.user("part one", id="client-id")
    message.content.parts.append(TextPart(" part two", provider_metadata={"x": {"y": 1}}))
    await h.generate(h.agent(), [message], **U1T1)
    first = (await stored(store))[0]
    assert first.id == "client-id" and first.content.parts == message.content.parts
