"""What replicas tell each other about threads, over the store's notify channel.

Three messages, JSON, each from one replica (``o``) to all:

- ``run``: a run started (``run`` and ``agent`` set, with the lease's expiry ``exp``) or ended on
  a thread; other replicas show it to their subscribers and watch the lease (a replica that dies
  never says "ended": its lease expires, and the watchers take the thread over).
- ``chunk``: a chunk of a run, for subscribers on other replicas (``chunks``: several chunks of
  a run in order, as one message, from a caller's ``Stream`` that has them in batches). Chunks go as they are (proto
  bytes, base64), not through the store: a run streams many small chunks, and storing each would
  cost a write per token. A message longer than one payload is split into parts sent in the same
  transaction, which PostgreSQL delivers whole and in order; the receiver joins them.
- ``signal``: "a signal for your run ``run`` is stored as pending ``id``" to the lease's owner
  ``to``. The signal itself is in the store (it may be large, and it must survive the owner
  dying): the owner takes it (once: the store removes it as it hands it over), puts it in the
  run's inbox, and answers ``ack`` with the id of the run that took it; the sender's call returns
  then, as it does for a run of its own once the signal is in the inbox.

Replicas also say hello (``hi``), so that a replica knows whether anyone else can be waiting
for its chunks: nobody is, when no other replica is known. Each replica says hello when it
starts and every ``HELLO_EVERY`` seconds, asks every other one to answer at once (``ask``) when
it starts and after its listening connection was replaced, and says goodbye (``bye``) when it
stops. A replica sends its chunks while another replica was heard within ``PEER_TTL``, and
while it is unsure: from its start until its own asking hello came back (PostgreSQL then has it
queued for everyone) and ``REPLY_WINDOW`` more for the answers, and while its listening
connection is lost or newly replaced. Unsure means sending: a replica that sends chunks nobody
reads costs CPU, one that leaves them out would leave a subscriber with a gap. Everything else
always goes: a run's start and end (other replicas watch the run's lease by them, and take the
thread over when it dies; a replica of a version that says no hello must hear them too),
signals and acks. Any message from another replica counts as its hello.

Sending is batched: whatever is queued while a batch is in flight goes in the next one, and
the messages of a batch are packed into as few payloads as fit (a run's chunks are many small
messages: one payload each would cost a ``NOTIFY`` each, and the listening connection of the
sender hears its own too). A payload is ``=`` and one message, ``*ORIGIN`` and messages one a
line (JSON has no raw newline), or ``+`` and a part of a message too long for one payload. A
replica skips its own packed payloads by their origin without reading them.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..core.chunks import Chunk
from ..memory.notify import MAX_PAYLOAD, NotifyChannel
from ..memory.sql import from_micros, micros
from ..core.messages import new_id
from ..loop.payload_view import display_of, set_display
from .hub import ActiveRunChanged
from .store import ThreadKey

log = logging.getLogger(__name__)

HELLO_EVERY = 10.0
"""Seconds between a replica's hellos."""
PEER_TTL = 3 * HELLO_EVERY + 1.0
"""A replica not heard from for this long is taken to be gone (three hellos missed)."""
REPLY_WINDOW = 1.0
"""Seconds after a replica's asking hello came back in which the others' answers are awaited
(they answer as they hear it: a few milliseconds)."""

def _hi(**fields: Any) -> dict[str, Any]:
    """A hello. Its empty thread key is for replicas of a version that says no hello: they
    read the key of every message, then skip a kind they do not know."""
    return {"t": "hi", "k": ["", ""], **fields}


ChunkCodec = tuple[Callable[[Chunk], bytes], Callable[[bytes], Chunk]]
"""(encode, decode) of a chunk: the proto form, given by the edge that knows it."""


@dataclass
class RunStarted:
    key: ThreadKey
    origin: str
    run_id: str
    agent_id: str
    expires_at: datetime | None


@dataclass
class RunEnded:
    key: ThreadKey
    origin: str
    handoff: bool
    """The replica let the thread go without a successor (it is stopping): others may take it."""


@dataclass
class RemoteChunk:
    key: ThreadKey
    origin: str
    chunk: Chunk


@dataclass
class RemoteChunks:
    key: ThreadKey
    origin: str
    chunks: list[Chunk]


@dataclass
class Forwarded:
    key: ThreadKey
    origin: str
    to: str
    run_id: str
    pending_id: str
    """Empty: no signal, but queued work is stored for the thread (look at it when idle)."""


@dataclass
class Acked:
    pending_id: str


Received = RunStarted | RunEnded | RemoteChunk | RemoteChunks | Forwarded


class Relay:
    def __init__(self, channel: NotifyChannel, replica: str, codec: ChunkCodec,
                 on_message: Callable[[Received], Any], reply_window: float = REPLY_WINDOW,
                 hello_every: float = HELLO_EVERY) -> None:
        self.channel = channel
        self.replica = replica
        self._encode, self._decode = codec
        self._on_message = on_message
        self._queue: list[str] = []
        """Messages (JSON texts) waiting to be sent; ``flush`` packs them into payloads."""
        self._own = "*" + replica + " "
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._parts: dict[str, list[str]] = {}
        self._acks: dict[str, asyncio.Future[str]] = {}
        self._reply_window, self._hello_every = reply_window, hello_every
        self._peers: dict[str, float] = {}
        """Other replica -> when it was last heard (``time.monotonic``)."""
        self._peers_until = 0.0
        """Until when some other replica counts as present."""
        self._unsure_until = math.inf
        """Until when this replica cannot tell that it is alone (see ``watched``)."""
        self._asked: tuple[str, int] | None = None
        """The asking hello in flight, and the channel's connection it was sent on."""
        self._asked_on = -1
        """The channel's connection whose asking hello came back."""
        self._hello_task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        await self.channel.start(self._received)
        self._task = asyncio.create_task(self._send_forever(), name="replica relay")
        if self.channel.heard:
            try:
                await self._ask()
            except Exception:  # unsure (it sends everything) until the next hello asks again
                log.exception("saying hello to the other replicas failed")
            self._hello_task = asyncio.create_task(self._hello_forever(), name="replica hellos")

    async def close(self) -> None:
        if self._hello_task is not None:
            self._hello_task.cancel()
            with contextlib.suppress(BaseException):
                await self._hello_task
            self._hello_task = None
        self._send(_hi(bye=1))  # the others stop sending chunks for this one at once
        await self.flush()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task
            self._task = None
        await self.channel.close()

    # --- who listens --------------------------------------------------------------------------

    @property
    def watched(self) -> bool:
        """Whether another replica may be waiting for this one's chunks (asked per batch)."""
        if not self.channel.heard:  # nobody can be: a lone in-process channel
            return False
        now = time.monotonic()
        if now < self._peers_until or now < self._unsure_until:
            return True
        channel = self.channel
        return not channel.listening or channel.connections != self._asked_on

    @property
    def peers(self) -> set[str]:
        """The other replicas heard from within ``PEER_TTL``."""
        now = time.monotonic()
        return {origin for origin, seen in self._peers.items() if seen + PEER_TTL > now}

    async def _ask(self) -> None:
        """Say hello, and ask every other replica to answer (unsure until it came back)."""
        nonce = new_id("hi")
        self._asked = (nonce, self.channel.connections)
        self._unsure_until = math.inf
        text = json.dumps({**_hi(ask=1, n=nonce), "o": self.replica}, separators=(",", ":"))
        await self.channel.publish(["=" + text])
        if not self.channel.echoes:  # the others had it before publish returned
            self._heard_own(nonce)

    def _heard_own(self, nonce: str) -> None:
        if self._asked is not None and self._asked[0] == nonce:
            self._asked_on = self._asked[1]
            self._asked = None
            self._unsure_until = time.monotonic() + self._reply_window

    def _hello(self, m: dict[str, Any]) -> None:
        origin = m["o"]
        if origin == self.replica:
            self._heard_own(m.get("n", ""))
            return
        if m.get("bye"):
            self._peers.pop(origin, None)
            self._peers_until = max(self._peers.values(), default=-PEER_TTL) + PEER_TTL
            return
        now = time.monotonic()
        seen = self._peers.get(origin)
        self._peers[origin] = now
        self._peers_until = max(self._peers_until, now + PEER_TTL)
        if m.get("ask") or seen is None or seen + PEER_TTL <= now:
            self._send(_hi())  # it may not know this one (yet, or any more)

    async def _hello_forever(self) -> None:
        while True:
            await asyncio.sleep(self._hello_every)
            try:
                if self.channel.connections != self._asked_on and self.channel.listening:
                    await self._ask()  # listening again: who started meanwhile was not heard
                else:
                    self._send(_hi())
                now = time.monotonic()
                for origin, seen in list(self._peers.items()):
                    if seen + PEER_TTL <= now:
                        del self._peers[origin]
            except Exception:
                log.exception("saying hello to the other replicas failed")

    async def flush(self) -> None:
        """Send what is queued now (shutdown, and tests that need it sent)."""
        batch, self._queue = self._queue, []
        if batch:
            await self.channel.publish(self._pack(batch))

    def _pack(self, texts: list[str]) -> list[str]:
        """The payloads of ``texts``, in order: as many messages a payload as fit."""
        payloads: list[str] = []
        lines: list[str] = []
        size = len(self._own)
        for text in texts:
            if text[0] == "+":  # a part of a long message: a payload of its own
                if lines:
                    payloads.append(self._own + "\n".join(lines))
                    lines, size = [], len(self._own)
                payloads.append(text)
                continue
            if lines and size + len(text) + 1 > MAX_PAYLOAD:
                payloads.append(self._own + "\n".join(lines))
                lines, size = [], len(self._own)
            lines.append(text)
            size += len(text) + 1
        if lines:
            payloads.append(self._own + "\n".join(lines) if len(lines) > 1 else "=" + lines[0])
        return payloads

    # --- sending ------------------------------------------------------------------------------

    def run_started(self, key: ThreadKey, run_id: str, agent_id: str, expires_at: datetime | None) -> None:
        self._send({"t": "run", "k": key, "run": run_id, "agent": agent_id,
                    "exp": micros(expires_at) if expires_at is not None else None})

    def run_ended(self, key: ThreadKey, handoff: bool = False) -> None:
        self._send({"t": "run", "k": key, "run": "", "handoff": handoff})

    def chunk(self, key: ThreadKey, chunk: Chunk) -> None:
        if not self.channel.heard or not self.watched:  # nobody to encode the chunk for
            return
        message: dict[str, Any] = {"t": "chunk", "k": key, "c": base64.b64encode(self._encode(chunk)).decode()}
        shown = display_of(chunk)
        if shown is not chunk:  # its display projection travels too ("": not shown)
            message["d"] = base64.b64encode(self._encode(shown)).decode() if shown is not None else ""
        self._send(message)

    def chunks(self, key: ThreadKey, chunks: list[Chunk]) -> None:
        """Several chunks of a run, in order, in one message (one encoding of the message, not
        one per chunk)."""
        if not self.channel.heard or not chunks or not self.watched:
            return
        if len(chunks) == 1:
            self.chunk(key, chunks[0])
            return
        encode = self._encode
        encoded: list[str] = []
        shown: dict[str, str] = {}
        for i, chunk in enumerate(chunks):
            encoded.append(base64.b64encode(encode(chunk)).decode())
            display = display_of(chunk)
            if display is not chunk:  # its display projection travels too ("": not shown)
                shown[str(i)] = base64.b64encode(encode(display)).decode() if display is not None else ""
        message: dict[str, Any] = {"t": "chunks", "k": key, "c": encoded}
        if shown:
            message["d"] = shown
        self._send(message)

    def forwarded(self, key: ThreadKey, to: str, run_id: str, pending_id: str) -> asyncio.Future[str]:
        """Tell ``to``; the future is done when it answers that the signal is in a run (its id)."""
        done: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        if pending_id:
            self._acks[pending_id] = done
            done.add_done_callback(lambda _: self._acks.pop(pending_id, None))
        else:
            done.set_result("")
        self._send({"t": "signal", "k": key, "to": to, "run": run_id, "id": pending_id})
        return done

    def settle(self, pending_id: str, run_id: str) -> None:
        """A signal this replica waits to hear about went into ``run_id`` here (a takeover took
        it in): the wait ends as if its ack had come."""
        if (done := self._acks.get(pending_id)) is not None and not done.done():
            done.set_result(run_id)

    def ack(self, key: ThreadKey, to: str, pending_id: str, run_id: str = "") -> None:
        self._send({"t": "ack", "k": key, "to": to, "id": pending_id, "run": run_id})

    def event(self, key: ThreadKey, event: Chunk | ActiveRunChanged, expires_at: datetime | None) -> None:
        if isinstance(event, ActiveRunChanged):
            if event.run_id:
                self.run_started(key, event.run_id, event.agent_id, expires_at)
            else:
                self.run_ended(key)
        else:
            self.chunk(key, event)

    def _send(self, message: dict[str, Any]) -> None:
        if not self.channel.heard:
            return
        message["o"] = self.replica
        text = json.dumps(message, separators=(",", ":"))  # ASCII: a character is a byte
        if len(text) + len(self._own) <= MAX_PAYLOAD:
            self._queue.append(text)
        else:
            mid, size = new_id("m"), MAX_PAYLOAD - 64
            parts = [text[i:i + size] for i in range(0, len(text), size)]
            self._queue.extend(f"+{mid} {i} {len(parts)} {p}" for i, p in enumerate(parts))
        self._wake.set()

    async def _send_forever(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            try:
                await self.flush()
            except Exception:
                log.exception("sending to the other replicas failed")

    # --- receiving ----------------------------------------------------------------------------

    def _received(self, payload: str) -> None:
        if payload[0] == "*":
            if payload.startswith(self._own):
                return  # this replica's own
            for text in payload.partition(" ")[2].split("\n"):
                self._handle(text)
            return
        if payload.startswith("+"):
            head, _, body = payload.partition(" ")
            index, count, part = body.split(" ", 2)
            parts = self._parts.setdefault(head[1:], [""] * int(count))
            parts[int(index)] = part
            if any(p == "" for p in parts):
                return
            del self._parts[head[1:]]
            text = "".join(parts)
        else:
            text = payload[1:]
        self._handle(text)

    def _handle(self, text: str) -> None:
        message = json.loads(text)
        if message.get("t") == "hi":
            self._hello(message)
            return
        origin = message.get("o")
        if origin == self.replica:
            return
        if origin is not None:  # it is there (a replica of a version that says no hello, too)
            now = self._peers[origin] = time.monotonic()
            self._peers_until = max(self._peers_until, now + PEER_TTL)
        received = self._parse(message)
        if received is not None:
            self._on_message(received)

    def _parse(self, m: dict[str, Any]) -> Received | None:
        key: ThreadKey = (m["k"][0], m["k"][1])
        origin = m["o"]
        if m["t"] == "run":
            if m["run"]:
                exp = from_micros(m["exp"]) if m.get("exp") is not None else None
                return RunStarted(key, origin, m["run"], m.get("agent", ""), exp)
            return RunEnded(key, origin, bool(m.get("handoff")))
        if m["t"] == "chunk":
            chunk = self._decode(base64.b64decode(m["c"]))
            if "d" in m:
                set_display(chunk, self._decode(base64.b64decode(m["d"])) if m["d"] else None)
            return RemoteChunk(key, origin, chunk)
        if m["t"] == "chunks":
            shown = m.get("d") or {}
            chunks = []
            for i, data in enumerate(m["c"]):
                chunk = self._decode(base64.b64decode(data))
                if (d := shown.get(str(i))) is not None:
                    set_display(chunk, self._decode(base64.b64decode(d)) if d else None)
                chunks.append(chunk)
            return RemoteChunks(key, origin, chunks)
        if m["t"] == "ack":
            if m["to"] == self.replica and (done := self._acks.get(m["id"])) is not None and not done.done():
                done.set_result(str(m.get("run", "")))
            return None
        if m["t"] == "signal":
            if m["to"] != self.replica:
                return None
            return Forwarded(key, origin, m["to"], m["run"], m["id"])
        return None


__all__ = ["Acked", "ChunkCodec", "Forwarded", "Received", "Relay", "RemoteChunk", "RemoteChunks", "RunEnded",
           "RunStarted"]
