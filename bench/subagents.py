"""What a sub-agent costs: a local one over a plain tool call, a remote one over a bare ``Stream``.

    .venv/bin/python bench/subagents.py [--runs N] [--deltas N]

Local, in process with a scripted model (no provider I/O): a run whose model calls a plain tool
that returns a string, against the same run whose model calls ``agent-research`` instead (a
whole child run of ``--deltas`` text deltas, each forwarded as a ``toolOutput`` chunk), as
medians and their ratio.

Remote, two ``treadle serve`` processes on loopback and the OpenAI wire fake: a bare ``Stream``
of ``researcher`` on the second server, against the same answer reached as a sub-agent from the
first server (measured at the client, from the parent's ``toolCall`` chunk to its ``toolResult``:
the delegation alone), as medians and their ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import grpc  # noqa: E402
from opentelemetry.trace import NoOpTracer  # noqa: E402

from tests.support.openai_wire import OpenAIServer  # noqa: E402
from tests.support.script import Turn  # noqa: E402
from treadle.agents import Agent, CallOptions, RunRequest, SubAgentRef  # noqa: E402
from treadle.core.messages import Message, SystemMessage  # noqa: E402
from treadle.core.tool import Tool  # noqa: E402
from treadle.loop import AgentLoop  # noqa: E402
from treadle.registry import Registry  # noqa: E402
from treadle.testing import ScriptedModel, ScriptedModels, text_response, tool_call_response  # noqa: E402
from treadle.v1 import agent_service_pb2, agent_service_pb2_grpc  # noqa: E402

WARMUP = 3


async def _local(runs: int, deltas: int) -> tuple[float, float]:
    model = ScriptedModel()
    registry = Registry()
    loop = AgentLoop(registry, ScriptedModels(model), NoOpTracer())
    registry.add_tool(Tool("lookup", lambda args, ctx: "Tides follow the moon."))
    registry.add_agent(Agent(id="researcher", model="scripted/x", instructions=[SystemMessage("You research.")]))
    plain = Agent(id="plain", model="scripted/x", tools=["lookup"])
    lead = Agent(id="lead", model="scripted/x", sub_agents=[SubAgentRef("research", agent_id="researcher")])
    answer = [f"word{i} " for i in range(deltas)]

    async def median(agent: Agent, script: list[Any]) -> float:
        samples = []
        for i in range(runs + WARMUP):
            model.add(*script)
            start = time.perf_counter()
            chunks = [c async for c in loop.stream(agent, RunRequest([Message.user("go")], CallOptions()))]
            elapsed = time.perf_counter() - start
            assert chunks[-1].type == "finish" and chunks[-1].payload.reason == "stop", chunks[-1]
            if i >= WARMUP:
                samples.append(elapsed)
        return statistics.median(samples)

    tool = await median(plain, [tool_call_response("lookup", {"q": "tides"}), text_response(["ok"])])
    sub = await median(lead, [tool_call_response("agent-research", {"prompt": "tides"}),
                              text_response(answer), text_response(["ok"])])
    return tool, sub


class _Serve:
    def __init__(self, config: dict[str, Any], fake: OpenAIServer, port: int) -> None:
        self.dir = tempfile.mkdtemp(prefix="bench-subagents-")
        path = Path(self.dir) / "config.json"
        path.write_text(json.dumps(config))
        self.target = f"127.0.0.1:{port}"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OTEL_", "TREADLE_"))}
        env |= {"OPENAI_BASE_URL": fake.base_url, "OPENAI_API_KEY": "sk-bench", "TREADLE_DATA_DIR": self.dir}
        self.proc = subprocess.Popen([str(ROOT / ".venv/bin/treadle"), "serve", "--listen", self.target,
                                      "--config", str(path)], env=env, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)

    def wait(self) -> None:
        deadline = time.monotonic() + 60
        with grpc.insecure_channel(self.target) as channel:
            while True:
                try:
                    grpc.channel_ready_future(channel).result(timeout=1)
                    stub = agent_service_pb2_grpc.AgentServiceStub(channel)
                    stub.ListAgents(agent_service_pb2.ListAgentsRequest(), timeout=2)
                    return
                except grpc.RpcError:
                    pass
                except grpc.FutureTimeoutError:
                    pass
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise SystemExit(f"server on {self.target} did not start")

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(30)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _remote(runs: int, deltas: int) -> tuple[float, float]:
    answer = [f"word{i} " for i in range(deltas)]

    def route(body: dict[str, Any]) -> Turn:
        system = body["messages"][0]["content"]
        if system == "You research.":
            return Turn.say(answer)
        if body["messages"][-1]["role"] == "tool":
            return Turn.say("ok")
        return Turn.call("agent-research", {"prompt": "tides"})

    fake = OpenAIServer([route] * ((runs + WARMUP) * 4))
    researcher = {"id": "researcher", "instructions": "You research.", "model": "openai/gpt-4o-mini"}
    second = _Serve({"agents": [researcher]}, fake, _free_port())
    second.wait()
    lead = {"id": "lead", "instructions": "You lead.", "model": "openai/gpt-4o-mini",
            "subAgents": [{"key": "research", "remote": {"target": "second", "agentId": "researcher"}}]}
    first = _Serve({"agents": [lead], "remoteServers": {"second": {"endpoint": second.target}}}, fake, _free_port())
    try:
        first.wait()
        bare: list[float] = []
        delegated: list[float] = []
        with grpc.insecure_channel(second.target) as c2, grpc.insecure_channel(first.target) as c1:
            direct, parent = agent_service_pb2_grpc.AgentServiceStub(c2), agent_service_pb2_grpc.AgentServiceStub(c1)
            for i in range(runs + WARMUP):
                start = time.perf_counter()
                n = sum(len(r.chunks) for r in direct.Stream(
                    agent_service_pb2.StreamRequest(agent_id="researcher", prompt="tides")))
                took = time.perf_counter() - start
                assert n > deltas
                called = returned = 0.0
                for response in parent.Stream(agent_service_pb2.StreamRequest(agent_id="lead", prompt="go")):
                    for chunk in response.chunks:
                        kind = chunk.WhichOneof("chunk")
                        if kind == "tool_call":
                            called = time.perf_counter()
                        elif kind == "tool_result":
                            returned = time.perf_counter()
                            assert not chunk.tool_result.is_error, chunk
                assert called and returned
                if i >= WARMUP:
                    bare.append(took)
                    delegated.append(returned - called)
        return statistics.median(bare), statistics.median(delegated)
    finally:
        first.close()
        second.close()
        fake.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--deltas", type=int, default=20)
    args = parser.parse_args()
    tool, sub = asyncio.run(_local(args.runs, args.deltas))
    print(f"local, in process ({args.runs} runs, {args.deltas} deltas from the sub-agent):")
    print(f"  run with a plain tool call:      {tool * 1e3:7.2f} ms")
    print(f"  run with a sub-agent call:       {sub * 1e3:7.2f} ms   ratio {sub / tool:.2f}x "
          f"(+{(sub - tool) * 1e3:.2f} ms)")
    bare, delegated = _remote(args.runs, args.deltas)
    print(f"remote, two treadle serve processes ({args.runs} runs):")
    print(f"  bare Stream to the second server: {bare * 1e3:7.2f} ms")
    print(f"  the same as a remote sub-agent:   {delegated * 1e3:7.2f} ms   ratio {delegated / bare:.2f}x "
          f"(+{(delegated - bare) * 1e3:.2f} ms)")


if __name__ == "__main__":
    main()
