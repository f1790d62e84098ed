"""Visible fail-open: a skipped ``fail_open`` processor is listed in the run's ``finish`` chunk and
in the ``Generate`` result, with hook, reason and count, for each reason a hook is skipped.

Raw processors over real gRPC (``tests/test_remote_processor_protocol.py``'s client) fail on the
delta "b" the way each case says; only hooks the processor declared are listed.
"""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import pytest

from tests.support import Turn
from tests.test_remote_processor_protocol import (  # noqa: F401
    PID,
    _until,
    decl,
    failing_on_b,
    hook_decl,
    keep,
    make_env,
    stream_result,
)
from treadle.agents import ProcessorRef
from treadle.v1 import agent_service_pb2, agent_service_pb2_grpc, chunk_pb2, fail_open_pb2
from treadle.v1 import processor_service_pb2 as pb

REASON = {
    "timeout": fail_open_pb2.FAIL_OPEN_REASON_TIMEOUT,
    "disconnect": fail_open_pb2.FAIL_OPEN_REASON_DISCONNECT,
    "malformed": fail_open_pb2.FAIL_OPEN_REASON_MALFORMED,
    "never-attached": fail_open_pb2.FAIL_OPEN_REASON_NOT_ATTACHED,
}


def listed(skipped: Any) -> dict[tuple[str, str, int], int]:
    return {(s.processor_id, s.hook, s.reason): s.count for s in skipped}


async def passes(_: Any, inv: pb.Invocation) -> pb.InvocationResult:
    return stream_result(keep())


async def generate(target: str) -> agent_service_pb2.GenerateResponse:
    async with grpc.aio.insecure_channel(target) as channel:
        stub = agent_service_pb2_grpc.AgentServiceStub(channel)
        return await stub.Generate(agent_service_pb2.GenerateRequest(agent_id="echo", prompt="hi"))


@pytest.mark.parametrize("failure", ["timeout", "disconnect", "malformed", "never-attached"])
async def test_skips_are_listed_in_finish_and_generate(make_env: Any, failure: str) -> None:
    env = await make_env([Turn.say(["a", "b", "c"]), Turn.say(["a", "b", "c"])])
    env.agent(outputs=[ProcessorRef(PID, "fail_open", timeout=0.2)])
    if failure != "never-attached":
        await env.client(failing_on_b(failure)).attach(decl(PID, hook_decl(pb.HOOK_PROCESS_OUTPUT_STREAM)))
    chunks = await env.stream()
    finish = chunks[-1]
    assert finish.WhichOneof("chunk") == "finish" and finish.finish.reason == chunk_pb2.FINISH_REASON_STOP
    skips = listed(finish.finish.skipped_processors)
    hook = "*" if failure == "never-attached" else "processOutputStream"
    assert (PID, hook, REASON[failure]) in skips
    if failure in ("timeout", "malformed"):
        assert skips == {(PID, hook, REASON[failure]): 1}  # one chunk skipped; the rest were answered
    if failure == "disconnect":
        # The chunk it died on, then every later chunk: no replica was left (declared hook only).
        assert skips[(PID, hook, REASON["disconnect"])] == 1
        assert {h for _, h, _ in skips} == {"processOutputStream"}
        assert skips[(PID, hook, REASON["never-attached"])] >= 1
    message = next(s.message for s in finish.finish.skipped_processors if s.reason == REASON[failure])
    assert message

    result = await generate(env.target)
    assert result.text == "abc"
    assert (PID, hook, REASON["never-attached" if failure == "disconnect" else failure]) in listed(result.skipped_processors)


async def test_a_run_where_every_guard_ran_lists_nothing(make_env: Any) -> None:
    env = await make_env([Turn.say(["a", "b", "c"])])
    env.agent(outputs=[ProcessorRef(PID, "fail_open", timeout=5)])
    await env.client(passes).attach(decl(PID, hook_decl(pb.HOOK_PROCESS_OUTPUT_STREAM)))
    chunks = await env.stream()
    assert not chunks[-1].finish.skipped_processors


async def test_undeclared_hooks_of_a_processor_that_went_away_are_not_listed(make_env: Any) -> None:
    env = await make_env([Turn.say(["a"])])
    env.agent(inputs=[ProcessorRef(PID, "fail_open")], outputs=[ProcessorRef(PID, "fail_open")])
    client = env.client(None)
    await client.attach(decl(PID, hook_decl(pb.HOOK_PROCESS_INPUT)))
    client.disconnect()
    await asyncio.wait_for(_until(lambda: env.app.processors.declaration(PID) is None), 5)
    chunks = await env.stream()
    assert listed(chunks[-1].finish.skipped_processors) == {
        (PID, "processInput", fail_open_pb2.FAIL_OPEN_REASON_NOT_ATTACHED): 1}
