"""The TypeScript SDK's thread calls against a real server: the agent client's thread and signal
calls (``tests/remote/ts/thread_signals.ts``), and a TypeScript processor seeing a signal
delivered into a running run as a message in its next ``processInputStep``
(``tests/remote/ts/step_watcher.ts``). Both run as separate Node processes; the model is the
wire-level OpenAI fake, which holds a run active between its steps where a test needs one."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

from tests.remote.procs import Child
from tests.support import Turn
from tests.test_thread_signals import THREAD, Threads, threads, user_texts  # noqa: F401
from tests.test_typescript_sdk import NODE_TSX, ROOT, TS_CLIENT, _run_script
from treadle.agents import ProcessorRef


async def test_the_agent_client_subscribes_sends_the_pages_message_and_sees_the_woken_run(threads: Any) -> None:
    t: Threads
    t, server = await threads([Turn.say(["Hi ", "Devin"])])
    report = json.loads(await _run_script("thread_signals.ts", t.running.target))
    assert report.pop("text") == "Hi Devin"  # the subscriber saw the woken run's text
    assert report.pop("finishReason") == "stop"  # the framework's chunk shapes, as stream() gives
    # The object's key order is the order the model sees (not the stable order of a Struct).
    assert user_texts(server.requests[0]) == ['<user from="slack" name="Devin">hello</user>']
    assert report.pop("signalId")
    assert report.pop("attributeOrder") == ["from", "name"]
    assert report == {
        "idleBefore": None,
        "accepted": {"action": "wake", "hasRunId": True},
        "activeDuringRun": True,
        "signalType": "user",
        "kinds": ["data-user-message"],
        "stored": ["SIGNAL", "ASSISTANT"],  # the thread remembers the signal and the answer
        "persisted": {"skipped": False, "action": "persist"},
        "again": {"skipped": True, "reason": "unchanged"},
        "bogus": "InvalidArgument",
        # A new record, summarised at once (it stays pending): the framework's counts.
        "note": {"action": "summarize", "priority": "low", "status": "pending", "coalescedCount": 0,
                 "deliveryAttempts": 0},
        "inbox": ["New star"],
        "activeAfter": None,
        "abortedIdle": False,
        "renamed": ["Renamed", {"pinned": True}],
        "listed": ["notes", "thread-abc"],
        "gone": "NotFound",
    }


async def test_a_typescript_processor_sees_a_delivered_signal_in_its_next_process_input_step(threads: Any) -> None:
    gate, asked = threading.Event(), threading.Event()

    def held(_: dict[str, Any]) -> Turn:
        """The run's first model call: answered once the test has delivered the signal."""
        asked.set()
        assert gate.wait(10), "the test never opened the gate"
        return Turn.say("first")

    t: Threads
    t, server = await threads([held, Turn.say("second")], input_processors=[ProcessorRef("step-watcher")])
    proc = await asyncio.create_subprocess_exec(
        *NODE_TSX, str(ROOT / "tests" / "remote" / "ts" / "step_watcher.ts"), t.running.target, cwd=TS_CLIENT,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
    )
    watcher = Child(proc)
    try:
        await watcher.expect("ready")
        assert await t.running.app.processors.wait_attached("step-watcher", 30)
        watch = await t.subscribe("u1", "t1")
        woke = await t.call("SendMessage", {"agentId": "echo", "resourceId": "u1", "threadId": "t1",
                                            "message": {"contents": "start"}})
        run_id = woke["accepted"]["runId"]
        assert await asyncio.to_thread(asked.wait, 10)  # step 0 is at the model: the run is active
        answer = await t.call("SendMessage", {
            "agentId": "echo", "resourceId": "u1", "threadId": "t1",
            "message": {"contents": "hello", "attributes": {"name": "Devin", "from": "slack"}},
        })
        assert answer["accepted"] == {"action": "SIGNAL_ACTION_DELIVER", "runId": run_id}
        gate.set()
        await watch.idle_after(run_id)
        steps = [json.loads((await watcher.expect("step ")).removeprefix("step ")) for _ in range(2)]
    finally:
        await watcher.close()
    assert [s["stepNumber"] for s in steps] == [0, 1]
    start = {"role": "signal", "type": "user", "text": "start"}
    assert steps[0]["messages"] == [start]
    # A processor sees a signal as the framework stores it: its raw contents, the attributes in
    # its metadata; the model sees it rendered.
    assert steps[1]["messages"] == [start, {"role": "assistant", "text": "first"}, {
        "role": "signal", "type": "user", "attributes": {"name": "Devin", "from": "slack"}, "text": "hello",
    }]
    assert user_texts(server.requests[1])[-1] == '<user name="Devin" from="slack">hello</user>'
