"""The store on both engines: migrations, threads, ordered upserts, paging, runs, agents."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
from collections.abc import AsyncIterator

import pytest

from tests.support.claims import claim, open_claimed
from tests.support.databases import Database
from treadle.core.chunks import Usage
from treadle.core.errors import AlreadyExistsError, NotFoundError, PermissionDeniedError
from treadle.memory import PageRequest, SqlStore, StoredAgent, Thread, database_url, open_store
from treadle.memory.migrate import current_revision, head
from treadle.core.messages import (
    DataPart,
    ErrorPart,
    FilePart,
    Message,
    MessageContent,
    ReasoningPart,
    SourcePart,
    StepStartPart,
    TextPart,
    ToolInvocationPart,
    copy_message,
)


@pytest.fixture
async def store(database: Database) -> AsyncIterator[SqlStore]:
    s = await open_store(database.url)
    yield s
    await s.close()


def every_part() -> list:
    return [
        StepStartPart("openai/gpt-4o-mini"),
        ReasoningPart("thinking", signature="sig", redacted_data=b"\x00\x01"),
        TextPart("hello", provider_metadata={"openai": {"id": "x"}}),
        FilePart("image/png", data=b"\x89PNG", filename="a.png"),
        FilePart("text/plain", url="https://example.com/a.txt"),
        SourcePart("url", "s1", url="https://example.com", title="Example"),
        ToolInvocationPart("c1", "lookup", args={"q": 1}, state="result", result={"n": [1, 2]}),
        ToolInvocationPart("c2", "fail", args={}, state="output-error", is_error=True, error_text="boom"),
        ErrorPart("APICallError", "bad"),
        DataPart("data-moderation", data={"level": "warn"}, id="m1"),
    ]


async def test_migrations_run_twice_and_stay_at_head(database: Database) -> None:
    for _ in range(2):
        s = await open_store(database.url)
        assert await current_revision(s.db) == head()
        await s.close()


def test_two_processes_migrating_one_database_at_once(database: Database) -> None:
    # Both processes connect, then wait for the same line on stdin, so their upgrades overlap.
    code = (
        "import asyncio, sys\n"
        "from treadle.memory import open_store\n"
        "from treadle.memory.migrate import current_revision\n"
        "async def main():\n"
        "    sys.stdin.readline()\n"
        "    s = await open_store(sys.argv[1])\n"
        "    print(await current_revision(s.db))\n"
        "    await s.close()\n"
        "asyncio.run(main())\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", code, database.url], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    for p in procs:
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err for _, err in outs]
    assert [out.strip() for out, _ in outs] == [head(), head()]


async def test_every_part_round_trips_in_order(store: SqlStore) -> None:
    await store.open_thread("u1", "t1")
    message = Message("m1", "assistant", MessageContent(every_part(), metadata={"k": [1, "x"]}))
    await store.save_messages("t1", "u1", [Message.user("hi", id="m0"), message])
    [first, second] = await store.load_history("t1", 10)
    assert first.id == "m0" and first.text == "hi"
    assert second.content == message.content
    assert (second.thread_id, second.resource_id, second.role) == ("t1", "u1", "assistant")


async def test_upsert_keeps_a_message_in_its_place(store: SqlStore) -> None:
    await store.open_thread("u1", "t1")
    a, b = Message.user("a", id="a"), Message.assistant("b", id="b")
    await store.save_messages("t1", "u1", [a, b])
    a.content.parts.append(TextPart(" again"))
    await store.save_messages("t1", "u1", [a, Message.user("c", id="c")])
    assert [(m.id, m.text) for m in await store.load_history("t1", 10)] == [
        ("a", "a again"), ("b", "b"), ("c", "c")
    ]
    assert [m.id for m in await store.load_history("t1", 2)] == ["b", "c"]
    assert await store.load_history("t1", 0) == []
    await store.save_messages("t1", "u1", [], delete_ids=["b"])
    assert [m.id for m in await store.load_history("t1", 10)] == ["a", "c"]


async def test_same_message_id_in_two_threads_are_two_messages(store: SqlStore) -> None:
    await store.open_thread("u1", "t1")
    await store.open_thread("u2", "t2")
    await store.save_messages("t1", "u1", [Message.user("one", id="m")])
    await store.save_messages("t2", "u2", [Message.user("two", id="m")])
    assert [m.text for m in await store.load_history("t1", 10)] == ["one"]
    assert [m.text for m in await store.load_history("t2", 10)] == ["two"]


async def test_thread_of_another_resource_is_refused_and_nothing_written(store: SqlStore) -> None:
    await store.open_thread("u1", "t1", title="mine")
    with pytest.raises(PermissionDeniedError, match="another resource"):
        await store.open_thread("u2", "t1", title="theirs")
    thread = await store.get_thread("t1")
    assert thread is not None and (thread.resource_id, thread.title) == ("u1", "mine")
    assert (await store.list_threads("u2", PageRequest(10, 1 << 20))).items == []


async def test_open_thread_creates_then_updates_title_and_metadata(store: SqlStore) -> None:
    created = await store.open_thread("u1", "t1", title="First", metadata={"a": 1})
    again = await store.open_thread("u1", "t1")  # no title given: kept
    assert (again.title, again.metadata) == ("First", {"a": 1})
    updated = await store.open_thread("u1", "t1", title="Second", metadata={"b": 2})
    assert (updated.title, updated.metadata) == ("Second", {"b": 2})
    assert updated.created_at == created.created_at and updated.updated_at >= created.updated_at
    stored = await store.get_thread("t1")
    assert stored is not None and (stored.title, stored.metadata) == ("Second", {"b": 2})


async def test_threads_list_newest_update_first_and_page(store: SqlStore) -> None:
    for i in range(5):
        await store.create_thread(Thread(f"t{i}", "u1", title=f"T{i}"))
    await store.save_messages("t2", "u1", [Message.user("bump")])  # t2 is now the newest
    seen, cursor = [], None
    while True:
        page = await store.list_threads("u1", PageRequest(2, 1 << 20, cursor))
        seen += [t.id for t in page.items]
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert seen == ["t2", "t4", "t3", "t1", "t0"]
    with pytest.raises(AlreadyExistsError):
        await store.create_thread(Thread("t1", "u1"))


async def test_message_pages_are_bounded_in_bytes_and_never_empty(store: SqlStore) -> None:
    await store.open_thread("u1", "t1")
    huge = "x" * 5000
    await store.save_messages("t1", "u1", [Message.user(huge, id=f"m{i}") for i in range(4)])
    page = await store.list_messages("t1", PageRequest(100, 6000))
    assert [m.id for m in page.items] == ["m0"] and page.next_cursor is not None
    tiny = await store.list_messages("t1", PageRequest(100, 10, page.next_cursor))
    assert [m.id for m in tiny.items] == ["m1"]  # one row larger than the budget is still a page
    rest = await store.list_messages("t1", PageRequest(100, 1 << 20, tiny.next_cursor))
    assert [m.id for m in rest.items] == ["m2", "m3"] and rest.next_cursor is None


async def test_runs_are_recorded_newest_first(store: SqlStore) -> None:
    await store.open_thread("u1", "t1")
    await store.start_run("r1", "agent", "t1", "u1")
    await store.end_run("r1", "finished", "stop", Usage(1, 2, 3))
    await store.start_run("r2", "agent", "t1", "u1")
    page = await store.list_runs("t1", PageRequest(10, 1 << 20))
    assert [(r.id, r.status) for r in page.items] == [("r2", "running"), ("r1", "finished")]
    r1 = page.items[1]
    assert r1.finish_reason == "stop" and r1.usage == Usage(1, 2, 3) and r1.ended_at is not None


async def test_a_run_keeps_its_steps_and_hook_counts_from_its_end(store: SqlStore) -> None:
    from treadle.processors.stats import RunStats

    await store.open_thread("u1", "t1")
    await store.start_run("r1", "agent", "t1", "u1")
    stats = RunStats()
    stats.hook("pii", "processInput", 0.002, "continue")
    stats.begin_step(1)
    for i in range(300):  # one entry per step, processor and hook, never one per chunk
        stats.hook("upper", "processOutputStream", 0.0001, "drop" if i == 7 else "continue")
    stats.end_step("stop", Usage(5, 7, 12), "gpt-4o-mini")
    await store.end_run("r1", "finished", "stop", Usage(5, 7, 12), detail=stats.detail())
    await store.start_run("r2", "agent", "t1", "u1")
    r2, r1 = (await store.list_runs("t1", PageRequest(10, 1 << 20))).items
    assert r2.detail == {}  # still running: nothing recorded yet
    (step,) = r1.detail["steps"]
    assert (step["number"], step["finish_reason"], step["model"]) == (1, "stop", "gpt-4o-mini")
    assert step["usage"]["output_tokens"] == 7 and step["ended_us"] >= step["started_us"] > 0
    hooks = {(h["step"], h["processor_id"], h["hook"]): h for h in r1.detail["hooks"]}
    assert set(hooks) == {(0, "pii", "processInput"), (1, "upper", "processOutputStream")}
    stream = hooks[(1, "upper", "processOutputStream")]
    assert stream["count"] == 300 and stream["outcomes"] == {"continue": 299, "drop": 1}
    assert stream["seconds"] == pytest.approx(0.03)


async def test_a_taken_run_id_is_already_exists_and_writes_nothing(store: SqlStore) -> None:
    from treadle.core.errors import AlreadyExistsError

    await store.open_thread("u1", "t1")
    await store.start_run("r1", "agent", "t1", "u1")
    with pytest.raises(AlreadyExistsError, match="run id 'r1' is taken"):
        await store.begin_run("r1", "agent", "u2", "t2", title=None, metadata=None, history=0)
    assert (await store.list_threads("u2", PageRequest(10, 1 << 20))).items == []  # the thread was not opened


async def test_the_end_of_a_run_whose_lease_was_taken_is_refused_and_writes_nothing(store: SqlStore) -> None:
    """A run ends with one statement that checks its lease: once another replica took the
    thread (a new epoch), the end is refused and the run stays as the new owner will find it."""
    from datetime import timedelta

    from treadle.memory.fence import LeaseLostError, current_fence
    from treadle.memory.signal_sql import SqlSignalStore
    from treadle.memory.signal_records import Lease
    from treadle.core.messages import utcnow

    leases, now = SqlSignalStore(store.engine), utcnow()
    mine = await leases.acquire_lease(Lease(("u1", "t1"), "replica-a", "r1", "agent", now + timedelta(seconds=1)), now)
    token = current_fence.set(mine)
    try:
        await store.begin_run("r1", "agent", "u1", "t1", title=None, metadata=None, history=0)
        later = now + timedelta(seconds=2)  # expired: another replica takes the thread
        theirs = await leases.acquire_lease(Lease(("u1", "t1"), "replica-b", "r2", "agent", later), later)
        assert theirs.epoch == mine.epoch + 1
        with pytest.raises(LeaseLostError):
            await store.end_run("r1", "finished", "stop", Usage())
    finally:
        current_fence.reset(token)
    [run] = (await store.list_runs("t1", PageRequest(10, 1 << 20))).items
    assert (run.status, run.ended_at) == ("running", None)
    token = current_fence.set(theirs)  # the lease's holder ends it (as a takeover reconciles it)
    try:
        await store.end_run("r1", "failed", "error", Usage())
    finally:
        current_fence.reset(token)
    [run] = (await store.list_runs("t1", PageRequest(10, 1 << 20))).items
    assert run.status == "failed" and run.ended_at is not None


async def test_delete_thread_takes_its_messages_and_runs(store: SqlStore) -> None:
    await store.open_thread("u1", "t1")
    await store.save_messages("t1", "u1", [Message.user("hi")])
    await store.start_run("r1", "agent", "t1", "u1")
    await store.delete_thread("t1")
    assert await store.get_thread("t1") is None
    assert await store.count_messages("t1") == 0
    assert (await store.list_runs("t1", PageRequest(10, 1 << 20))).items == []
    with pytest.raises(NotFoundError):
        await store.delete_thread("t1")
    await store.open_thread("u2", "t1")  # the id is free again


async def test_agents_are_kept(store: SqlStore) -> None:
    await store.save_agent(StoredAgent("a", {"id": "a", "model": "openai/x"}))
    await store.save_agent(StoredAgent("a", {"id": "a", "model": "openai/y"}))
    await store.save_agent(StoredAgent("b", {"id": "b", "model": "openai/z"}))
    assert [(a.id, a.definition["model"]) for a in await store.list_agents()] == [
        ("a", "openai/y"), ("b", "openai/z")
    ]
    await store.delete_agent("a")
    assert [a.id for a in await store.list_agents()] == ["b"]


async def test_statement_by_statement_transactions_commit_and_roll_back(store: SqlStore) -> None:
    from sqlalchemy import select

    from treadle.memory import schema
    from treadle.memory.engine import reading, writing

    await store.open_thread("u1", "t1")
    async with writing(store.engine) as conn:
        await conn.execute(schema.agents.insert().values(id="a", definition="{}", created_at=1, updated_at=1))
        assert (await conn.execute(select(schema.agents.c.id))).all()[0][0] == "a"
    with pytest.raises(RuntimeError):
        async with writing(store.engine) as conn:
            await conn.execute(schema.agents.insert().values(id="b", definition="{}", created_at=1, updated_at=1))
            raise RuntimeError("rolled back")
    async with reading(store.engine) as conn:
        rows = (await conn.execute(select(schema.agents.c.id).order_by(schema.agents.c.id))).all()
        assert [r[0] for r in rows] == ["a"]
        assert (await conn.execute(select(schema.threads.c.resource_id))).first()[0] == "u1"


async def test_sqlite_write_waits_for_a_write_lock_another_process_holds(tmp_path) -> None:
    # Another process's open write transaction: the save must wait for it (in the pool, not on
    # the event loop) and land once it commits, not fail with "database is locked".
    store = await open_store(database_url(tmp_path))
    try:
        await store.open_thread("u1", "t1")
        other = sqlite3.connect(tmp_path / "treadle.db", isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        save = asyncio.create_task(store.save_messages("t1", "u1", [Message.user("hi")]))
        for _ in range(20):  # the event loop stays free while the save waits
            await asyncio.sleep(0)
        assert not save.done()
        other.execute("COMMIT")
        other.close()
        await save
        assert await store.count_messages("t1") == 1
    finally:
        await store.close()


def test_copy_message_is_a_deep_copy_of_every_part() -> None:
    original = Message(id="m", role="assistant",
                       content=MessageContent(parts=every_part(), metadata={"a": [1, {"b": 2}]}))
    copied = copy_message(original)
    assert copied == original
    copied.content.parts[6].args["q"] = 2
    copied.content.metadata["a"][1]["b"] = 3
    copied.content.parts.append(TextPart("more"))
    assert original.content.parts[6].args == {"q": 1}
    assert original.content.metadata == {"a": [1, {"b": 2}]}
    assert len(original.content.parts) == len(every_part())


async def test_a_failed_save_writes_nothing_and_the_next_save_works(store: SqlStore) -> None:
    from sqlalchemy.exc import IntegrityError

    await store.open_thread("u1", "t1")
    # A failed save writes nothing and leaves no connection of the pool unfit for the next one.
    for _ in range(12):  # more than the pool holds
        with pytest.raises(IntegrityError):
            await store.save_messages("missing", "u1", [Message.user("lost")])
    await store.save_messages("t1", "u1", [Message.user("kept")])
    assert [m.text for m in await store.load_history("t1", 10)] == ["kept"]
    assert await store.count_messages("missing") == 0


async def test_a_runs_end_releases_its_lease_unless_what_is_pending_keeps_it(store: SqlStore) -> None:
    """At a run's end the thread's pending signals are read and the lease released, unless
    the next run takes it over (on PostgreSQL, one statement when nothing is pending)."""
    from dataclasses import replace
    from datetime import timedelta

    from treadle.core.messages import utcnow
    from treadle.memory.signal_records import Lease, PendingSignal
    from treadle.memory.signal_sql import SqlSignalStore

    await store.open_thread("u1", "t1")
    leases, now = SqlSignalStore(store.engine), utcnow()
    key = ("u1", "t1")

    async def held(run: str) -> Lease:
        return await leases.acquire_lease(Lease(key, "replica-a", run, "agent", now + timedelta(seconds=30)), now)

    asked: list[list[str]] = []

    def keep_queued(pending: list[PendingSignal]) -> bool:
        asked.append([p.message.id for p in pending])
        return any(p.kind == "queued" for p in pending)

    lease = await held("r1")
    assert await leases.release_lease_unless(lease, keep_queued) == ([], True)
    assert await leases.get_lease(key) is None

    lease = await held("r2")
    queued = replace(Message.user("next", id="m-queued"), role="signal", type="user-message")
    await leases.add_pending(PendingSignal(key, queued, "queued", agent_id="agent"))
    pending, released = await leases.release_lease_unless(lease, keep_queued)
    assert ([p.message.id for p in pending], released) == (["m-queued"], False)
    assert (await leases.get_lease(key)) == lease  # the next run takes it over

    # Something pending that does not keep the thread: read, and the lease released all the same.
    await leases.remove_pending(["m-queued"])
    persisted = replace(Message.user("later", id="m-later"), role="signal", type="user-message")
    await leases.add_pending(PendingSignal(key, persisted, "persisted", agent_id="agent"))
    pending, released = await leases.release_lease_unless(lease, lambda p: False)
    assert released and "m-later" in [p.message.id for p in pending]
    assert await leases.get_lease(key) is None
    assert asked[0] == []


async def test_a_run_opened_with_its_input_reads_the_history_before_it_and_stores_it_after(store: SqlStore) -> None:
    """A run whose input no processor changes stores it with its opening: the history it reads
    is the thread before the input, and the input is stored after that history, on a thread
    that exists and on a new one."""
    from treadle.core.messages import utcnow

    await store.open_thread("u1", "t1")
    await store.save_messages("t1", "u1", [Message.user("earlier"), Message.assistant("answer")])
    history = await open_claimed(store, "t1", "r1", utcnow(), [Message.user("now"), Message.user("and this")])
    assert [m.text for m in history] == ["earlier", "answer"]
    assert [m.text for m in await store.load_history("t1", 10)] == ["earlier", "answer", "now", "and this"]
    [run] = (await store.list_runs("t1", PageRequest(10, 1 << 20))).items
    assert (run.id, run.status) == ("r1", "running")

    assert await open_claimed(store, "t2", "r2", utcnow(), [Message.user("first")]) == []
    assert [m.text for m in await store.load_history("t2", 10)] == ["first"]


async def test_a_run_opened_with_messages_its_history_has_stores_only_the_new_ones(store: SqlStore) -> None:
    """A client that resends the conversation: a message the history read has stays as stored,
    where it is (the run keeps it as history), and only the new message is added."""
    from datetime import timedelta

    from treadle.core.messages import utcnow

    await store.open_thread("u1", "t1")
    earlier = Message.user("earlier")
    await store.save_messages("t1", "u1", [earlier, Message.assistant("answer")])
    resent = copy_message(earlier)
    resent.content.parts = [TextPart("earlier, edited by the client")]
    history = await open_claimed(store, "t1", "r1", utcnow() + timedelta(minutes=1), [resent, Message.user("new")])
    assert [m.text for m in history] == ["earlier", "answer"]
    assert [m.text for m in await store.load_history("t1", 10)] == ["earlier", "answer", "new"]


async def test_a_run_that_cannot_open_stores_none_of_its_input(store: SqlStore) -> None:
    """Its thread held by another run, or its run id taken: the input is not stored either."""
    from treadle.core.messages import utcnow
    from treadle.memory.fence import LeaseHeldError

    await store.open_thread("u1", "t1")
    await store.save_messages("t1", "u1", [Message.user("earlier")])
    now = utcnow()
    held = claim(store, "t1", "r-other", now, replica="replica-b")
    from treadle.memory.signal_sql import SqlSignalStore

    assert held.lease is not None
    await SqlSignalStore(store.engine).acquire_lease(held.lease, now)
    with pytest.raises(LeaseHeldError):
        await open_claimed(store, "t1", "r1", now, [Message.user("while held")])
    await store.start_run("r-taken", "agent", "t1", "u1")
    later = now + (held.lease.expires_at - now) * 2  # the other run's lease expired
    with pytest.raises(AlreadyExistsError):
        await open_claimed(store, "t1", "r-taken", later, [Message.user("taken id")])
    assert [m.text for m in await store.load_history("t1", 10)] == ["earlier"]
    assert [r.id for r in (await store.list_runs("t1", PageRequest(10, 1 << 20))).items] == ["r-taken"]


async def test_a_run_ends_with_its_last_messages_only_while_it_holds_its_lease(store: SqlStore) -> None:
    """The last step's messages and the run's end in one write: both, or (the lease taken over)
    neither, the run left as the new owner will find it."""
    from datetime import timedelta

    from treadle.core.messages import utcnow
    from treadle.memory.fence import LeaseLostError, current_fence
    from treadle.memory.signal_sql import SqlSignalStore

    now = utcnow()
    await open_claimed(store, "t1", "r1", now, [Message.user("one")])
    from treadle.memory.signal_sql import held_lease

    mine = await store.db.read(held_lease, ("u1", "t1"))
    token = current_fence.set(mine)
    try:
        await store.end_run("r1", "finished", "stop", Usage(output_tokens=3), thread_id="t1", resource_id="u1",
                            messages=[Message.assistant("first answer")])
    finally:
        current_fence.reset(token)
    assert [m.text for m in await store.load_history("t1", 10)] == ["one", "first answer"]
    [run] = (await store.list_runs("t1", PageRequest(10, 1 << 20))).items
    assert (run.status, run.finish_reason, run.usage.output_tokens) == ("finished", "stop", 3)

    later = now + timedelta(seconds=31)
    await open_claimed(store, "t1", "r2", later, [Message.user("two")])
    lost = await store.db.read(held_lease, ("u1", "t1"))
    much_later = later + timedelta(seconds=31)  # expired: another replica takes the thread
    await SqlSignalStore(store.engine).acquire_lease(
        type(lost)(("u1", "t1"), "replica-b", "r3", "agent", much_later + timedelta(seconds=30)), much_later)
    token = current_fence.set(lost)
    try:
        with pytest.raises(LeaseLostError):
            await store.end_run("r2", "finished", "stop", Usage(), thread_id="t1", resource_id="u1",
                                messages=[Message.assistant("never stored")])
    finally:
        current_fence.reset(token)
    assert [m.text for m in await store.load_history("t1", 10)] == ["one", "first answer", "two"]
    runs = {r.id: r.status for r in (await store.list_runs("t1", PageRequest(10, 1 << 20))).items}
    assert runs == {"r1": "finished", "r2": "running"}
