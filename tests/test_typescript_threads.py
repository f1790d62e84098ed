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
    assert user_texts(server.requests[0]) == ['<user name="Devin" from="slack">hello</user>']
    assert report.pop("signalId")
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
        "note": {"action": "summarize", "priority": "low", "status": "pending"},
        "inbox": ["New star"],
        "activeAfter": None,
        "abortedIdle": False,
        "renamed": ["Renamed", {"pinned": True}],
        "listed": ["notes", "thread-abc"],
        "gone": "NotFound",
    }
