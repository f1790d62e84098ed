"""Parallel guardrails: input processors marked as one ``parallel_group`` run concurrently, as
validators; with ``with_model`` beside the first provider call, whose output is held until every
member passed.

The validators record when they start and end; the tests assert on overlap and order (what a
user would notice), never on elapsed time.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from tests.harness import Harness, harness_factory, text_of, types  # noqa: F401
from tests.support import Turn
from tests.test_remote_processor_protocol import decl, hook_decl, make_env, unchanged  # noqa: F401
from tests.test_remote_processor_protocol import visible as remote_visible
from treadle.agents import ProcessorRef
from treadle.api.convert import agent_from_proto
from treadle.core.errors import InvalidArgumentError
from treadle.v1 import agent_pb2
from treadle.v1 import processor_service_pb2 as pb


class Validator:
    """Takes ``delay`` seconds to decide; aborts when told to (or when ``gate`` says so)."""

    def __init__(self, pid: str, delay: float = 0.2, *, block: bool = False,
                 wait_for: threading.Event | None = None) -> None:
        self.id = pid
        self.delay = delay
        self.block = block
        self.wait_for = wait_for
        self.started: float | None = None
        self.ended: float | None = None
        self.cancelled = False

    async def process_input(self, args: Any) -> None:
        await self.decide(args)

    async def decide(self, args: Any) -> None:
        self.started = time.monotonic()
        try:
            if self.wait_for is not None:
                while not self.wait_for.is_set():  # observable state: the model call has begun
                    await asyncio.sleep(0.005)
            await asyncio.sleep(self.delay)
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        self.ended = time.monotonic()
        if self.block:
            args.abort(f"{self.id} blocked the input")


def register(h: Harness, *processors: Any) -> None:
    for p in processors:
        h.registry.add_processor(p)


def group(*ids: str, with_model: bool = False) -> list[ProcessorRef]:
    return [ProcessorRef(i, parallel_group="guards", with_model=with_model) for i in ids]


async def test_three_validators_run_at_once(harness_factory: Any) -> None:
    h: Harness = harness_factory([Turn.say("ok")])
    vs = [Validator(f"v{i}") for i in range(3)]
    register(h, *vs)
    result = await h.generate(h.agent(input_processors=group("v0", "v1", "v2")), "hi")
    assert result.text == "ok"
    starts = [v.started for v in vs]
    ends = [v.ended for v in vs]
    assert all(starts) and all(ends)
    assert max(starts) < min(ends)  # all three were running at the same moment: ~200 ms, not 600


async def test_the_first_abort_cancels_the_others_and_trips_the_run(harness_factory: Any) -> None:
    h: Harness = harness_factory([])
    fast = Validator("fast", 0.0, block=True)
    slow = [Validator("slow1", 30), Validator("slow2", 30)]
    register(h, fast, *slow)
    chunks = await h.stream(h.agent(input_processors=group("fast", "slow1", "slow2")), "hi")
    assert types(chunks) == ["start", "tripwire", "finish"]
    assert chunks[1].payload.processor_id == "fast"
    assert all(v.cancelled for v in slow)
    assert h.server.recorded == []  # without with_model the model waits for the group


class Mutator:
    id = "mutator"

    def process_input(self, args: Any) -> Any:
        return args.messages  # a replacement: not allowed in a parallel group


async def test_a_member_that_changes_the_input_fails_the_run(harness_factory: Any) -> None:
    h: Harness = harness_factory([])
    register(h, Mutator(), Validator("v", 0))
    result = await h.generate(h.agent(input_processors=group("mutator", "v")), "hi")
    assert result.error is not None and "may abort or continue, not change anything" in result.error.message


async def test_with_model_a_passing_group_runs_beside_the_provider_call(harness_factory: Any) -> None:
    h: Harness = harness_factory([Turn.say(["held ", "then ", "released"])])
    called = threading.Event()
    original = h.server._serve

    def serve(handler: Any, raw: bytes) -> None:
        called.set()
        original(handler, raw)

    h.server._serve = serve  # type: ignore[method-assign]
    guard = Validator("guard", 0.05, wait_for=called)
    register(h, guard)
    chunks = await h.stream(h.agent(input_processors=group("guard", with_model=True)), "hi")
    # The guard could only finish once the provider call had begun: they ran at the same time.
    assert guard.ended is not None
    assert text_of(chunks) == "held then released"
    assert types(chunks)[-1] == "finish" and chunks[-1].payload.reason == "stop"


async def test_with_model_a_blocking_guard_discards_the_held_output(harness_factory: Any) -> None:
    h: Harness = harness_factory([Turn.say(["secret ", "answer"])])
    called = threading.Event()
    original = h.server._serve

    def serve(handler: Any, raw: bytes) -> None:
        called.set()
        original(handler, raw)

    h.server._serve = serve  # type: ignore[method-assign]
    guard = Validator("guard", 0.05, block=True, wait_for=called)
    register(h, guard)
    chunks = await h.stream(h.agent(input_processors=group("guard", with_model=True)), "hi")
    assert called.is_set()  # the model was called while the guard ran
    assert types(chunks) == ["start", "tripwire", "finish"]  # nothing of the model's output
    assert chunks[1].payload.processor_id == "guard"
    assert chunks[-1].payload.reason == "other"


def test_parallel_groups_are_for_input_processors_only() -> None:
    bad = agent_pb2.Agent(id="a", model="openai/x", output_processors=[
        agent_pb2.ProcessorRef(id="p", parallel_group="g")])
    with pytest.raises(InvalidArgumentError, match="input processors only"):
        agent_from_proto(bad, source="api")
    lonely = agent_pb2.Agent(id="a", model="openai/x", input_processors=[agent_pb2.ProcessorRef(id="p", with_model=True)])
    with pytest.raises(InvalidArgumentError, match="with_model needs a parallel_group"):
        agent_from_proto(lonely, source="api")
    ok = agent_from_proto(agent_pb2.Agent(id="a", model="openai/x", input_processors=[
        agent_pb2.ProcessorRef(id="p", parallel_group="g", with_model=True)]), source="api")
    assert ok.input_processors[0].parallel_group == "g" and ok.input_processors[0].with_model


class StepValidator(Validator):
    process_input = None  # type: ignore[assignment]  # processInputStep only

    async def process_input_step(self, args: Any) -> None:
        await self.decide(args)


async def test_per_step_input_hooks_of_a_group_run_at_once(harness_factory: Any) -> None:
    h: Harness = harness_factory([Turn.say("ok")])
    vs = [StepValidator(f"s{i}", 0.05) for i in range(3)]
    register(h, *vs)
    result = await h.generate(h.agent(input_processors=group("s0", "s1", "s2")), "hi")
    assert result.text == "ok"
    assert max(v.started for v in vs) < min(v.ended for v in vs)  # type: ignore[type-var]


async def test_remote_members_are_invoked_at_the_same_time(make_env: Any) -> None:
    """Two processors in other streams: each answers only once BOTH invocations are in flight,
    which can only happen if the server sent them concurrently."""
    env = await make_env([Turn.say(["a"])])
    env.agent(inputs=[ProcessorRef("g1", parallel_group="g"), ProcessorRef("g2", parallel_group="g")])
    both = asyncio.Event()
    arrived: list[str] = []

    async def answer_when_both(_: Any, inv: pb.Invocation) -> pb.InvocationResult:
        arrived.append(inv.processor_id)
        if len(arrived) == 2:
            both.set()
        await asyncio.wait_for(both.wait(), 5)
        return unchanged()

    for pid in ("g1", "g2"):
        await env.client(answer_when_both).attach(decl(pid, hook_decl(pb.HOOK_PROCESS_INPUT)))
    assert remote_visible(await env.stream())[-1] == "finish:FINISH_REASON_STOP"
    assert sorted(arrived) == ["g1", "g2"]
