"""Signals as the framework shows and stores them (its 1.71 behaviour): one test per decision,
named after it, on SQLite and PostgreSQL, against the exact values the framework produces; and
ordered storage (a signal taken into a running run is stored between the answers around it).
Runs go to the loopback OpenAI server; waiting is on observable state, never on time.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import grpc
import pytest
from google.protobuf import json_format

from tests.support import Turn
from tests.test_thread_signals import Threads, gated_turn, threads, user_texts  # noqa: F401 (fixture)
from treadle.core.messages import Message, MessageContent, TextPart
from treadle.memory.codec import content_from_json
from treadle.signals.store import PendingSignal
from treadle.tools import Tool
from treadle.v1 import thread_service_pb2, thread_service_pb2_grpc
from treadle_client import AgentClient

Code = grpc.StatusCode
KEY = {"resourceId": "u1", "threadId": "t1"}


async def memory_call(t: Threads, method: str, body: dict[str, Any]) -> dict[str, Any]:
    """A ThreadService memory call (CreateThread, ListMessages) in proto JSON form."""
    stub = thread_service_pb2_grpc.ThreadServiceStub(t.channel)
    request = json_format.ParseDict(body, getattr(thread_service_pb2, f"{method}Request")())
    return json_format.MessageToDict(await getattr(stub, method)(request))


async def create_thread(t: Threads) -> None:
    await memory_call(t, "CreateThread", {"thread": {"id": "t1", "resourceId": "u1"}})


async def stored(t: Threads) -> list[dict[str, Any]]:
    return (await memory_call(t, "ListMessages", KEY)).get("messages", [])


def roles(messages: list[dict[str, Any]]) -> list[str]:
    return [m["role"].removeprefix("MESSAGE_ROLE_") for m in messages]


def text_of(message: dict[str, Any]) -> str:
    return "".join(p["text"]["text"] for p in message["content"].get("parts", []) if "text" in p)


def data_chunks(watch: Any, name: str = "data-signal") -> list[dict[str, Any]]:
    return [json_format.MessageToDict(c.data.data) for c in watch.chunks
            if c.HasField("data") and c.data.name == name]


async def wait_idle(watch: Any) -> None:
    """Until the last run the subscription saw has ended."""
    await watch.until(lambda w: any(w.runs()) and w.runs()[-1] == "")


# --- §6a.1 attributes render in the order the caller gave them ----------------------------------


async def test_6a_1_attributes_render_in_the_callers_order(threads: Any) -> None:
    t, server = await threads([Turn.say("a"), Turn.say("b")])
    watch = await t.subscribe("u1", "t1")
    answer = await t.call("SendMessage", {
        "agentId": "echo", **KEY,
        "message": {"contents": 'if a < b && c > d say "hi"',
                    "orderedAttributes": [{"name": "note", "value": 'x"y<z&'}, {"name": "n", "value": 3}]},
        "ifIdle": {"orderedAttributes": [{"name": "delivery", "value": "new"}, {"name": "at", "value": True}]},
    })
    assert [a["name"] for a in answer["signal"]["orderedAttributes"]] == ["note", "n", "delivery", "at"]
    await watch.idle_after(answer["accepted"]["runId"])
    assert user_texts(server.requests[0]) == [
        '<user note="x&quot;y&lt;z&amp;" n="3" delivery="new" at="true">'
        'if a &lt; b &amp;&amp; c &gt; d say "hi"</user>'
    ]
    # The Python client sends a dict's order (here against the stable order a Struct gets).
    async with AgentClient(t.running.target) as client:
        sent = await client.send_message("echo", "again", resource_id="u1", thread_id="t1",
                                         attributes={"n": 3, "from": "slack", "name": "Devin"})
    await watch.idle_after(sent.accepted.run_id)
    assert user_texts(server.requests[1])[-1] == '<user n="3" from="slack" name="Devin">again</user>'
    # The subscribers' chunk holds them as a JSON object (a Struct on the wire, without order).
    assert [d["attributes"] for d in data_chunks(watch, "data-user-message")] == [
        {"note": 'x"y<z&', "n": 3, "delivery": "new", "at": True}, {"n": 3, "from": "slack", "name": "Devin"}]


async def test_6a_1_ordered_and_struct_attributes_together_are_refused(threads: Any) -> None:
    t, server = await threads([])
    bad = [
        {"contents": "x", "attributes": {"a": 1}, "orderedAttributes": [{"name": "b", "value": 2}]},
        {"contents": "x", "orderedAttributes": [{"name": "a", "value": 1}, {"name": "a", "value": 2}]},
        {"contents": "x", "orderedAttributes": [{"name": "1bad", "value": 1}]},
    ]
    for message in bad:
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await t.call("SendMessage", {"agentId": "echo", **KEY, "message": message})
        assert info.value.code() == Code.INVALID_ARGUMENT, message
        assert "ordered_attributes" in (info.value.details() or "") or "attributes" in (info.value.details() or "")
    assert server.requests == []
    assert await t.call("GetActiveRun", KEY) == {"activeRun": {}}


# --- §6a.2 a stored signal keeps its raw contents; the XML is rendered for the prompt -----------


async def test_6a_2_a_stored_signal_keeps_raw_contents_and_metadata_signal(threads: Any) -> None:
    t, server = await threads([Turn.say("one"), Turn.say("two")])
    watch = await t.subscribe("u1", "t1")
    first = await t.call("SendMessage", {"agentId": "echo", **KEY, "message": {
        "contents": "a < b", "orderedAttributes": [{"name": "name", "value": "Devin"}, {"name": "from", "value": "slack"}]}})
    await watch.idle_after(first["accepted"]["runId"])
    [signal, _] = await stored(t)
    assert signal["role"] == "MESSAGE_ROLE_SIGNAL" and signal["type"] == "user"
    assert text_of(signal) == "a < b", "the raw contents, not the XML"
    meta = signal["content"]["metadata"]["signal"]
    assert "contents" not in meta
    assert {k: meta[k] for k in ("id", "type", "tagName", "attributes")} == {
        "id": first["signal"]["id"], "type": "user", "tagName": "user", "attributes": {"name": "Devin", "from": "slack"}}
    raw = json.loads(await _stored_json(t, signal["id"]))  # the store keeps the order
    assert list(raw["metadata"]["signal"]["attributes"]) == ["name", "from"]
    assert raw["parts"] == [{"type": "text", "text": "a < b"}]
    assert set(meta) <= {"id", "type", "tagName", "createdAt", "acceptedAt", "attributes", "metadata", "providerOptions"}
    rendered = '<user name="Devin" from="slack">a &lt; b</user>'
    assert user_texts(server.requests[0]) == [rendered]
    # The next run reads it from memory and renders it again for its prompt.
    second = await t.call("SendMessage", {"agentId": "echo", **KEY, "message": {"contents": "more"}})
    await watch.idle_after(second["accepted"]["runId"])
    assert user_texts(server.requests[1]) == [rendered, "more"]


async def _stored_json(t: Threads, message_id: str) -> str:
    """The stored content of a message, as the store holds it."""
    from sqlalchemy import select

    from treadle.memory import schema

    store = t.running.app.store
    assert store is not None
    rows = await store.engine.read(lambda conn: list(conn.execute(
        select(schema.messages.c.content).where(schema.messages.c.id == message_id)).all()))
    return str(rows[0].content)


# Two stored signals exactly as the previous version wrote them (its ``content`` column, copied
# from a store it wrote): the rendered XML as the text, a ``contents`` copy in ``metadata.signal``
# and, for a state, the channel beside the signal's fields.
OLD_USER = ('{"format":2,"parts":[{"type":"text","text":"<user name=\\"Devin\\">if a &lt; b</user>"}],'
            '"metadata":{"signal":{"id":"sig_old1","type":"user","tagName":"user","contents":"if a < b",'
            '"createdAt":"2026-12-02T01:31:34.212967+00:00","attributes":{"name":"Devin"}}}}')
OLD_STATE = ('{"format":2,"parts":[{"type":"text","text":"<state>3 tabs &amp; more</state>"}],'
             '"metadata":{"signal":{"id":"sig_old2","type":"state","tagName":"state","contents":"3 tabs & more",'
             '"createdAt":"2026-12-02T01:31:34.213144+00:00","state":{"id":"browser","version":1}}}}')


def _old_form(message_id: str, tag: str, content: str) -> Message:
    return Message(id=message_id, role="signal", type=tag, content=content_from_json(content))


async def test_6a_2_threads_stored_in_the_old_form_still_read(threads: Any) -> None:
    t, server = await threads([Turn.say("ok")])
    app = t.running.app
    assert app.store is not None
    await app.store.open_thread("u1", "t1")
    await app.store.save_messages("t1", "u1", [_old_form("sig_old1", "user", OLD_USER)])
    pending = _old_form("sig_old2", "state", OLD_STATE)
    await app.threads.store.add_pending(PendingSignal(("u1", "t1"), pending, "persisted", agent_id="echo"))
    assert json.loads(await _stored_json(t, "sig_old1")) == json.loads(OLD_USER)
    watch = await t.subscribe("u1", "t1")
    woke = await t.call("SendMessage", {"agentId": "echo", **KEY, "message": {"contents": "now"}})
    await watch.idle_after(woke["accepted"]["runId"])
    # Rendered once, never escaped twice.
    assert user_texts(server.requests[0]) == [
        '<user name="Devin">if a &lt; b</user>', "<state>3 tabs &amp; more</state>", "now"]
    [old_state] = data_chunks(watch)
    assert old_state["contents"] == "3 tabs & more" and old_state["state"] == {"id": "browser", "version": 1}
    # The thread reads on: the old messages as they were, the new ones in the new form.
    messages = await stored(t)
    assert [text_of(m) for m in messages] == [
        '<user name="Devin">if a &lt; b</user>', "3 tabs & more", "now", "ok"]


# --- §6a.3 step-start parts only between steps ---------------------------------------------------


async def test_6a_3_an_assistant_message_has_step_start_only_between_steps(threads: Any) -> None:
    lookup = Tool("lookup", lambda args, ctx: {"found": 1})
    t, server = await threads([Turn.call("lookup", {"n": 1}, text="Looking."), Turn.say("Found it.")],
                              setup=lambda app: app.add_tool(lookup), tools=["lookup"])
    watch = await t.subscribe("u1", "t1")
    woke = await t.call("SendMessage", {"agentId": "echo", **KEY, "message": {"contents": "find"}})
    await watch.idle_after(woke["accepted"]["runId"])
    [_, assistant] = await stored(t)
    kinds = [next(iter(p)) for p in assistant["content"]["parts"]]
    assert kinds == ["text", "toolInvocation", "stepStart", "text"]


# --- §6a.4 state to a thread that does not exist -------------------------------------------------


async def test_6a_4_send_state_signal_to_a_missing_thread_is_not_found(threads: Any) -> None:
    t, server = await threads([Turn.say("noted")])
    state = {"id": "browser", "cacheKey": "k1", "contents": "on the docs page", "value": {"url": "a"}}
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await t.call("SendStateSignal", {"agentId": "echo", **KEY, "state": state})
    assert info.value.code() == Code.NOT_FOUND and "t1" in (info.value.details() or "")
    assert server.requests == [], "nothing woke"
    with pytest.raises(grpc.aio.AioRpcError) as missing:
        await memory_call(t, "GetThread", KEY)
    assert missing.value.code() == Code.NOT_FOUND, "no thread was created"
    # Nothing was stored for the channel: on the created thread the same state is version 1.
    await create_thread(t)
    watch = await t.subscribe("u1", "t1")
    sent = await t.call("SendStateSignal", {"agentId": "echo", **KEY, "state": state})
    assert sent["version"] == "1" and sent["accepted"]["action"] == "SIGNAL_ACTION_WAKE"
    await watch.idle_after(sent["accepted"]["runId"])
    assert user_texts(server.requests[0]) == ["<state>on the docs page</state>"]


# --- §6a.5 data-signal chunks of state and notifications -----------------------------------------


async def test_6a_5_data_signal_chunks_carry_metadata_state_value_and_notification(threads: Any) -> None:
    t, server = await threads([Turn.say("noted"), Turn.say("seen")])
    await create_thread(t)
    watch = await t.subscribe("u1", "t1")
    value = {"activeUrl": "https://example.com", "tabCount": 3}
    sent = await t.call("SendStateSignal", {"agentId": "echo", **KEY, "state": {
        "id": "browser", "cacheKey": "k1", "contents": "3 tabs", "value": value, "metadata": {"app": "ext"}}})
    await watch.idle_after(sent["accepted"]["runId"])
    [state] = data_chunks(watch)
    assert state["metadata"] == {
        "app": "ext", "value": value,
        "state": {"id": "browser", "threadId": "t1", "cacheKey": "k1", "version": 1, "mode": "snapshot"}}
    assert "state" not in state and state["contents"] == "3 tabs"
    note = await t.call("SendNotificationSignal", {"agentId": "echo", **KEY, "notification": {
        "source": "pager", "kind": "incident", "summary": "Site down", "priority": "NOTIFICATION_PRIORITY_URGENT"}})
    await watch.idle_after(note["runId"])
    [_, delivered] = data_chunks(watch)
    assert delivered["metadata"] == {"notification": {
        "signal": "notification", "recordId": note["record"]["id"], "source": "pager", "kind": "incident",
        "priority": "urgent", "status": "delivered"}}
    assert "notification" not in delivered
    # The stored message keeps the same metadata (and no contents copy).
    info = (await stored(t))[-2]["content"]["metadata"]["signal"]
    assert info["metadata"]["notification"]["recordId"] == note["record"]["id"] and "contents" not in info


# --- §6a.6 notification record counts -------------------------------------------------------------


async def test_6a_6_coalesced_count_and_delivery_attempts(threads: Any) -> None:
    t, server = await threads([Turn.say("seen")])
    await create_thread(t)
    async with AgentClient(t.running.target) as client:
        low = {"source": "github", "kind": "star", "summary": "New star", "dedupeKey": "stars",
               "priority": "NOTIFICATION_PRIORITY_LOW"}
        first = await client.send_notification_signal("", low, resource_id="u1", thread_id="t1")
        assert first.record.coalesced_count == 0 and first.record.delivery_attempts == 0
        merged = await client.send_notification_signal("", low, resource_id="u1", thread_id="t1")
        assert merged.record.id == first.record.id and merged.record.coalesced_count == 1
        watch = await t.subscribe("u1", "t1")
        urgent = await client.send_notification_signal("echo", {
            "source": "pager", "kind": "incident", "summary": "Site down", "priority": "NOTIFICATION_PRIORITY_URGENT"},
            resource_id="u1", thread_id="t1")
        assert urgent.record.coalesced_count == 0 and urgent.record.delivery_attempts == 1
        await watch.idle_after(urgent.run_id)
        records = {r.id: r for r in await client.list_notifications("u1", "t1")}
    assert records[urgent.record.id].delivery_attempts == 1
    assert records[first.record.id].coalesced_count == 1


# --- §6a.7 low priority is summarised at once; the summary is stored in the thread -----------------


async def test_6a_7_low_priority_is_summarised_at_once_and_stored_when_idle(threads: Any) -> None:
    t, server = await threads([Turn.say("hello")])
    await create_thread(t)
    watch = await t.subscribe("u1", "t1")
    low = await t.call("SendNotificationSignal", {"agentId": "echo", **KEY, "notification": {
        "source": "github", "kind": "star", "priority": "NOTIFICATION_PRIORITY_LOW", "summary": "New star"}})
    assert low["decision"] == {"action": "NOTIFICATION_ACTION_SUMMARIZE", "rule": "built-in"}, "no summaryAt: now"
    assert low["accepted"] == {"action": "SIGNAL_ACTION_PERSIST"} and "runId" not in low
    assert low["record"]["status"] == "NOTIFICATION_STATUS_PENDING"
    assert low["record"]["summarySignalId"] == low["signal"]["id"]
    await watch.until(lambda w: len(data_chunks(w)) == 1)
    [summary] = data_chunks(watch)
    assert summary["tagName"] == "notification-summary" and summary["contents"] == "github: 1"
    assert summary["metadata"]["notification"]["signal"] == "summary"
    assert server.requests == [], "the model is not woken"
    [message] = await stored(t)
    assert message["id"] == low["signal"]["id"] and text_of(message) == "github: 1"
    assert message["type"] == "notification-summary"
    records = (await t.call("ListNotifications", KEY))["notifications"]
    assert [r["status"] for r in records] == ["NOTIFICATION_STATUS_PENDING"]
    # A later run has the summary in its history, and does not stream it again.
    woke = await t.call("SendMessage", {"agentId": "echo", **KEY, "message": {"contents": "hi"}})
    await watch.idle_after(woke["accepted"]["runId"])
    assert user_texts(server.requests[0]) == [
        '<notification-summary pending="1" priority="low">github: 1</notification-summary>', "hi"]
    assert len(data_chunks(watch)) == 1
    assert roles(await stored(t)) == ["SIGNAL", "SIGNAL", "ASSISTANT"]


async def test_6a_7_low_priority_on_a_running_thread_is_summarised_into_the_run(threads: Any) -> None:
    gate = threading.Event()
    t, server = await threads([await gated_turn(gate, Turn.say("busy")), Turn.say("noted")])
    watch = await t.subscribe("u1", "t1")
    busy = await t.call("SendMessage", {"agentId": "echo", **KEY, "message": {"contents": "work"}})
    low = await t.call("SendNotificationSignal", {"agentId": "echo", **KEY, "notification": {
        "source": "github", "kind": "star", "priority": "NOTIFICATION_PRIORITY_LOW", "summary": "New star"}})
    assert low["accepted"] == {"action": "SIGNAL_ACTION_DELIVER", "runId": busy["accepted"]["runId"]}
    assert low["record"]["status"] == "NOTIFICATION_STATUS_PENDING"
    gate.set()
    await watch.idle_after(busy["accepted"]["runId"])
    assert user_texts(server.requests[1])[-1] == (
        '<notification-summary pending="1" priority="low">github: 1</notification-summary>')


# --- ordered storage (§6b) -------------------------------------------------------------------------


class SeesTheList:
    """Records the roles of the message list at the end of the run."""

    id = "sees-the-list"

    def __init__(self) -> None:
        self.seen: list[list[str]] = []

    def process_output_result(self, args: Any) -> None:
        self.seen.append([m.role for m in args.message_list.get_all()])


async def test_ordered_storage_a_signal_delivered_into_a_run_is_stored_between_its_answers(threads: Any) -> None:
    gate = threading.Event()
    sees = SeesTheList()
    t, server = await threads([await gated_turn(gate, Turn.say("first")), Turn.say("second"), Turn.say("third")],
                              output_processors=[sees])
    watch = await t.subscribe("u1", "t1")
    woke = await t.call("SendMessage", {"agentId": "echo", **KEY, "message": {"contents": "start"}})
    delivered = await t.call("SendMessage", {"agentId": "echo", **KEY, "message": {"contents": "and this"}})
    assert delivered["accepted"] == {"action": "SIGNAL_ACTION_DELIVER", "runId": woke["accepted"]["runId"]}
    gate.set()
    await watch.idle_after(woke["accepted"]["runId"])
    messages = await stored(t)
    assert roles(messages) == ["SIGNAL", "ASSISTANT", "SIGNAL", "ASSISTANT"]
    assert [text_of(m) for m in messages] == ["start", "first", "and this", "second"]
    assert sees.seen == [["signal", "assistant", "signal", "assistant"]], "a processor sees the same order"
    # Each step-start chunk names the message its step went into.
    ids = [c.step_start.message_id for c in watch.chunks if c.HasField("step_start")]
    assert ids == [messages[1]["id"], messages[3]["id"]]
    # The next run's model sees the thread in that order.
    again = await t.call("SendMessage", {"agentId": "echo", **KEY, "message": {"contents": "next"}})
    await watch.idle_after(again["accepted"]["runId"])
    turns = [(m["role"], m["content"] if isinstance(m["content"], str) else "") for m in server.requests[2]["messages"]]
    assert turns[1:] == [("user", "start"), ("assistant", "first"), ("user", "and this"),
                         ("assistant", "second"), ("user", "next")]


def test_the_stored_form_round_trips_through_the_signal() -> None:
    """A signal read back from either stored form is the signal that was sent."""
    from treadle.signals.signal import Signal, signal_from_message

    sent = Signal(type="user", tag_name="user", contents="a < b", attributes={"z": 1, "a": 2})
    message = sent.to_message(thread_id="t1", resource_id="u1")
    assert message.content.parts == [TextPart("a < b")]
    back = signal_from_message(message)
    assert (back.contents, list(back.attributes), back.id) == ("a < b", ["z", "a"], sent.id)
    old = Message(id="x", role="signal", type="user", content=MessageContent(
        parts=[TextPart('<user z="1">a &lt; b</user>')],
        metadata={"signal": {"id": "x", "type": "user", "tagName": "user", "contents": "a < b",
                             "attributes": {"z": 1}}}))
    assert signal_from_message(old).contents == "a < b"
