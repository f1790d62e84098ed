"""Delegation hooks (``on_delegation_start`` / ``on_delegation_complete``) around sub-agent
tools, against the wire-level OpenAI fake: in-process processors, and a TypeScript processor in
its own process attached to a ``treadle serve`` process."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import pytest

from tests.harness import Harness, harness_factory  # noqa: F401
from tests.support import LOOPBACK_TRUST, OpenAIServer, Turn
from tests.test_cli import ROOT, ServeProcess
from tests.test_subagents import LEAD, RESEARCHER, routed, serve, stream, write_config  # noqa: F401
from tests.test_typescript_sdk import NODE_TSX, TS_CLIENT
from treadle.agents import Agent, ProcessorRef, SubAgentRef
from treadle.core.args import OnDelegationCompleteArgs, OnDelegationStartArgs
from treadle.core.messages import SystemMessage
from treadle.v1 import agent_service_pb2, agent_service_pb2_grpc


class Supervisor:
    """Rejects secrets, sharpens every other prompt, and leaves feedback (or bails)."""

    id = "supervisor"

    def __init__(self, bail: bool = False) -> None:
        self.bail = bail
        self.completed: list[OnDelegationCompleteArgs] = []

    def on_delegation_start(self, args: OnDelegationStartArgs) -> Any:
        if "secret" in args.prompt:
            return {"proceed": False, "rejectionReason": "secrets stay here"}
        return {"modifiedPrompt": args.prompt + " Cite sources.", "modifiedMaxSteps": 2}

    def on_delegation_complete(self, args: OnDelegationCompleteArgs) -> Any:
        self.completed.append(args)
        return {"bail": True} if self.bail else {"feedback": f"Checked {args.key}: {args.result['text']}"}


def agents(h: Harness, supervisor: Supervisor) -> Any:
    h.registry.add_agent(h.agent(id="researcher", instructions="You research."))
    return h.agent(id="lead", instructions="You lead.", input_processors=[supervisor],
                   sub_agents=[SubAgentRef("research", agent_id="researcher")])


async def test_start_rejects_or_changes_the_delegation_and_complete_feeds_back(harness_factory: Any) -> None:
    step = routed({
        "You lead.": [Turn.call("agent-research", {"prompt": "Tell me the secret."}),
                      Turn.call("agent-research", {"prompt": "Find facts.", "maxSteps": 9}),
                      Turn.say("Done.")],
        "You research.": [Turn.say("Water is wet.")],
    })
    h: Harness = harness_factory([step] * 4)
    supervisor = Supervisor()
    lead = agents(h, supervisor)

    result = await h.generate(lead, "Go.")

    bodies = h.bodies()
    assert bodies[1]["messages"][-1]["content"] == "[Delegation Rejected] secrets stay here"
    assert bodies[2]["messages"][1:] == [{"role": "user", "content": "Find facts. Cite sources."}]
    assert [m["role"] for m in bodies[3]["messages"][-2:]] == ["tool", "assistant"]
    assert bodies[3]["messages"][-1]["content"] == "Checked research: Water is wet."
    assert result.text == "Done."
    [done] = supervisor.completed
    assert done.success and done.prompt == "Find facts. Cite sources." and done.duration > 0
    assert done.result["text"] == "Water is wet."


async def test_a_complete_hook_that_bails_ends_the_parent_after_the_delegation(harness_factory: Any) -> None:
    step = routed({
        "You lead.": [Turn.call("agent-research", {"prompt": "Find facts."})],
        "You research.": [Turn.say("Water is wet.")],
    })
    h: Harness = harness_factory([step] * 2)
    lead = agents(h, Supervisor(bail=True))

    result = await h.generate(lead, "Go.")

    assert len(h.bodies()) == 2  # the lead's model is not called again
    assert [r.result for s in result.steps for r in s.tool_results] == [
        {"text": "Water is wet."}]


async def test_the_sub_agent_tool_runs_with_its_own_instructions_plus_the_models(harness_factory: Any) -> None:
    step = routed({
        "You lead.": [Turn.call("agent-research", {"prompt": "Dig.", "instructions": "Be brief."}), Turn.say("ok")],
        "You research.": [Turn.say("Short.")],
    })
    h: Harness = harness_factory([step] * 3)
    h.registry.add_agent(h.agent(id="researcher", instructions=[SystemMessage("You research.")]))
    lead = h.agent(id="lead", instructions="You lead.", sub_agents=[SubAgentRef("research", agent_id="researcher")])

    await h.generate(lead, "Go.")

    assert [m["content"] for m in h.bodies()[1]["messages"]] == ["You research.", "Be brief.", "Dig."]


def test_a_typescript_processor_serves_the_delegation_hooks_to_a_serve_process(
    serve: Callable[..., ServeProcess], openai_server: Any, tmp_path: Path
) -> None:
    if not (TS_CLIENT / "node_modules").exists():
        pytest.fail("clients/typescript/node_modules is missing: run `npm ci --prefix clients/typescript`")
    step = routed({
        "You lead.": [Turn.call("agent-research", {"prompt": "What is the admin password?"}),
                      Turn.call("agent-research", {"prompt": "Facts about tides."}), Turn.say("Done.")],
        "You research.": [Turn.say("Tides follow the moon.")],
    })
    provider: OpenAIServer = openai_server([step] * 4)
    lead = {**LEAD, "inputProcessors": [{"id": "supervisor"}]}
    proc = serve(provider, write_config(tmp_path, [RESEARCHER, lead]))
    supervisor = subprocess.Popen([*NODE_TSX, str(ROOT / "tests/remote/ts/delegation_supervisor.ts"), proc.target],
                                  cwd=TS_CLIENT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert supervisor.stdout is not None
        assert supervisor.stdout.readline().strip() == "ready"

        chunks = stream(proc.target, "lead", "Tell me about tides.")

        complete = json.loads(supervisor.stdout.readline().removeprefix("complete "))
    finally:
        assert supervisor.stdin is not None
        supervisor.stdin.close()
        supervisor.wait(30)
    assert "".join(c["textDelta"]["text"] for c in chunks if "textDelta" in c) == "Done."
    rejected, delegated, after = provider.requests[1], provider.requests[2], provider.requests[3]
    assert rejected["messages"][-1]["content"] == "[Delegation Rejected] credentials stay with the lead"
    assert [m["content"] for m in delegated["messages"]] == [
        "You research.", "Answer in one sentence.", "Facts about tides. Cite sources."]
    assert after["messages"][-1] == {"role": "assistant", "content": "Checked research."}
    assert complete == {"key": "research", "success": True, "text": "Tides follow the moon.",
                        "prompt": "Facts about tides. Cite sources."}


async def test_a_sub_agent_whose_failure_policy_fails_the_run_ends_the_parent(harness_factory: Any) -> None:
    step = routed({"You lead.": [Turn.call("agent-research", {"prompt": "Dig."})]})
    h: Harness = harness_factory([step])
    lead = h.agent(id="lead", instructions="You lead.", sub_agents=[
        SubAgentRef("research", agent_id="nobody", failure="fail_run")])

    result = await h.generate(lead, "Go.")

    assert result.error is not None and "sub-agent 'research' failed" in result.error.message
    assert "agent 'nobody' not found" in result.error.message


async def test_a_python_processor_attached_remotely_serves_the_delegation_hooks(start_app: Any, openai_server: Any) -> None:
    from treadle_client import attach

    step = routed({
        "You lead.": [Turn.call("agent-research", {"prompt": "Tell me the secret."}),
                      Turn.call("agent-research", {"prompt": "Find facts."}), Turn.say("Done.")],
        "You research.": [Turn.say("Water is wet.")],
    })
    provider: OpenAIServer = openai_server([step] * 4)

    def setup(app: Any) -> None:
        app.models.trust = LOOPBACK_TRUST
        for agent in (
            Agent(id="researcher", model="openai/m", base_url=provider.base_url, instructions=[SystemMessage("You research.")]),
            Agent(id="lead", model="openai/m", base_url=provider.base_url, instructions=[SystemMessage("You lead.")],
                  input_processors=[ProcessorRef("supervisor")], sub_agents=[SubAgentRef("research", agent_id="researcher")]),
        ):
            app.add_agent(agent)

    running = await start_app(setup=setup)
    supervisor = Supervisor()
    async with await attach([supervisor], running.target) as attachment:
        await attachment.ready(timeout=10)
        async with grpc.aio.insecure_channel(running.target) as channel:
            call = agent_service_pb2_grpc.AgentServiceStub(channel).Stream(
                agent_service_pb2.StreamRequest(agent_id="lead", prompt="Go."))
            chunks = [c async for r in call for c in r.chunks]
    assert "".join(c.text_delta.text for c in chunks if c.WhichOneof("chunk") == "text_delta") == "Done."
    bodies = provider.requests
    assert bodies[1]["messages"][-1]["content"] == "[Delegation Rejected] secrets stay here"
    assert bodies[2]["messages"][1:] == [{"role": "user", "content": "Find facts. Cite sources."}]
    assert bodies[3]["messages"][-1] == {"role": "assistant", "content": "Checked research: Water is wet."}
    [done] = supervisor.completed
    assert done.success and done.result["text"] == "Water is wet." and done.duration > 0


class Progress:
    """The researcher's output processor: reports progress with a custom data chunk."""

    id = "progress"

    async def process_output_result(self, args: Any) -> None:
        await args.writer.custom({"type": "data-progress", "data": {"done": True}})


async def test_data_chunks_pass_through_unwrapped_and_the_child_run_is_in_the_parents_trace(harness_factory: Any) -> None:
    step = routed({
        "You lead.": [Turn.call("agent-research", {"prompt": "Dig."}), Turn.say("ok")],
        "You research.": [Turn.say(["Deep ", "fact."])],
    })
    h: Harness = harness_factory([step] * 3)
    h.registry.add_agent(h.agent(id="researcher", name="researcher", instructions="You research.",
                                 output_processors=[Progress()]))
    lead = h.agent(id="lead", name="lead", instructions="You lead.",
                   sub_agents=[SubAgentRef("research", agent_id="researcher")])

    chunks = await h.stream(lead, "Go.")

    data = [c for c in chunks if c.type == "data-progress"]
    assert [c.data for c in data] == [{"done": True}]
    wrapped = [c.payload.output.type for c in chunks if c.type == "tool-output"]
    assert "data-progress" not in wrapped and wrapped.count("text-delta") == 2
    spans = {s.name: s for s in h.spans()}
    child, tool, parent = spans["invoke_agent researcher"], spans["execute_tool agent-research"], spans["invoke_agent lead"]
    assert child.context.trace_id == parent.context.trace_id
    assert child.parent is not None and child.parent.span_id == tool.context.span_id


class Watchdog:
    """Trips the parent's run after its ``wait`` tool ran (while a sub-agent still streams)."""

    id = "watchdog"

    def after_tool_call(self, args: Any) -> None:
        if args.tool_name == "wait":
            args.abort("took too long")


async def test_a_parent_that_trips_cancels_its_running_sub_agent(harness_factory: Any) -> None:
    import asyncio
    import time

    from tests.support import ScriptedToolCall
    from treadle.core.tool import Tool

    async def wait(args: Any, ctx: Any) -> str:
        await asyncio.sleep(0.5)
        return "waited"

    both = Turn(tool_calls=[ScriptedToolCall("agent-research", {"prompt": "Dig."}), ScriptedToolCall("wait", {})])
    step = routed({"You lead.": [both], "You research.": [Turn.say(["word "] * 80, pace=0.05)]})  # 4 s
    h: Harness = harness_factory([step] * 2)
    h.registry.add_agent(h.agent(id="researcher", instructions="You research."))
    lead = h.agent(id="lead", instructions="You lead.", tools=[Tool("wait", wait)], input_processors=[Watchdog()],
                   sub_agents=[SubAgentRef("research", agent_id="researcher")])

    chunks, called = [], 0.0
    async for chunk in h.loop.stream(lead, h.request("Go.")):
        chunks.append(chunk)
        called = called or (time.monotonic() if chunk.type == "tool-call" else 0.0)

    assert time.monotonic() - called < 2  # the sub-agent's answer would take 4 s more
    [tripwire] = [c for c in chunks if c.type == "tripwire"]
    assert tripwire.payload.reason == "took too long" and chunks[-1].payload.reason == "other"
    streamed = [c for c in chunks if c.type == "tool-output" and c.payload.output.type == "text-delta"]
    assert 0 < len(streamed) < 80


class NoDelegations:
    id = "no-delegations"

    def on_delegation_start(self, args: OnDelegationStartArgs) -> None:
        args.abort("delegation is not allowed here")


async def test_an_abort_in_a_delegation_hook_trips_the_parent(harness_factory: Any) -> None:
    step = routed({"You lead.": [Turn.call("agent-research", {"prompt": "Dig."})]})
    h: Harness = harness_factory([step])
    h.registry.add_agent(h.agent(id="researcher", instructions="You research."))
    lead = h.agent(id="lead", instructions="You lead.", input_processors=[NoDelegations()],
                   sub_agents=[SubAgentRef("research", agent_id="researcher")])

    result = await h.generate(lead, "Go.")

    assert result.tripwire is not None and result.tripwire.reason == "delegation is not allowed here"
    assert result.tripwire.processor_id == "no-delegations" and len(h.bodies()) == 1


async def test_a_sub_agents_tool_payload_rules_hold_inside_the_parents_stream(harness_factory: Any) -> None:
    # The researcher masks the SSN its tool returns; the lead's client sees the researcher's
    # tool result inside a tool-output chunk, masked, while the researcher's model got it raw.
    from tests.test_tool_transforms import RECORD, SSN, lookup_customer
    from treadle.core.tool_payload import ToolPayloadRule
    from treadle.loop.payload_view import display_of

    step = routed({
        "You lead.": [Turn.call("agent-research", {"prompt": "Who is c-42?"}), Turn.say("Done.")],
        "You research.": [Turn.call("lookup_customer", {"id": "c-42"}), Turn.say("Ada.")],
    })
    h: Harness = harness_factory([step] * 4)
    h.registry.add_agent(h.agent(id="researcher", instructions="You research.", tools=[lookup_customer],
                                 tool_payload_rules=[ToolPayloadRule("output", tools=("lookup_customer",),
                                                                     mask=("/ssn",))]))
    lead = h.agent(id="lead", instructions="You lead.", sub_agents=[SubAgentRef("research", agent_id="researcher")])

    chunks = await h.stream(lead, "Go.")

    nested = [c for c in chunks if c.type == "tool-output" and c.payload.output.type == "tool-result"]
    [raw] = [c.payload.output for c in nested]
    assert raw.payload.result == RECORD  # the run itself keeps the raw payload
    [shown] = [s.payload.output for c in nested if (s := display_of(c)) is not None]
    assert shown.payload.result == {**RECORD, "ssn": "***"}
    assert SSN in json.dumps(h.bodies()[2]["messages"][-1])  # the researcher's model saw it raw
