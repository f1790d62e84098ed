"""Two ``treadle serve`` processes on one PostgreSQL: a replica paused (SIGSTOP) past its lease
while it runs a thread, then resumed (SIGCONT), stores nothing more; the other replica's run
is the thread's only runner from the takeover on, and the thread reads in order.

Whether the paused run was woken by a signal or is a caller's ``Generate``/``Stream`` with
memory, the same holds. Waiting is on observable state (a recorded model request, a
subscription event, an answer), never on time; the lease TTL is short (see
``test_signals_replicas``).
"""

from __future__ import annotations

import json
import signal
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import grpc
import pytest
from google.protobuf import json_format

from tests.support import OpenAIServer, Turn
from tests.test_cli import READY_TIMEOUT
from tests.test_signals_replicas import THREAD, Replica, held_turn, replicas  # noqa: F401 - replicas is a fixture
from tests.test_signals_serve import until, user_texts
from treadle.v1 import agent_service_pb2, agent_service_pb2_grpc

MEMORY = {"memory": {"resource": THREAD["resourceId"], "threadId": THREAD["threadId"]}}


def start_run(replica: Replica, started: str, pool: ThreadPoolExecutor) -> Future[Any] | None:
    """Start a run on the thread on ``replica``: woken by a message, or a caller's call."""
    if started == "wake":
        woke = replica.call("SendMessage", {"agentId": "echo", **THREAD, "message": {"contents": "start"}})
        assert woke["accepted"]["action"] == "SIGNAL_ACTION_WAKE"
        return None
    stub = agent_service_pb2_grpc.AgentServiceStub(replica.channel)
    body = {"agentId": "echo", "prompt": "start", "options": MEMORY}
    if started == "generate":
        request = json_format.ParseDict(body, agent_service_pb2.GenerateRequest())
        return pool.submit(stub.Generate, request, timeout=READY_TIMEOUT)
    stream = json_format.ParseDict(body, agent_service_pb2.StreamRequest())
    return pool.submit(lambda: [c for r in stub.Stream(stream, timeout=READY_TIMEOUT) for c in r.chunks])


def texts(messages: list[dict[str, Any]]) -> list[str]:
    return ["".join(p.get("text", {}).get("text", "") for p in m["content"].get("parts", [])) for m in messages]


@pytest.mark.parametrize("started", ["wake", "generate", "stream"])
def test_a_replica_paused_past_its_lease_stores_nothing_and_the_other_runs_the_thread(
    replicas: Any, openai_server: Any, started: str,  # noqa: F811
) -> None:
    entered, release = threading.Event(), threading.Event()
    server: OpenAIServer = openai_server([held_turn(entered, release, Turn.say("from the paused replica")),
                                          Turn.say("from the replica that took over"), Turn.say("third")])
    a, b = replicas(server), replicas(server)
    watch = b.subscribe()
    with ThreadPoolExecutor(2) as pool:
        call = start_run(a, started, pool)
        paused = False
        try:
            assert entered.wait(READY_TIMEOUT)  # A's run waits for the model
            run_id = a.active()
            assert run_id and b.active() == run_id
            a.proc.proc.send_signal(signal.SIGSTOP)
            paused = True
            # Accepted for A's run, which never takes it in: whoever takes the thread over runs it.
            late = b.call("SendMessage", {"agentId": "echo", **THREAD, "message": {"contents": "while A is paused"}})
            assert late["accepted"]["action"] == "SIGNAL_ACTION_DELIVER"
            assert not late["accepted"]["runId"].startswith("takeover_")
            until(lambda: len(server.requests) == 2)  # B took the thread over and runs the message
            watch.until(lambda w: len([r for r in w.runs() if r]) == 2 and w.runs()[-1] == "")
            taken = [r for r in watch.runs() if r][-1]
            assert taken != run_id and watch.text(taken) == "from the replica that took over"
        finally:
            release.set()  # A's model call answers while A is paused
            if paused:
                a.proc.proc.send_signal(signal.SIGCONT)
        # A, resumed, has its reply but no lease: its writes are refused, its run ends.
        until(lambda: a.active() != run_id)
        if call is not None:
            try:
                answer = call.result(timeout=READY_TIMEOUT)
            except grpc.RpcError as e:
                assert e.code() == grpc.StatusCode.ABORTED, e  # stopped: it lost the lease
            else:
                if started == "generate":
                    assert answer.error.message, "the run stored nothing: it failed"
                else:
                    assert any(c.HasField("abort") or c.HasField("error") for c in answer), answer
    messages = b.call("ListMessages", THREAD)["messages"]
    assert "from the paused replica" not in json.dumps(messages), "\n".join(a.proc.stderr[-30:])
    assert texts(messages) == ["start", "while A is paused", "from the replica that took over"]
    assert user_texts(server.requests[1]) == ["start", "while A is paused"]
    runs = {r["id"]: r["status"] for r in b.call("ListRuns", THREAD)["runs"]}
    assert runs == {run_id: "RUN_STATUS_FAILED", taken: "RUN_STATUS_FINISHED"}, "no run is left running"
    # The thread is free, on either replica: a message to A wakes one run (a third request).
    again = a.call("SendMessage", {"agentId": "echo", **THREAD, "message": {"contents": "and now"}})
    assert again["accepted"]["action"] == "SIGNAL_ACTION_WAKE"
    until(lambda: a.active() == "" and b.active() == "" and len(server.requests) == 3)
    watch.close()
