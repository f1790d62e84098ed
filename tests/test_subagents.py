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
from treadle.v1 import agent_service_pb2, agent_service_pb2_grpc, signal_pb2, thread_service_pb2, thread_service_pb2_grpc

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
        "agents": [{"key": "research", "agentId": "researcher"}, {"key": "write", "agentId": "writer"}]}
MEMORY = {"memory": {"resource": "u1", "threadId": "t1"}}


Step = Turn | Callable[[dict[str, Any]], Turn]


def routed(turns: dict[str, list[Step]]) -> Callable[[dict[str, Any]], Turn]:
    """A script step that answers each request with the next turn of the agent whose
    instructions open its prompt (one fake serves every agent of both servers)."""
    lock = threading.Lock()

    def step(body: dict[str, Any]) -> Turn:
        system = body["messages"][0]["content"]
        with lock:
            queue = next((q for prefix, q in turns.items() if system.startswith(prefix)), None)
            assert queue, f"no agent answers the prompt {system!r}"
            turn = queue.pop(0)
        return turn if isinstance(turn, Turn) else turn(body)

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
    [child_run_record] = runs(proc.target, "u1-research", f"t1-{child_run}")
    assert child_run_record["parentRunId"] == chunks[0]["runId"] and child_run_record["parentToolCallId"] == call_id
    assert "parentRunId" not in runs(proc.target, "u1", "t1")[0]


CLIENT = """
import json, sys, grpc
from google.protobuf import json_format
from treadle.v1 import agent_service_pb2, agent_service_pb2_grpc
channel = grpc.insecure_channel(sys.argv[1])
stub = agent_service_pb2_grpc.AgentServiceStub(channel)
request = agent_service_pb2.StreamRequest(agent_id="lead", prompt="Dig deep.")
request.options.memory.resource, request.options.memory.thread_id = "u1", "t1"
for response in stub.Stream(request):
    for chunk in response.chunks:
        print(json.dumps(json_format.MessageToDict(chunk)), flush=True)
"""


def runs(target: str, resource: str, thread: str) -> list[dict[str, Any]]:
    with grpc.insecure_channel(target) as channel:
        stub = thread_service_pb2_grpc.ThreadServiceStub(channel)
        response = stub.ListRuns(thread_service_pb2.ListRunsRequest(resource_id=resource, thread_id=thread))
    return [json_format.MessageToDict(r) for r in response.runs]


def wait_for(check: Callable[[], Any], timeout: float = READY_TIMEOUT) -> Any:
    deadline = time.monotonic() + timeout
    while (value := check()) is None or value is False:
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)
    return value


def remote_lead(**ref: Any) -> dict[str, Any]:
    return {**LEAD, "agents": [{"key": "research", "remote": {"target": "research-box", "agentId": "researcher"},
                                   **ref}]}


def test_killing_the_client_cancels_the_remote_sub_agents_run_on_the_second_server(
    serve: Callable[..., ServeProcess], openai_server: Any, tmp_path: Path
) -> None:
    step = routed({
        "You lead.": [Turn.call("agent-research", {"prompt": "Dig."})],
        "You research.": [Turn.say(["word "] * 600, pace=0.05)],  # 30 s unless cancelled
    })
    provider: OpenAIServer = openai_server([step] * 2)
    remote = serve(provider, write_config(tmp_path, [RESEARCHER]))
    parent = serve(provider, write_config(tmp_path, [remote_lead()],
                                          remoteServers={"research-box": {"endpoint": remote.target}}))
    client = subprocess.Popen([sys.executable, "-c", CLIENT, parent.target], stdout=subprocess.PIPE, text=True,
                              cwd=ROOT)
    try:
        assert client.stdout is not None
        seen: list[dict[str, Any]] = []
        for line in client.stdout:
            seen.append(json.loads(line))
            if len([c for c in seen if "textDelta" in c.get("toolOutput", {}).get("output", {})]) == 3:
                break
        client.send_signal(signal.SIGKILL)
        client.wait(timeout=READY_TIMEOUT)
    finally:
        if client.poll() is None:
            client.kill()
    child_run = next(c["toolOutput"]["output"]["runId"] for c in seen if "toolOutput" in c)

    started = time.monotonic()
    [run] = wait_for(lambda: [r for r in runs(remote.target, "u1-research", f"t1-{child_run}")
                              if r["status"] != "RUN_STATUS_RUNNING"] or None)
    assert run["id"] == child_run and run["agentId"] == "researcher"
    assert run["parentRunId"] == seen[0]["runId"]  # the delegating run on the first server
    assert run["status"] == "RUN_STATUS_ABORTED" and time.monotonic() - started < 20
    [parent_run] = wait_for(lambda: [r for r in runs(parent.target, "u1", "t1")
                                     if r["status"] != "RUN_STATUS_RUNNING"] or None)
    assert parent_run["status"] == "RUN_STATUS_ABORTED"


def test_a_remote_sub_agent_streams_into_the_parent_and_both_servers_share_one_trace(
    serve: Callable[..., ServeProcess], openai_server: Any, tmp_path: Path
) -> None:
    step = routed({
        "You lead.": [Turn.call("agent-research", {"prompt": "Dig.", "instructions": "Be brief."}),
                      Turn.say("Done.")],
        "You research.": [Turn.say(["Deep ", "fact."])],
    })
    provider: OpenAIServer = openai_server([step] * 3)
    otlp = OtlpReceiver()
    try:
        tracing = {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": otlp.endpoint, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf",
                   "OTEL_BSP_SCHEDULE_DELAY": "50"}
        remote = serve(provider, write_config(tmp_path, [RESEARCHER]), OTEL_SERVICE_NAME="research", **tracing)
        parent = serve(provider, write_config(tmp_path, [remote_lead(description="Digs for facts.")],
                                              remoteServers={"research-box": {"endpoint": remote.target}}),
                       OTEL_SERVICE_NAME="lead", **tracing)

        chunks = stream(parent.target, "lead", "Go.", **MEMORY)

        tools = {t["function"]["name"]: t["function"] for t in provider.requests[0]["tools"]}
        assert tools == {"agent-research": {"name": "agent-research", "description": "Digs for facts.",
                                            "parameters": INPUT_SCHEMA}}
        # The model's instructions reach the remote agent after its own.
        assert [m["content"] for m in provider.requests[1]["messages"][:2]] == ["You research.", "Be brief."]
        k = kinds(chunks)
        assert k.index("toolOutput:textDelta") < k.index("toolResult") < k.index("textDelta")
        result = next(c["toolResult"] for c in chunks if "toolResult" in c)["result"]
        assert result["text"] == "Deep fact." and result["subAgentResourceId"] == "u1-research"

        def both() -> Any:
            spans = {sp.name: sp for sp in otlp.spans()}
            return spans if {"invoke_agent lead", "invoke_agent researcher"} <= set(spans) else None

        spans = wait_for(both)
        lead, child = spans["invoke_agent lead"], spans["invoke_agent researcher"]
        assert child.trace_id == lead.trace_id
        tool = spans["execute_tool agent-research"]
        assert tool.trace_id == lead.trace_id and child.parent_span_id == tool.span_id
    finally:
        otlp.close()


def test_sub_agents_nest_three_deep_with_a_path_of_keys(
    serve: Callable[..., ServeProcess], openai_server: Any, tmp_path: Path
) -> None:
    researcher = {**RESEARCHER, "subAgents": [{"key": "write", "agentId": "writer"}]}
    step = routed({
        "You lead.": [Turn.call("agent-research", {"prompt": "Research and write."}), Turn.say("Final.")],
        "You research.": [Turn.call("agent-write", {"prompt": "Write it."}), Turn.say("Written up.")],
        "You write.": [Turn.say(["Once ", "upon."])],
    })
    provider: OpenAIServer = openai_server([step] * 5)
    proc = serve(provider, write_config(tmp_path, [researcher, WRITER, LEAD]))

    chunks = stream(proc.target, "lead", "Go.")

    nested = [c["toolOutput"] for c in chunks if c.get("toolOutput", {}).get("path") == ["agent-research", "agent-write"]]
    texts = [n["output"]["toolOutput"]["output"]["textDelta"]["text"] for n in nested
             if "textDelta" in n["output"]["toolOutput"]["output"]]
    assert texts == ["Once ", "upon."]
    assert all(n["toolName"] == "agent-research" and n["output"]["toolOutput"]["toolName"] == "agent-write"
               for n in nested)
    # The researcher's own text and its tool result arrive with a path of one key.
    shallow = [c["toolOutput"]["output"] for c in chunks if c.get("toolOutput", {}).get("path") == ["agent-research"]]
    assert "".join(o["textDelta"]["text"] for o in shallow if "textDelta" in o) == "Written up."
    assert [o["toolResult"]["result"]["text"] for o in shallow if "toolResult" in o] == ["Once upon."]
    assert next(c["toolResult"] for c in chunks if "toolResult" in c)["result"]["text"] == "Written up."
    assert "".join(c["textDelta"]["text"] for c in chunks if "textDelta" in c) == "Final."


def test_a_sub_agent_that_trips_ends_the_tool_call_with_an_error_not_the_parent_run(
    serve: Callable[..., ServeProcess], openai_server: Any, tmp_path: Path
) -> None:
    guarded = {**RESEARCHER, "outputProcessors": [{"builtin": "pii", "options": {"strategy": "block"}}]}
    step = routed({
        "You lead.": [Turn.call("agent-research", {"prompt": "Who to mail?"}), Turn.say("I cannot share that.")],
        "You research.": [Turn.say(["Mail ", "bob@example.com today."])],
    })
    provider: OpenAIServer = openai_server([step] * 3)
    proc = serve(provider, write_config(tmp_path, [guarded, LEAD]))

    chunks = stream(proc.target, "lead", "Go.")

    assert "tripwire" in [k.split(":")[1] for k in kinds(chunks) if k.startswith("toolOutput:")]
    error = next(c["toolError"] for c in chunks if "toolError" in c)
    assert error["toolName"] == "agent-research" and error["error"].startswith("sub-agent 'research' tripped:")
    assert "tripwire" not in chunks[-1] and chunks[-1]["finish"]["reason"] == "FINISH_REASON_STOP"
    assert "".join(c["textDelta"]["text"] for c in chunks if "textDelta" in c) == "I cannot share that."
    assert provider.requests[2]["messages"][-1]["content"].startswith("sub-agent 'research' tripped:")


def test_subscribers_see_the_sub_agents_chunks_and_abort_run_ends_it_on_the_second_server(
    serve: Callable[..., ServeProcess], openai_server: Any, tmp_path: Path
) -> None:
    step = routed({
        "You lead.": [Turn.call("agent-research", {"prompt": "Dig."})],
        "You research.": [Turn.say(["word "] * 600, pace=0.05)],  # 30 s unless cancelled
    })
    provider: OpenAIServer = openai_server([step] * 2)
    remote = serve(provider, write_config(tmp_path, [RESEARCHER]))
    parent = serve(provider, write_config(tmp_path, [remote_lead()],
                                          remoteServers={"research-box": {"endpoint": remote.target}}))
    seen: list[dict[str, Any]] = []
    caller: list[Any] = []
    with grpc.insecure_channel(parent.target) as channel:
        threads = thread_service_pb2_grpc.ThreadServiceStub(channel)
        subscription = threads.SubscribeToThread(
            signal_pb2.SubscribeToThreadRequest(resource_id="u1", thread_id="t1"))
        next(subscription)  # the first response: the thread is idle

        def watch() -> None:
            try:
                for response in subscription:
                    seen.extend(json_format.MessageToDict(c) for c in response.chunks)
            except grpc.RpcError:
                pass  # cancelled below

        def call() -> None:
            try:
                caller.extend(stream(parent.target, "lead", "Dig deep.", **MEMORY))
            except grpc.RpcError as e:
                caller.append(e)

        watcher, client = threading.Thread(target=watch), threading.Thread(target=call)
        watcher.start()
        client.start()
        try:
            wait_for(lambda: len([c for c in seen if "textDelta" in c.get("toolOutput", {}).get("output", {})]) >= 3)
            [active] = runs(parent.target, "u1", "t1")
            threads.AbortRun(signal_pb2.AbortRunRequest(resource_id="u1", thread_id="t1"))
            client.join(READY_TIMEOUT)
        finally:
            subscription.cancel()
            watcher.join(READY_TIMEOUT)
    child_run = next(c["toolOutput"]["output"]["runId"] for c in seen if "toolOutput" in c)
    assert {c["toolOutput"]["path"][0] for c in seen if "toolOutput" in c} == {"agent-research"}
    assert active["status"] == "RUN_STATUS_RUNNING"
    [run] = wait_for(lambda: [r for r in runs(remote.target, "u1-research", f"t1-{child_run}")
                              if r["status"] != "RUN_STATUS_RUNNING"] or None)
    assert run["status"] == "RUN_STATUS_ABORTED"
    assert [r["status"] for r in runs(parent.target, "u1", "t1")] == ["RUN_STATUS_ABORTED"]
    assert caller and "abort" in caller[-1]  # the caller's stream ends with the abort chunk


@pytest.mark.parametrize(("sub_agent", "says"), [
    ({"key": "re search", "agentId": "researcher"}, "key 're search' is malformed"),
    ({"key": "research"}, "set exactly one of agentId and remote"),
    ({"key": "research", "remote": {"target": "box", "agentId": "researcher"}},
     "remote.target: 'box' is not one of this server's remoteServers (none configured)"),
    ({"key": "lookup", "agentId": "researcher"}, "the tool 'agent-lookup' collides with a tool of the agent"),
    ({"key": "research", "agentId": "researcher", "maxSteps": 0}, "maxSteps must be at least 1"),
])
async def test_a_malformed_sub_agent_is_invalid_argument_and_nothing_is_stored(
    start_app: Any, sub_agent: dict[str, Any], says: str
) -> None:
    running = await start_app()
    agent = {"id": "lead", "model": "openai/gpt-4o-mini", "tools": ["agent-lookup"], "subAgents": [sub_agent]}
    async with grpc.aio.insecure_channel(running.target) as channel:
        stub = agent_service_pb2_grpc.AgentServiceStub(channel)
        request = agent_service_pb2.CreateAgentRequest()
        json_format.ParseDict({"agent": agent}, request)
        with pytest.raises(grpc.aio.AioRpcError) as e:
            await stub.CreateAgent(request)
        listed = await stub.ListAgents(agent_service_pb2.ListAgentsRequest())
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT and says in (e.value.details() or ""), e.value.details()
    assert list(listed.agents) == []


def test_a_config_file_naming_an_unknown_remote_server_stops_serve(tmp_path: Path) -> None:
    config = write_config(tmp_path, [remote_lead()], remoteServers={"other": {"endpoint": "127.0.0.1:1"}})
    done = subprocess.run([str(ROOT / ".venv/bin/treadle"), "serve", "--config", str(config), "--listen", "127.0.0.1:0"],
                          capture_output=True, text=True, env=clean_env(), timeout=60)
    assert done.returncode == 2
    assert "remote.target: 'research-box' is not one of this server's remoteServers (other)" in done.stderr


def test_treadle_chat_shows_who_is_speaking(serve: Callable[..., ServeProcess], openai_server: Any,
                                            tmp_path: Path) -> None:
    researcher = {**RESEARCHER, "subAgents": [{"key": "write", "agentId": "writer"}]}
    step = routed({
        "You lead.": [Turn.call("agent-research", {"prompt": "Research and write."}), Turn.say("Final.")],
        "You research.": [Turn.call("agent-write", {"prompt": "Write it."}), Turn.say(["Written ", "up."])],
        "You write.": [Turn.say(["Once ", "upon."])],
    })
    provider: OpenAIServer = openai_server([step] * 5)
    proc = serve(provider, write_config(tmp_path, [researcher, WRITER, LEAD]))

    done = subprocess.run([str(ROOT / ".venv/bin/treadle"), "chat", "lead", "Go.", "--target", proc.target],
                          capture_output=True, text=True, env=clean_env(), timeout=60)

    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:5] == [
        '→ tool agent-research({"prompt": "Research and write."})',
        '  research: → tool agent-write({"prompt": "Write it."})',
        "  research › write: Once upon.",
        '  research: ← agent-write: {"text": "Once upon."}',
        "  research: Written up.",
    ]
    assert lines[5].startswith('← agent-research: {"subAgentToolResults": [{"args": {"prompt": "Write it."}')
    assert lines[5].endswith('"text": "Written up."}') and lines[6:] == ["Final."]


def test_the_parents_deadline_cancels_a_local_sub_agents_run(
    serve: Callable[..., ServeProcess], openai_server: Any, tmp_path: Path
) -> None:
    step = routed({
        "You lead.": [Turn.call("agent-research", {"prompt": "Dig."})],
        "You research.": [Turn.say(["word "] * 600, pace=0.05)],  # 30 s unless cancelled
    })
    provider: OpenAIServer = openai_server([step] * 2)
    proc = serve(provider, write_config(tmp_path, [RESEARCHER, LEAD]))
    seen: list[dict[str, Any]] = []
    with grpc.insecure_channel(proc.target) as channel:
        request = agent_service_pb2.StreamRequest(agent_id="lead", prompt="Dig deep.")
        json_format.ParseDict(MEMORY, request.options)
        with pytest.raises(grpc.RpcError) as e:
            for response in agent_service_pb2_grpc.AgentServiceStub(channel).Stream(request, timeout=3):
                seen.extend(json_format.MessageToDict(c) for c in response.chunks)
    assert e.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    child_run = next(c["toolOutput"]["output"]["runId"] for c in seen if "toolOutput" in c)
    [run] = wait_for(lambda: [r for r in runs(proc.target, "u1-research", f"t1-{child_run}")
                              if r["status"] != "RUN_STATUS_RUNNING"] or None)
    assert run["status"] == "RUN_STATUS_ABORTED"
    assert [r["status"] for r in runs(proc.target, "u1", "t1")] == ["RUN_STATUS_ABORTED"]


def test_a_remote_server_over_tls_with_a_token_from_the_config(
    serve: Callable[..., ServeProcess], openai_server: Any, tmp_path: Path
) -> None:
    import hashlib

    from tests.support.certs import TestCA

    ca = TestCA(tmp_path)
    pair = ca.issue("research-box", server=True)
    token = "research-token-123"
    step = routed({
        "You lead.": [Turn.call("agent-research", {"prompt": "Dig."}), Turn.say("Done.")],
        "You research.": [Turn.say(["Deep ", "fact."])],
    })
    provider: OpenAIServer = openai_server([step] * 3)
    auth = {"credentials": [{"id": "lead-server", "tokenSha256": hashlib.sha256(token.encode()).hexdigest(),
                             "agents": ["researcher"], "resources": ["u1-*"]}]}
    remote = ServeProcess("--config", str(write_config(tmp_path, [RESEARCHER], auth=auth)),
                          "--tls-cert", str(pair.cert), "--tls-key", str(pair.key),
                          env=clean_env(OPENAI_BASE_URL=provider.base_url, OPENAI_API_KEY="sk-test"))
    try:
        remote.wait_for_line(remote.stdout, "Treadle listening on")
        config = write_config(tmp_path, [remote_lead()], remoteServers={"research-box": {
            "endpoint": remote.target, "tokenEnv": "RESEARCH_TOKEN", "tls": {"caFile": str(ca.cert)}}})
        parent = serve(provider, config, RESEARCH_TOKEN=token)

        chunks = stream(parent.target, "lead", "Go.", **MEMORY)

        result = next(c["toolResult"] for c in chunks if "toolResult" in c)
        assert not result.get("isError") and result["result"]["text"] == "Deep fact.", result
        child_run = next(c["toolOutput"]["output"]["runId"] for c in chunks if "toolOutput" in c)
        creds = grpc.ssl_channel_credentials(ca.cert.read_bytes())
        with grpc.secure_channel(remote.target, creds) as channel:
            listed = thread_service_pb2_grpc.ThreadServiceStub(channel).ListRuns(
                thread_service_pb2.ListRunsRequest(resource_id="u1-research", thread_id=f"t1-{child_run}"),
                metadata=[("authorization", f"Bearer {token}")])
        assert [r.status for r in listed.runs] == [thread_service_pb2.RUN_STATUS_FINISHED]
    finally:
        remote.close()
