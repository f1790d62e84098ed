"""Resumable subscriptions: a subscriber's position in a thread, and what the store replays to a
subscriber that comes back with one.

A position is read from the store, never from a replica's memory, so it means the same on every
replica: the last stored message of the thread the subscriber has accounted for (``seq``, the
order messages are stored in) and the end time of the thread's last ended run it has accounted
for (a thread runs one run at a time, so its runs end in order). It is written ``v1.<seq>.<ended>``
and is opaque to clients.

Replaying ``position`` gives the thread's messages stored after ``seq`` (oldest first) and the
runs that ended after ``ended`` (in the order they ended), and the position after them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.engine import Connection

from ..core.errors import InvalidArgumentError
from ..core.messages import Message
from ..memory import schema as t
from ..memory.base import RunRecord
from ..memory.sql import _message, _run, by_position, in_thread

MAX_REPLAYED_MESSAGES = 10_000
"""A resumed subscriber gets at most this many stored messages; further back it is told to read
the thread (``ListMessages``) instead."""


@dataclass(frozen=True)
class Position:
    seq: int = 0
    ended: int = 0
    """Micros since the epoch; 0: none."""

    def encode(self) -> str:
        return f"v1.{self.seq}.{self.ended}"


def parse_position(text: str) -> Position:
    """The request's position; INVALID_ARGUMENT naming it when it is not one this server wrote."""
    parts = text.split(".")
    try:
        if len(parts) != 3 or parts[0] != "v1":
            raise ValueError
        seq, ended = int(parts[1]), int(parts[2])
        if seq < 0 or ended < 0:
            raise ValueError
    except ValueError:
        raise InvalidArgumentError(
            f"position {text[:80]!r} is not a subscription position: pass the `position` of a "
            "response this service sent (or none, to subscribe from now)") from None
    return Position(seq, ended)


def _now(conn: Connection, resource_id: str, thread_id: str) -> Position:
    m, r = t.messages.c, t.runs.c
    seq = conn.execute(select(m.seq).where(in_thread(conn.dialect.name, thread_id), m.resource_id == resource_id)
                       .order_by(*by_position(newest_first=True)).limit(1)).scalar()  # not max(): in_thread
    ended = conn.execute(select(func.max(r.ended_at)).where(
        r.thread_id == thread_id, r.resource_id == resource_id, r.ended_at.is_not(None))).scalar()
    return Position(int(seq or 0), int(ended or 0))


async def position_now(store: Any, key: tuple[str, str]) -> Position:
    """Where the thread is now: everything stored so far is accounted for."""
    return await store.db.read(_now, key[0], key[1])  # type: ignore[no-any-return]


def _after(conn: Connection, resource_id: str, thread_id: str, run_id: str) -> Position | None:
    r = t.runs.c
    last = conn.execute(select(r.id, r.ended_at).where(r.thread_id == thread_id, r.resource_id == resource_id)
                        .order_by(r.started_at.desc(), r.id.desc()).limit(1)).first()
    if last is None or last.id != run_id or last.ended_at is None:
        return None
    return _now(conn, resource_id, thread_id)


async def position_after(store: Any, key: tuple[str, str], run_id: str) -> Position | None:
    """The position just after run ``run_id`` ended, when nothing of the thread is stored after it
    yet (it is the thread's last run, ended; a run records itself before it stores a message).
    None otherwise: the subscriber keeps its position, and a resume replays some of what it saw
    rather than skip anything."""
    return await store.db.read(_after, key[0], key[1], run_id)  # type: ignore[no-any-return]


@dataclass
class Replay:
    messages: list[Message]
    ended: list[RunRecord]
    position: Position


def _replay(conn: Connection, resource_id: str, thread_id: str, since: Position) -> Replay:
    m, r = t.messages.c, t.runs.c
    now = _now(conn, resource_id, thread_id)
    rows = conn.execute(
        select(t.messages).where(in_thread(conn.dialect.name, thread_id, since.seq, now.seq),
                                 m.resource_id == resource_id)
        .order_by(*by_position()).limit(MAX_REPLAYED_MESSAGES + 1)).all()
    if len(rows) > MAX_REPLAYED_MESSAGES:
        raise InvalidArgumentError(
            f"more than {MAX_REPLAYED_MESSAGES} messages were stored on the thread since this position: "
            "read them with ListMessages, then subscribe without a position")
    runs = conn.execute(
        select(t.runs).where(r.thread_id == thread_id, r.resource_id == resource_id, r.ended_at.is_not(None),
                             r.ended_at > since.ended, r.ended_at <= now.ended).order_by(r.ended_at)).all()
    return Replay([_message(row) for row in rows], [_run(row) for row in runs], now)


async def replay(store: Any, key: tuple[str, str], since: Position) -> Replay:
    """What the thread got after ``since``, read in one go, and the position after it."""
    return await store.db.read(_replay, key[0], key[1], since)  # type: ignore[no-any-return]


__all__ = ["MAX_REPLAYED_MESSAGES", "Position", "Replay", "parse_position", "position_after", "position_now", "replay"]
