"""The replicas' notify channel: short text messages from one server process to every other one
on the same store, in order. The thread runtime sends on it (run starts and ends, chunks for
subscribers on other replicas, "a signal for your run is stored") and never sees how.

- ``PostgresChannel``: PostgreSQL ``LISTEN``/``NOTIFY`` on a channel named after the store's
  schema, so two deployments in one database never hear each other. One psycopg 3 connection
  listens (``notifies()``: pushed by the server, no polling); another sends. A batch is sent in
  one transaction: PostgreSQL delivers it whole, in order, after the commit. A payload must stay
  under 8000 bytes; the runtime splits what is longer.
- ``LocalChannel``: one process (SQLite): messages reach the other channels of the same
  ``LocalGroup``, if any (a process running several runtimes on one store, as tests do).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
from collections.abc import Callable
from typing import Any, Protocol

from .engine import conninfo

log = logging.getLogger(__name__)

MAX_PAYLOAD = 7900
"""Bytes in one NOTIFY payload (PostgreSQL's limit is 8000, the channel name included)."""
RECONNECT_DELAY = 1.0

OnMessage = Callable[[str], Any]


class NotifyChannel(Protocol):
    async def start(self, on_message: OnMessage) -> None:
        """Listen from now on; ``on_message`` gets every other replica's messages, in order."""
        ...

    async def publish(self, payloads: list[str]) -> None:
        """Send ``payloads`` (each at most ``MAX_PAYLOAD`` ASCII bytes) as one batch."""
        ...

    @property
    def heard(self) -> bool:
        """False when no other replica can receive anything (a lone in-process channel): then
        there is nothing to encode or send."""
        ...

    @property
    def listening(self) -> bool:
        """True while everything the other replicas send is heard (False while a lost listening
        connection is being replaced)."""
        ...

    async def wait_listening(self, timeout: float) -> bool:
        """Until ``listening`` (True), or ``timeout`` seconds (False)."""
        ...

    @property
    def connections(self) -> int:
        """How many times listening began (a lost listening connection replaced: one more);
        what other replicas sent between two of them was not heard."""
        ...

    echoes: bool
    """True when a replica hears its own messages back (after every other replica has them
    queued), False when ``publish`` hands them to the others before it returns."""

    async def close(self) -> None: ...


class LocalGroup:
    """The channels of one process that hear each other."""

    def __init__(self) -> None:
        self.members: list[LocalChannel] = []


class LocalChannel:
    def __init__(self, group: LocalGroup | None = None) -> None:
        self._group = group or LocalGroup()
        self._on_message: OnMessage | None = None

    async def start(self, on_message: OnMessage) -> None:
        self._on_message = on_message
        self._group.members.append(self)

    @property
    def heard(self) -> bool:  # asked for every chunk of every run on a thread: kept cheap
        members = self._group.members
        return len(members) > 1 or (len(members) == 1 and members[0] is not self)

    listening = True
    """One process: nothing to lose."""
    connections = 1
    echoes = False

    async def wait_listening(self, timeout: float) -> bool:
        return True

    async def publish(self, payloads: list[str]) -> None:
        for peer in list(self._group.members):
            if peer is not self and peer._on_message is not None:
                for payload in payloads:
                    peer._on_message(payload)

    async def close(self) -> None:
        if self in self._group.members:
            self._group.members.remove(self)
        self._on_message = None


class PostgresChannel:
    def __init__(self, url: str) -> None:
        self._conninfo = conninfo(url)
        self._listen: Any = None
        self._send: Any = None
        self._send_lock = asyncio.Lock()
        self._task: asyncio.Task[None] | None = None
        self.name = ""
        self._listening = asyncio.Event()
        self.connections = 0
        self.on_gap: Callable[[], None] | None = None
        """Called when the listening connection was lost: what other replicas sent meanwhile
        was not heard (subscribers must be told, never left with a silent gap)."""

    async def start(self, on_message: OnMessage) -> None:
        import psycopg

        self._send = await psycopg.AsyncConnection.connect(self._conninfo, autocommit=True)
        cur = await self._send.execute("SELECT current_schema()")
        schema = (await cur.fetchone() or ["public"])[0] or "public"
        self.name = "treadle_" + hashlib.sha256(schema.encode()).hexdigest()[:16]
        ready = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._listen_forever(on_message, ready), name="notify listener")
        await ready  # listening before the server serves: nothing sent after start is missed

    async def _listen_forever(self, on_message: OnMessage, ready: asyncio.Future[None]) -> None:
        import psycopg

        while True:
            try:
                self._listen = await psycopg.AsyncConnection.connect(self._conninfo, autocommit=True)
                await self._listen.execute(f"LISTEN {self.name}")
                self.connections += 1
                self._listening.set()
                if not ready.done():
                    ready.set_result(None)
                async for notify in self._listen.notifies():
                    try:
                        on_message(notify.payload)
                    except Exception:
                        log.exception("handling a replica message failed")
                raise ConnectionError("the listening connection ended")  # a gap like any other loss
            except asyncio.CancelledError:
                self._listening.clear()
                raise
            except Exception as e:
                self._listening.clear()  # before subscribers hear of the gap: none subscribes into it
                if not ready.done():
                    ready.set_exception(e)
                    return
                log.warning("replica channel lost (%s); reconnecting", e)
                if self.on_gap is not None:
                    try:
                        self.on_gap()
                    except Exception:
                        log.exception("telling subscribers of a lost replica channel failed")
            finally:
                if self._listen is not None:
                    with contextlib.suppress(Exception):
                        await self._listen.close()
                    self._listen = None
            await asyncio.sleep(RECONNECT_DELAY)  # only after a lost connection

    heard = True
    """Other replicas may listen at any time: everything is sent (the relay leaves out chunks
    nobody else can be waiting for)."""
    echoes = True

    @property
    def listening(self) -> bool:
        return self._listening.is_set()

    async def wait_listening(self, timeout: float) -> bool:
        if self._listening.is_set():
            return True
        try:
            await asyncio.wait_for(self._listening.wait(), timeout)
        except TimeoutError:
            return False
        return True

    async def publish(self, payloads: list[str]) -> None:
        if not payloads or self._send is None:
            return
        import psycopg

        rows = [(self.name, p) for p in payloads]
        async with self._send_lock:
            try:
                await self._notify(rows)
            except psycopg.OperationalError as e:  # the connection was lost: one new one, once
                log.warning("replica channel: sending failed (%s); reconnecting", e)
                with contextlib.suppress(Exception):
                    await self._send.close()
                self._send = await psycopg.AsyncConnection.connect(self._conninfo, autocommit=True)
                await self._notify(rows)

    async def _notify(self, rows: list[tuple[str, str]]) -> None:
        """Every payload in one statement (one round trip; no ``BEGIN``/``COMMIT``): one
        transaction, so PostgreSQL delivers them whole and in order. The payloads go as a
        binary ``text[]`` (``%b``): psycopg's text form of an array escapes every quote of every
        payload (JSON is full of them), which cost a run 2 ms of CPU per batch of chunks."""
        assert self._send is not None
        await self._send.execute(_NOTIFY_ALL, (self.name, [p for _, p in rows]))

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task
            self._task = None
        if self._send is not None:
            async with self._send_lock:
                await self._send.close()
            self._send = None


_NOTIFY_ALL = ("SELECT count(pg_notify(%s, t.payload)) FROM "
               "(SELECT payload FROM unnest(%b::text[]) WITH ORDINALITY AS p(payload, n) ORDER BY n) AS t")

__all__ = ["MAX_PAYLOAD", "LocalChannel", "LocalGroup", "NotifyChannel", "PostgresChannel", "conninfo"]
