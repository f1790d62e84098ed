"""The Go SDK's agent client against a real server, in a Go process.

``clients/go/internal/agentclient`` (built once per session) streams an answer, reads a
tripwire from ``Generate``, creates a thread, subscribes to it and sends a message into it with
``SendMessage``: the idle thread wakes a run, the subscription sees it start, stream and end,
and the model's request carries the message as ``<user from="slack" name="Devin">`` (the
attributes in the order the Go list gave them); then it
reads the thread back, sends state and a notification that wake nothing, and makes, changes and
deletes an agent. The model is the wire-level OpenAI fake.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from tests.conftest import StartApp
from tests.seed_processors import ContentFilter
from tests.support import OpenAIServer, Turn
from tests.support.go import GoBuild
from treadle.agents import Agent
from treadle.core.messages import SystemMessage


async def test_go_agent_client_streams_trips_and_wakes_a_thread(
    go_build: GoBuild, start_app: StartApp, openai_server: Any,
) -> None:
    binary = go_build("agentclient")
    model: OpenAIServer = openai_server([Turn.say(["Once ", "upon a time."]), Turn.say(["Hi ", "Devin"])])

    def agents(app: Any) -> None:
        common = {"model": "openai/gpt-4o-mini", "base_url": model.base_url,
                  "instructions": [SystemMessage("You are terse.")]}
        app.add_agent(Agent(id="echo", name="Echo", **common))
        app.add_agent(Agent(id="guarded", name="Guarded", input_processors=[ContentFilter(["secret"])], **common))

    running = await start_app(setup=agents)
    proc = await asyncio.create_subprocess_exec(
        str(binary), running.target, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    stdout, stderr = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, stderr.decode()
    out = json.loads(stdout)

    assert out["stream_text"] == "Once upon a time."
    assert out["tripwire"] == {"reason": "Blocked content detected in input", "processor_id": "content-filter"}
    assert out["thread_title"] == "API review"
    assert out["active_before"] == ""
    assert out["action"] == "SIGNAL_ACTION_WAKE" and out["run_id"]
    assert out["active_runs"] == [out["run_id"], ""]  # the woken run started, then ended
    assert out["subscribed_text"] == "Hi Devin"
    assert out["roles"] == ["MESSAGE_ROLE_SIGNAL", "MESSAGE_ROLE_ASSISTANT"]
    assert out["active_after"] == ""
    assert out["runs"] == ["RUN_STATUS_FINISHED"]
    assert out["titles"] == ["API review, round 2"]
    assert out["state"] == ["SIGNAL_ACTION_PERSIST", True, "unchanged"]
    assert out["signal"] == "SIGNAL_ACTION_PERSIST"
    assert out["notification"] == "NOTIFICATION_ACTION_SUMMARIZE" and out["pending"] == ["ci-status"]
    assert out["aborted"] is False
    assert out["updated"] == {"name": "Made in Go", "description": "from Go"}
    assert sorted(out["agents"]) == ["echo", "guarded", "made-in-go"]
    assert out["after_delete"] == "NotFound"
    # Two model calls (the guarded agent never reached the model); the second is the woken run's.
    assert len(model.requests) == 2
    users = [m["content"] for m in model.requests[1]["messages"] if m["role"] == "user"]
    assert users == ['<user from="slack" name="Devin">Can we simplify the API surface?</user>']
