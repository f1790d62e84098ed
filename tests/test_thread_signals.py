"""Thread signals over gRPC: one test per example of the Agent page's signals section, and the
acceptance contract. Runs go to the loopback OpenAI server; what the model was sent is read
from its recorded requests. Waiting is on observable state (a subscription event), never on time.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import grpc
import pytest
from google.protobuf import json_format

from tests.conftest import RunningApp, StartApp
from tests.support import OpenAIServer, Turn
from tests.support.databases import Database
from treadle.agents import Agent, NotificationPolicy, NotificationRule
from treadle.core.messages import SystemMessage
from treadle.signals import DecideArgs
from treadle.tools import Tool
from treadle.v1 import signal_pb2, thread_service_pb2_grpc

Code = grpc.StatusCode
THREAD = {"resourceId": "user-123", "threadId": "thread-abc"}


def user_texts(request: dict[str, Any]) -> list[str]:
    """The user-role contents of one recorded Chat Completions request."""
    out = []
    for m in request["messages"]:
        if m["role"] == "user":
            content = m["content"]
            out.append(content if isinstance(content, str) else "".join(p.get("text", "") for p in content))
    return out


@dataclass
class Watch:
    """A thread subscription read in the background: every chunk and active-run change."""

    responses: list[signal_pb2.SubscribeToThreadResponse] = field(default_factory=list)
    changed: asyncio.Condition = field(default_factory=asyncio.Condition)

    @property
    def chunks(self) -> list[Any]:
        return [c for r in self.responses for c in r.chunks]

    def text(self, run_id: str = "") -> str:
        return "".join(c.text_delta.text for c in self.chunks
                       if c.HasField("text_delta") and (not run_id or c.run_id == run_id))

    def runs(self) -> list[str]:
        """Active-run ids in the order they were announced (empty for 'idle')."""
        return [r.active_run.run_id for r in self.responses if r.HasField("active_run")]

    async def until(self, check: Callable[[Watch], Any], timeout: float = 10) -> None:
        async def wait() -> None:
            async with self.changed:
                await self.changed.wait_for(lambda: check(self))

        await asyncio.wait_for(wait(), timeout)

    async def idle_after(self, run_id: str) -> None:
        """The run ``run_id`` started and then ended."""
        def ended(w: Watch) -> bool:
            runs = w.runs()
            return run_id in runs and "" in runs[runs.index(run_id) + 1:]

        await self.until(ended)


class Threads:
    def __init__(self, running: RunningApp, channel: grpc.aio.Channel) -> None:
        self.running = running
        self.channel = channel
        self.stub = thread_service_pb2_grpc.ThreadServiceStub(channel)
        self._tasks: list[asyncio.Task[None]] = []

    async def call(self, method: str, body: dict[str, Any]) -> dict[str, Any]:
        """A unary call in proto JSON form, answered in proto JSON form."""
        rpc = getattr(self.stub, method)
        request = json_format.ParseDict(body, getattr(signal_pb2, f"{method}Request")())
        response = await rpc(request)
        return json_format.MessageToDict(response)

    async def subscribe(self, resource_id: str = "user-123", thread_id: str = "thread-abc") -> Watch:
        watch = Watch()
        call = self.stub.SubscribeToThread(signal_pb2.SubscribeToThreadRequest(
            resource_id=resource_id, thread_id=thread_id))
        first = asyncio.Event()

        async def read() -> None:
            async for response in call:
                async with watch.changed:
                    watch.responses.append(response)
                    watch.changed.notify_all()
                first.set()

        self._tasks.append(asyncio.create_task(read()))
        await first.wait()  # subscribed: the first response is the thread's state
        return watch

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


@pytest.fixture
async def threads(
    database: Database, start_app: StartApp, openai_server: Callable[..., OpenAIServer],
) -> AsyncIterator[Callable[..., Any]]:
    """``await threads(script, setup=fn, **agent)``: a server (on SQLite, then PostgreSQL) with
    the agent ``echo`` on a loopback OpenAI server, and a ThreadService client. ``database``
    comes first so that its schema outlives the app (fixtures end in reverse order)."""
    opened: list[tuple[Threads, grpc.aio.Channel]] = []

    async def make(script: list[Any], setup: Callable[[Any], None] | None = None, **agent: Any) -> tuple[Threads, OpenAIServer]:
        server = openai_server(script)

        def configure(app: Any) -> None:
            agent.setdefault("tools", [])
            app.add_agent(Agent(id="echo", name="Echo", model="openai/gpt-4o-mini", base_url=server.base_url,
                                instructions=[SystemMessage("You are terse.")], **agent))
            if setup is not None:
                setup(app)

        running = await start_app(setup=configure, **database.settings)
        channel = grpc.aio.insecure_channel(running.target)
        t = Threads(running, channel)
        opened.append((t, channel))
        return t, server

    yield make
    for t, channel in opened:
        await t.close()
        await channel.close()


async def gated_turn(gate: threading.Event, turn: Turn) -> Callable[[dict[str, Any]], Turn]:
    def play(_: dict[str, Any]) -> Turn:
        assert gate.wait(10), "the test never opened the gate"
        return turn

    return play


# --- the acceptance contract ---------------------------------------------------------------------


async def test_send_message_wakes_an_idle_thread_and_the_subscriber_sees_the_run(threads: Any) -> None:
    t, server = await threads([Turn.say(["Hi ", "Devin"])])
    watch = await t.subscribe("u1", "t1")
    answer = await t.call("SendMessage", {
        "agentId": "echo", "resourceId": "u1", "threadId": "t1",
        "message": {"contents": "hello", "attributes": {"name": "Devin", "from": "slack"}},
        "ifIdle": {"behavior": "IDLE_BEHAVIOR_WAKE"},
    })
    assert answer["accepted"]["action"] == "SIGNAL_ACTION_WAKE"
    run_id = answer["accepted"]["runId"]
    assert run_id and answer["signal"]["id"]
    await watch.idle_after(run_id)
    assert watch.text(run_id) == "Hi Devin"
    signal_chunks = [c for c in watch.chunks if c.HasField("data") and c.data.name == "data-user-message"]
    assert [c.data.id for c in signal_chunks] == [answer["signal"]["id"]]
    assert user_texts(server.requests[0]) == ['<user name="Devin" from="slack">hello</user>']


async def test_send_message_while_active_is_delivered_into_the_running_loop(threads: Any) -> None:
    gate = threading.Event()
    t, server = await threads([await gated_turn(gate, Turn.say("first")), Turn.say("second")])
    watch = await t.subscribe("u1", "t1")
    woke = await t.call("SendMessage", {"agentId": "echo", "resourceId": "u1", "threadId": "t1",
                                        "message": {"contents": "start"}})
    run_id = woke["accepted"]["runId"]
    answer = await t.call("SendMessage", {
        "agentId": "echo", "resourceId": "u1", "threadId": "t1",
        "message": {"contents": "hello", "attributes": {"name": "Devin", "from": "slack"}},
    })
    assert answer["accepted"] == {"action": "SIGNAL_ACTION_DELIVER", "runId": run_id}
    gate.set()
    await watch.idle_after(run_id)
    assert len(server.requests) == 2, "the delivered message is a turn of the same run"
    assert user_texts(server.requests[0]) == ["start"]
    assert user_texts(server.requests[1]) == ["start", '<user name="Devin" from="slack">hello</user>']
    assert watch.text(run_id) == "firstsecond"


async def create_thread(t: Threads, resource_id: str, thread_id: str) -> None:
    """State lives in an existing thread."""
    from treadle.v1 import thread_service_pb2

    await t.stub.CreateThread(thread_service_pb2.CreateThreadRequest(
        thread=thread_service_pb2.Thread(id=thread_id, resource_id=resource_id)))


async def test_a_second_state_signal_with_the_same_cache_key_is_skipped(threads: Any) -> None:
    t, server = await threads([Turn.say("ok")])
    await create_thread(t, "u1", "t1")
    watch = await t.subscribe("u1", "t1")
    body = {"agentId": "echo", "resourceId": "u1", "threadId": "t1",
            "state": {"id": "browser", "cacheKey": "k1", "mode": "STATE_MODE_SNAPSHOT", "value": {"url": "a"}}}
    first = await t.call("SendStateSignal", body)
    assert first["accepted"]["action"] == "SIGNAL_ACTION_WAKE" and first["version"] == "1"
    await watch.idle_after(first["accepted"]["runId"])
    second = await t.call("SendStateSignal", body)
    assert second == {"skipped": True, "reason": "unchanged", "version": "1"}
    assert len(server.requests) == 1


async def test_an_unknown_signal_type_is_invalid_argument(threads: Any) -> None:
    t, server = await threads([])
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await t.call("SendSignal", {"agentId": "echo", "resourceId": "u1", "threadId": "t1",
                                    "signal": {"type": "bogus"}})
    assert info.value.code() == Code.INVALID_ARGUMENT and "bogus" in (info.value.details() or "")
    assert server.requests == []


async def test_bad_targets_and_attribute_names_are_refused(threads: Any) -> None:
    t, server = await threads([])
    cases = [
        ({"agentId": "echo", "threadId": "t1", "message": {"contents": "x"}}, Code.INVALID_ARGUMENT),
        ({"agentId": "nobody", "resourceId": "u1", "threadId": "t1", "message": {"contents": "x"}}, Code.NOT_FOUND),
        ({"agentId": "echo", "runId": "run_gone", "message": {"contents": "x"}}, Code.NOT_FOUND),
        ({"agentId": "echo", "resourceId": "u1", "threadId": "t1",
          "message": {"contents": "x", "attributes": {"1bad": "v"}}}, Code.INVALID_ARGUMENT),
        ({"resourceId": "u1", "threadId": "t1", "message": {"contents": "x"}}, Code.INVALID_ARGUMENT),
    ]
    for body, code in cases:
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await t.call("SendMessage", body)
        assert info.value.code() == code, body
    assert server.requests == []
    assert (await t.call("GetActiveRun", {"resourceId": "u1", "threadId": "t1"})) == {"activeRun": {}}


# --- the page's examples ---------------------------------------------------------------------


async def test_subscribe_then_send_message_with_if_idle_stream_options_max_steps(threads: Any) -> None:
    calls = [Turn.call("lookup", {"n": i}) for i in range(3)]  # a 4th would be never asked for
    lookup = Tool("lookup", lambda args, ctx: {"found": args["n"]})
    t, server = await threads(calls, setup=lambda app: app.add_tool(lookup), tools=["lookup"])
    watch = await t.subscribe()
    answer = await t.call("SendMessage", {
        "agentId": "echo", **THREAD, "message": {"contents": "Use the latest customer note too."},
        "ifIdle": {"streamOptions": {"maxSteps": 3}},
    })
    await watch.idle_after(answer["accepted"]["runId"])
    assert len(server.requests) == 3, "the woken run used if_idle.stream_options.max_steps"
    assert user_texts(server.requests[0]) == ["Use the latest customer note too."]
    kinds = [c.WhichOneof("chunk") for c in watch.chunks]
    assert kinds[0] == "start" and kinds[-1] == "finish"


async def test_attributes_identify_users_of_a_shared_thread(threads: Any) -> None:
    t, server = await threads([Turn.say("Sure.")])
    watch = await t.subscribe()
    answer = await t.call("SendMessage", {
        "agentId": "echo", **THREAD,
        "message": {"contents": "Can we simplify the API surface?", "attributes": {"name": "Devin", "from": "slack"}},
    })
    await watch.idle_after(answer["accepted"]["runId"])
    assert user_texts(server.requests[0]) == ['<user name="Devin" from="slack">Can we simplify the API surface?</user>']
    chunk = next(c for c in watch.chunks if c.HasField("data"))
    data = json_format.MessageToDict(chunk.data.data)
    assert data["attributes"] == {"name": "Devin", "from": "slack"} and data["contents"] == "Can we simplify the API surface?"


async def test_if_active_and_if_idle_attributes(threads: Any) -> None:
    gate = threading.Event()
    t, server = await threads([await gated_turn(gate, Turn.say("a")), Turn.say("b")])
    watch = await t.subscribe()
    body = {"agentId": "echo", **THREAD,
            "message": {"contents": "Also cover the edge cases.", "attributes": {"source": "chat"}},
            "ifActive": {"attributes": {"delivery": "while-active"}},
            "ifIdle": {"attributes": {"delivery": "new-message"}}}
    idle = await t.call("SendMessage", body)
    active = await t.call("SendMessage", body)
    assert active["accepted"]["action"] == "SIGNAL_ACTION_DELIVER"
    gate.set()
    await watch.idle_after(idle["accepted"]["runId"])
    assert user_texts(server.requests[1]) == [
        '<user source="chat" delivery="new-message">Also cover the edge cases.</user>',
        '<user source="chat" delivery="while-active">Also cover the edge cases.</user>',
    ]


async def test_continue_with_the_next_step_wakes_with_behavior_wake(threads: Any) -> None:
    t, server = await threads([Turn.say("Next.")])
    watch = await t.subscribe()
    answer = await t.call("SendMessage", {"agentId": "echo", **THREAD, "message": {"contents": "Continue with the next step."},
                                          "ifIdle": {"behavior": "IDLE_BEHAVIOR_WAKE", "streamOptions": {"maxSteps": 3}}})
    await watch.idle_after(answer["accepted"]["runId"])
    assert watch.text() == "Next."


async def test_persist_and_discard_run_nothing_and_persisted_messages_join_the_next_run(threads: Any) -> None:
    t, server = await threads([Turn.say("ok")])
    watch = await t.subscribe()
    persisted = await t.call("SendMessage", {"agentId": "echo", **THREAD, "message": {"contents": "remember me"},
                                             "ifIdle": {"behavior": "IDLE_BEHAVIOR_PERSIST"}})
    assert persisted["accepted"] == {"action": "SIGNAL_ACTION_PERSIST"}
    dropped = await t.call("SendMessage", {"agentId": "echo", **THREAD, "message": {"contents": "forget me"},
                                           "ifIdle": {"behavior": "IDLE_BEHAVIOR_DISCARD"}})
    assert dropped["accepted"] == {"action": "SIGNAL_ACTION_DISCARD"}
    assert server.requests == []
    woke = await t.call("SendMessage", {"agentId": "echo", **THREAD, "message": {"contents": "now"}})
    await watch.idle_after(woke["accepted"]["runId"])
    assert user_texts(server.requests[0]) == ["remember me", "now"]


async def test_queue_message_while_active_runs_after_the_current_run_as_its_own_run(threads: Any) -> None:
    gate = threading.Event()
    t, server = await threads([await gated_turn(gate, Turn.say("one")), Turn.say("two")])
    watch = await t.subscribe()
    first = await t.call("SendMessage", {"agentId": "echo", **THREAD, "message": {"contents": "first"}})
    queued = await t.call("QueueMessage", {"agentId": "echo", **THREAD,
                                           "message": {"contents": "Also check whether the tests need updates."}})
    assert queued["accepted"] == {"action": "SIGNAL_ACTION_PERSIST"}
    gate.set()
    await watch.until(lambda w: len([r for r in w.runs() if r]) == 2 and w.runs()[-1] == "")
    runs = [r for r in watch.runs() if r]
    assert runs[0] == first["accepted"]["runId"] and runs[1] != runs[0]
    assert user_texts(server.requests[0]) == ["first"]
    assert user_texts(server.requests[1])[-1] == "Also check whether the tests need updates."
    assert watch.text(runs[1]) == "two"


async def test_queue_message_on_an_idle_thread_wakes_at_once(threads: Any) -> None:
    t, server = await threads([Turn.say("done")])
    watch = await t.subscribe()
    answer = await t.call("QueueMessage", {"agentId": "echo", **THREAD, "message": {"contents": "go"}})
    assert answer["accepted"]["action"] == "SIGNAL_ACTION_WAKE"
    await watch.idle_after(answer["accepted"]["runId"])
    assert watch.text() == "done"


async def test_send_signal_with_a_tag_name_and_the_legacy_system_reminder(threads: Any) -> None:
    t, server = await threads([Turn.say("a"), Turn.say("b")])
    watch = await t.subscribe()
    review = await t.call("SendSignal", {"agentId": "echo", **THREAD,
                                         "signal": {"type": "notification", "tagName": "github-review", "contents": "LGTM"}})
    await watch.idle_after(review["accepted"]["runId"])
    reminder = await t.call("SendSignal", {"agentId": "echo", **THREAD,
                                           "signal": {"type": "system-reminder", "contents": "be brief"}})
    assert reminder["signal"]["type"] == "reactive" and reminder["signal"]["tagName"] == "system-reminder"
    await watch.idle_after(reminder["accepted"]["runId"])
    assert user_texts(server.requests[0]) == ["<github-review>LGTM</github-review>"]
    # The thread remembers: the second run's request holds the first exchange, then the reminder.
    assert user_texts(server.requests[1]) == ["<github-review>LGTM</github-review>", "<system-reminder>be brief</system-reminder>"]


async def test_browser_state_signal(threads: Any) -> None:
    t, server = await threads([Turn.say("noted"), Turn.say("noted again")])
    await create_thread(t, "user-123", "thread-abc")
    watch = await t.subscribe()
    state = {"id": "browser", "mode": "STATE_MODE_SNAPSHOT", "cacheKey": "browser:https://example.com:3-tabs",
             "contents": "Browser is open. Active tab URL: https://example.com. 3 open tabs.",
             "value": {"activeUrl": "https://example.com", "tabCount": 3, "open": True}}
    first = await t.call("SendStateSignal", {"agentId": "echo", **THREAD, "state": state})
    await watch.idle_after(first["accepted"]["runId"])
    assert (await t.call("SendStateSignal", {"agentId": "echo", **THREAD, "state": state}))["skipped"] is True
    changed = {**state, "cacheKey": "browser:https://example.com:4-tabs", "contents": "4 open tabs."}
    third = await t.call("SendStateSignal", {"agentId": "echo", **THREAD, "state": changed})
    assert third["version"] == "2"
    await watch.idle_after(third["accepted"]["runId"])
    assert user_texts(server.requests[0]) == [f"<state>{state['contents']}</state>"]
    assert user_texts(server.requests[1])[-1] == "<state>4 open tabs.</state>"


async def test_ci_notification_merged_by_dedupe_key(threads: Any) -> None:
    gate = threading.Event()
    t, server = await threads([await gated_turn(gate, Turn.say("busy")), Turn.say("seen"), Turn.say("fixed")])
    watch = await t.subscribe()
    busy = await t.call("SendMessage", {"agentId": "echo", **THREAD, "message": {"contents": "work"}})
    note = {"source": "github", "kind": "ci-status", "priority": "NOTIFICATION_PRIORITY_HIGH",
            "summary": "CI failed on main: 3 tests failed.", "dedupeKey": "github:acme/app:main:ci"}
    first = await t.call("SendNotificationSignal", {"agentId": "echo", **THREAD, "notification": note})
    # High priority on a running thread: a summary now, the full record once the thread is idle.
    assert first["decision"]["action"] == "NOTIFICATION_ACTION_SUMMARIZE"
    assert first["accepted"]["action"] == "SIGNAL_ACTION_DELIVER"
    again = await t.call("SendNotificationSignal", {"agentId": "echo", **THREAD, "notification": {
        **note, "summary": "CI failed on main: 4 tests failed."}})
    assert again["record"]["id"] == first["record"]["id"] and again["record"]["coalescedCount"] == 1
    gate.set()
    await watch.until(lambda w: len([r for r in w.runs() if r]) == 2 and w.runs()[-1] == "")
    records = (await t.call("ListNotifications", THREAD))["notifications"]
    assert len(records) == 1 and records[0]["status"] == "NOTIFICATION_STATUS_DELIVERED"
    rid = records[0]["id"]
    assert '<notification-summary pending="1" priority="high">github: 1</notification-summary>' in user_texts(server.requests[1])
    assert user_texts(server.requests[2])[-1] == (
        f'<notification id="{rid}" source="github" type="ci-status" kind="ci-status" priority="high" '
        'status="delivered">CI failed on main: 4 tests failed.</notification>'
    )
    assert busy["accepted"]["runId"] in watch.runs()


async def test_low_priority_summary_at_policy(threads: Any) -> None:
    def low_later(args: DecideArgs) -> Any:
        if args.record.priority == "low":
            return {"action": "summarize", "summaryAt": args.now + timedelta(milliseconds=300)}
        return None

    policy = NotificationPolicy(priorities={"urgent": NotificationRule("deliver")}, decide="support")
    t, server = await threads([Turn.say("urgent seen")], notification_policy=policy,
                              setup=lambda app: app.add_notification_decider("support", low_later))
    watch = await t.subscribe()
    low = await t.call("SendNotificationSignal", {"agentId": "echo", **THREAD, "notification": {
        "source": "github", "kind": "star", "priority": "NOTIFICATION_PRIORITY_LOW", "summary": "New star"}})
    assert low["decision"]["action"] == "NOTIFICATION_ACTION_SUMMARIZE" and "summaryAt" in low["decision"]
    assert "signal" not in low and low["record"]["status"] == "NOTIFICATION_STATUS_PENDING"
    # The dispatcher sends the summary when it is due: subscribers see it, the model is not woken.
    await watch.until(lambda w: any(c.HasField("data") and c.data.name == "data-signal" for c in w.chunks))
    chunk = next(c for c in watch.chunks if c.HasField("data"))
    assert json_format.MessageToDict(chunk.data.data)["tagName"] == "notification-summary"
    assert server.requests == []
    records = (await t.call("ListNotifications", THREAD))["notifications"]
    assert records[0]["status"] == "NOTIFICATION_STATUS_PENDING", "summarised, not yet delivered in full"
    urgent = await t.call("SendNotificationSignal", {"agentId": "echo", **THREAD, "notification": {
        "source": "pager", "kind": "incident", "priority": "NOTIFICATION_PRIORITY_URGENT", "summary": "Site down"}})
    assert urgent["decision"] == {"action": "NOTIFICATION_ACTION_DELIVER", "rule": "priority"}
    await watch.idle_after(urgent["runId"])
    texts = user_texts(server.requests[0])
    assert texts[0] == '<notification-summary pending="1" priority="low">github: 1</notification-summary>'
    assert texts[1].startswith("<notification ") and texts[1].endswith(">Site down</notification>")


async def test_abort_run_and_get_active_run(threads: Any) -> None:
    gate, asked = threading.Event(), threading.Event()

    def held(_: dict[str, Any]) -> Turn:
        asked.set()
        assert gate.wait(10)
        return Turn.say("never")

    t, server = await threads([held])
    watch = await t.subscribe()
    woke = await t.call("SendMessage", {"agentId": "echo", **THREAD, "message": {"contents": "go"}})
    run_id = woke["accepted"]["runId"]
    assert await asyncio.to_thread(asked.wait, 10)  # the model call is in flight
    active = await t.call("GetActiveRun", THREAD)
    assert active == {"activeRun": {"runId": run_id, "agentId": "echo"}}
    aborted = await t.call("AbortRun", THREAD)
    assert aborted == {"aborted": True, "runId": run_id}
    gate.set()
    await watch.idle_after(run_id)
    assert any(c.HasField("abort") for c in watch.chunks)
    assert (await t.call("GetActiveRun", THREAD)) == {"activeRun": {}}
    assert (await t.call("AbortRun", THREAD)) == {}


async def test_a_stream_call_on_a_thread_is_its_active_run(threads: Any) -> None:
    from treadle.v1 import agent_service_pb2, agent_service_pb2_grpc

    gate = threading.Event()
    t, server = await threads([await gated_turn(gate, Turn.say("one")), Turn.say("two")])
    watch = await t.subscribe("u1", "t1")
    stub = agent_service_pb2_grpc.AgentServiceStub(t.channel)
    request = json_format.ParseDict({"agentId": "echo", "prompt": "hi", "options": {
        "memory": {"resource": "u1", "threadId": "t1"}}}, agent_service_pb2.StreamRequest())
    call = stub.Stream(request)
    await watch.until(lambda w: any(w.runs()))
    run_id = next(r for r in watch.runs() if r)
    answer = await t.call("SendMessage", {"agentId": "echo", "resourceId": "u1", "threadId": "t1",
                                          "message": {"contents": "and this"}})
    assert answer["accepted"] == {"action": "SIGNAL_ACTION_DELIVER", "runId": run_id}
    gate.set()
    chunks = [c for response in [r async for r in call] for c in response.chunks]
    assert "".join(c.text_delta.text for c in chunks if c.HasField("text_delta")) == "onetwo"
    assert [c.data.name for c in chunks if c.HasField("data")] == ["data-user-message"]
    assert user_texts(server.requests[1]) == ["hi", "and this"]
    await watch.idle_after(run_id)
    assert watch.text(run_id) == "onetwo"


async def test_a_generate_call_on_a_thread_is_its_active_run(threads: Any) -> None:
    from treadle.v1 import agent_service_pb2, agent_service_pb2_grpc

    gate = threading.Event()
    t, server = await threads([await gated_turn(gate, Turn.say("one")), Turn.say("two")])
    watch = await t.subscribe("u1", "t1")
    stub = agent_service_pb2_grpc.AgentServiceStub(t.channel)
    request = json_format.ParseDict({"agentId": "echo", "prompt": "hi", "options": {
        "memory": {"resource": "u1", "threadId": "t1"}}}, agent_service_pb2.GenerateRequest())
    call = stub.Generate(request)
    await watch.until(lambda w: any(w.runs()))
    run_id = next(r for r in watch.runs() if r)
    assert (await t.call("GetActiveRun", {"resourceId": "u1", "threadId": "t1"}))["activeRun"]["runId"] == run_id
    answer = await t.call("SendMessage", {"agentId": "echo", "resourceId": "u1", "threadId": "t1",
                                          "message": {"contents": "and this"}})
    assert answer["accepted"] == {"action": "SIGNAL_ACTION_DELIVER", "runId": run_id}
    gate.set()
    result = await call
    assert result.text == "onetwo" and result.run_id == run_id
    assert user_texts(server.requests[1]) == ["hi", "and this"]
    await watch.idle_after(run_id)
    assert watch.text(run_id) == "onetwo", "subscribers see a Generate run's chunks too"


async def test_a_subscriber_resumes_from_its_position_with_what_it_missed(threads: Any) -> None:
    t, server = await threads([Turn.say("first"), Turn.say("second")])
    watch = await t.subscribe()
    one = await t.call("SendMessage", {"agentId": "echo", **THREAD, "message": {"contents": "one"}})
    await watch.idle_after(one["accepted"]["runId"])
    position = watch.responses[-1].position  # the response saying the run ended: past it
    assert position and watch.responses[-1].HasField("active_run")
    await t.close()  # the subscriber goes away ...

    two = await t.call("SendMessage", {"agentId": "echo", **THREAD, "message": {"contents": "two"}})
    async def idle() -> None:  # ... while a whole run runs
        while (await t.call("GetActiveRun", THREAD))["activeRun"]:
            await asyncio.sleep(0.02)

    await asyncio.wait_for(idle(), 10)
    assert len(server.requests) == 2

    replayed: list[signal_pb2.SubscribeToThreadResponse] = []
    call = t.stub.SubscribeToThread(signal_pb2.SubscribeToThreadRequest(
        resource_id=THREAD["resourceId"], thread_id=THREAD["threadId"], position=position))
    async for response in call:
        replayed.append(response)
        if response.HasField("active_run"):
            break
    call.cancel()
    texts = [p.text.text for r in replayed for m in r.messages for p in m.content.parts if p.HasField("text")]
    assert texts == ["two", "second"]  # not the run it saw
    [end] = [c for r in replayed for c in r.chunks]
    assert end.run_id == two["accepted"]["runId"] and end.HasField("finish")
    assert replayed[-1].position != position

    with pytest.raises(grpc.aio.AioRpcError) as bad:
        async for _ in t.stub.SubscribeToThread(signal_pb2.SubscribeToThreadRequest(
                resource_id=THREAD["resourceId"], thread_id=THREAD["threadId"], position="v1.x")):
            pass
    assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "position" in str(bad.value.details())
