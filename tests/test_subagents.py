"""Sub-agents (the Agent's ``agents``) against ``treadle serve`` processes and the wire-level
OpenAI fake: the tools the model sees, nested ``toolOutput`` chunks, a second server, cancelling
across servers, nesting three deep, a sub-agent that trips, one trace across servers."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import json_format

from tests.support import OpenAIServer, Turn
from tests.support.otlp import OtlpReceiver
from tests.test_cli import READY_TIMEOUT, ROOT, ServeProcess, clean_env
from treadle.v1 import agent_service_pb2, agent_service_pb2_grpc, thread_service_pb2, thread_service_pb2_grpc

INPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "prompt": {"type": "string", "description": "The task for the agent."},
        "threadId": {"type": ["string", "null"],
                     "description": "The agent's thread to continue (a subAgentThreadId it returned)."},
        "resourceId": {"type": ["string", "null"], "description": "The resource that owns the thread."},
        "instructions": {"type": ["string", "null"],
                         "description": "Instructions added to the agent's own for this task."},
        "maxSteps": {"type": ["integer", "null"], "minimum": 3,
                     "description": "The most steps the agent may take for this task."},
    },
    "required": ["prompt"],
}

RESEARCHER = {"id": "researcher", "description": "Finds facts.", "instructions": "You research.",
              "model": "openai/gpt-4o-mini"}
WRITER = {"id": "writer", "description": "Writes prose.", "instructions": "You write.", "model": "openai/gpt-4o-mini"}
LEAD = {"id": "lead", "instructions": "You lead.", "model": "openai/gpt-4o-mini",
        "subAgents": [{"key": "research", "agentId": "researcher"}, {"key": "write", "agentId": "writer"}]}
MEMORY = {"memory": {"resource": "u1", "threadId": "t1"}}


def routed(turns: dict[str, list[Turn]]) -> Callable[[dict[str, Any]], Turn]:
    """A script step that answers each request with the next turn of the agent whose
    instructions open its prompt (the agents run concurrently on one fake)."""
    lock = threading.Lock()

    def step(body: dict[str, Any]) -> Turn:
        system = body["messages"][0]["content"]
        with lock:
            for prefix, queue in turns.items():
                if system.startswith(prefix):
                    return queue.pop(0)
        raise AssertionError(f"no agent answers the prompt {system!r}")

    return step


def write_config(tmp_path: Path, agents: list[dict[str, Any]], **sections: Any) -> Path:
    path = tmp_path / f"config-{len(list(tmp_path.iterdir()))}.json"
    path.write_text(json.dumps({"agents": agents, **sections}))
    return path


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[..., ServeProcess]]:
    procs: list[ServeProcess] = []

    def start(provider: OpenAIServer, config: Path, **env: str) -> ServeProcess:
        proc = ServeProcess("--config", str(config), env=clean_env(
            OPENAI_BASE_URL=provider.base_url, OPENAI_API_KEY="sk-test", **env))
        procs.append(proc)
        proc.wait_ready()
        return proc

    yield start
    for proc in procs:
        proc.close()


def stream(target: str, agent_id: str, prompt: str, **options: Any) -> list[dict[str, Any]]:
    """Every chunk of a ``Stream`` call, in proto JSON."""
    with grpc.insecure_channel(target) as channel:
        stub = agent_service_pb2_grpc.AgentServiceStub(channel)
        request = agent_service_pb2.StreamRequest(agent_id=agent_id, prompt=prompt)
        json_format.ParseDict(options, request.options)
        return [json_format.MessageToDict(c) for r in stub.Stream(request, timeout=60) for c in r.chunks]


def kinds(chunks: list[dict[str, Any]]) -> list[str]:
    out = []
    for c in chunks:
        kind = next(k for k in c if k not in ("runId", "from", "metadata"))
        if kind == "toolOutput":
            inner = c["toolOutput"]["output"]
            kind += ":" + next(k for k in inner if k not in ("runId", "from", "metadata"))
        out.append(kind)
    return out


def test_the_lead_delegates_to_a_local_sub_agent_and_streams_its_deltas(
    serve: Callable[..., ServeProcess], openai_server: Any, tmp_path: Path
) -> None:
    step = routed({
        "You lead.": [Turn.call("agent-research", {"prompt": "Find two facts.", "threadId": None}),
                      Turn.say(["Here is ", "the summary."])],
        "You research.": [Turn.say(["Fact one. ", "Fact two."])],
    })
    provider: OpenAIServer = openai_server([step] * 3)
    proc = serve(provider, write_config(tmp_path, [RESEARCHER, WRITER, LEAD]))

    chunks = stream(proc.target, "lead", "Summarise the facts.", **MEMORY)

    tools = {t["function"]["name"]: t["function"] for t in provider.requests[0]["tools"]}
    assert set(tools) == {"agent-research", "agent-write"}
    assert tools["agent-research"]["parameters"] == INPUT_SCHEMA == tools["agent-write"]["parameters"]
    assert tools["agent-research"]["description"] == "Finds facts."
    assert provider.requests[1]["messages"][1] == {"role": "user", "content": "Find two facts."}

    k = kinds(chunks)
    deltas = [c["toolOutput"] for c in chunks if "toolOutput" in c and "textDelta" in c["toolOutput"]["output"]]
    assert [d["output"]["textDelta"]["text"] for d in deltas] == ["Fact one. ", "Fact two."]
    assert {d["toolName"] for d in deltas} == {"agent-research"} and {tuple(d["path"]) for d in deltas} == {
        ("agent-research",)}
    call_id = next(c["toolCall"]["toolCallId"] for c in chunks if "toolCall" in c)
    assert {d["toolCallId"] for d in deltas} == {call_id}
    child_run = deltas[0]["output"]["runId"]
    assert child_run and child_run != chunks[0]["runId"]
    assert k.index("toolOutput:textDelta") < k.index("toolResult") < k.index("textDelta")
    result = next(c["toolResult"] for c in chunks if "toolResult" in c)["result"]
    assert result["text"] == "Fact one. Fact two."
    assert result["subAgentThreadId"] == f"t1-{child_run}" and result["subAgentResourceId"] == "u1-research"
    assert "".join(c["textDelta"]["text"] for c in chunks if "textDelta" in c) == "Here is the summary."
    # Only the text went back to the lead's model.
    assert provider.requests[2]["messages"][-1] == {
        "role": "tool", "tool_call_id": call_id, "content": "Fact one. Fact two."}

    # The lead's thread holds the lead's messages; the researcher's thread the researcher's.
    with grpc.insecure_channel(proc.target) as channel:
        threads = thread_service_pb2_grpc.ThreadServiceStub(channel)
        parent = threads.ListMessages(thread_service_pb2.ListMessagesRequest(resource_id="u1", thread_id="t1"))
        child = threads.ListMessages(thread_service_pb2.ListMessagesRequest(
            resource_id="u1-research", thread_id=f"t1-{child_run}"))
    assert [m.role for m in parent.messages] == [1, 2]  # user, assistant
    assert "Fact one." not in json_format.MessageToJson(parent.messages[0])
    assert [json_format.MessageToDict(m)["role"] for m in child.messages] == [
        "MESSAGE_ROLE_USER", "MESSAGE_ROLE_ASSISTANT"]
    assert "Find two facts." in json_format.MessageToJson(child.messages[0])
    assert "Fact two." in json_format.MessageToJson(child.messages[1])
