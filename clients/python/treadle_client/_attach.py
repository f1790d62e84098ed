"""One long-lived Attach stream per server, kept up with exponential backoff and jitter.

The processor and tool SDKs differ only in what they say in the handshake and how they answer
what the server sends; both hand this module a ``Session`` factory. A session lives for one
stream: when the stream ends (server restart, drain, network) its in-flight work is cancelled and
a new stream, with a new handshake, is opened after a backoff.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import socket
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from types import TracebackType
from typing import Any, Protocol

import grpc

from treadle.core.chunks import Chunk

from ._connect import Connect
from treadle.core.args import ProcessorStreamWriter

log = logging.getLogger("treadle_client")

PROTOCOL_VERSION = 1

# A handshake refused for one of these reasons will be refused again: do not retry.
_FATAL = frozenset({
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.UNAUTHENTICATED,
    grpc.StatusCode.UNIMPLEMENTED,
})


class AttachError(Exception):
    """A server refused the handshake (the message says why); the SDK does not retry it."""

    def __init__(self, target: str, code: grpc.StatusCode, details: str) -> None:
        super().__init__(f"{target}: {code.name}: {details}")
        self.target = target
        self.code = code
        self.details = details


Send = Callable[[Any], None]


class Session(Protocol):
    """What one stream needs from the processor or tool SDK."""

    def handshake(self) -> Any: ...

    def on_message(self, message: Any) -> bool:
        """Handle one server message; True when it was the welcome."""
        ...

    async def close(self) -> None:
        """The stream ended: cancel in-flight work (the server no longer waits for it)."""
        ...


def _each(items: list[Any]) -> list[Any]:
    return items


SessionFactory = Callable[[Send], Session]
OpenStream = Callable[[grpc.aio.Channel, AsyncIterator[Any], tuple[tuple[str, str], ...]], Any]
"""``(channel, requests, metadata)`` -> the Attach call."""


def default_instance_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def collecting_writer(run_id: str) -> tuple[ProcessorStreamWriter, list[Chunk]]:
    """A writer for one invocation, and the list its custom chunks collect in (they travel in
    the answer)."""
    written: list[Chunk] = []

    async def collect(chunk: Chunk) -> None:
        written.append(chunk)

    return ProcessorStreamWriter(collect, run_id), written


async def cancel_all(tasks: Iterable[asyncio.Task[Any]]) -> None:
    """Cancel ``tasks`` and wait until each has ended."""
    tasks = list(tasks)
    for task in tasks:
        task.cancel()
    for task in tasks:
        with contextlib.suppress(asyncio.CancelledError):
            await task


class _Link:
    """The stream to one target, reopened until the attachment is closed."""

    def __init__(
        self, target: str, open_stream: OpenStream, make_session: SessionFactory,
        backoff: tuple[float, float], connect: Connect, label: str = "stream",
    ) -> None:
        self.target = target
        self.label = label
        self._connect = connect
        self._open = open_stream
        self._make = make_session
        self._backoff = backoff
        self.welcomed = asyncio.Event()
        self.attached = False
        self.error: AttachError | None = None
        self.streams_opened = 0
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=f"treadle-attach {self.target}")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _run(self) -> None:
        delay = self._backoff[0]
        while True:
            welcomed, why = False, ""
            try:
                welcomed, why = await self._once()
            except AttachError as e:
                log.error("%s: attach refused by %s", self.label, e)
                self.error = e
                self.welcomed.set()  # wake ready(), which reports the error
                return
            except Exception as e:  # a bug on this side must not end the attachment for good
                log.exception("%s: stream to %s failed", self.label, self.target)
                why = f"{type(e).__name__}: {e}"
            if welcomed:
                delay = self._backoff[0]
            # Full jitter keeps a fleet of processes from reconnecting in lock-step.
            wait = random.uniform(delay / 2, delay)
            # One line per failed try, so a dead or wrong target is never retried silently.
            log.warning("%s: %s; retrying in %.1fs", self.label, why, wait)
            await asyncio.sleep(wait)
            delay = min(delay * 2, self._backoff[1])

    async def _once(self) -> tuple[bool, str]:
        """One stream: whether it was welcomed, and why it ended."""
        outbound: asyncio.Queue[Any] = asyncio.Queue()
        session = self._make(outbound.put_nowait)
        outbound.put_nowait(session.handshake())

        # What queued while the previous message was being written goes out together: the
        # session may pack it into fewer messages (``pack``), in order.
        pack: Callable[[list[Any]], Iterable[Any]] = getattr(session, "pack", _each)

        async def requests() -> AsyncIterator[Any]:
            while True:
                items = [await outbound.get()]
                while not outbound.empty():
                    items.append(outbound.get_nowait())
                for message in pack(items):
                    yield message

        welcomed, why = False, ""
        channel = self._connect.channel(self.target)
        call = None
        try:
            call = self._open(channel, requests(), self._connect.metadata)
            self.streams_opened += 1
            async for message in call:
                if session.on_message(message):
                    welcomed = True
                    self.attached = True
                    self.welcomed.set()
                    log.info("%s attached to %s", self.label, self.target)
            why = f"{self.target} ended the stream"
        except grpc.aio.AioRpcError as e:
            if e.code() in _FATAL:
                raise AttachError(self.target, e.code(), e.details() or "") from None
            verb = "the stream to" if welcomed else "cannot attach to"
            why = f"{verb} {self.target}: {e.code().name}: {e.details()}"
        finally:
            self.attached = False
            if call is not None:
                call.cancel()
            await session.close()
            await channel.close(grace=None)
        return welcomed, why


class Attachment:
    """Processors or tools attached to one or more servers; ``await close()`` detaches them.

    ``await attachment.ready()`` waits until every server has welcomed the handshake once.
    """

    def __init__(
        self, targets: Sequence[str], open_stream: OpenStream, make_session: SessionFactory,
        backoff: tuple[float, float], connect: Connect | None = None, label: str = "stream",
    ) -> None:
        """``label`` names what is attached in log lines (``processor no-secrets``)."""
        if not targets:
            raise ValueError("give at least one target (HOST:PORT)")
        lo, hi = backoff
        if lo <= 0 or hi < lo:
            raise ValueError(f"backoff must be (initial > 0, maximum >= initial), got {backoff}")
        self._links = [_Link(t, open_stream, make_session, backoff, connect or Connect(), label) for t in targets]
        for link in self._links:
            link.start()

    @property
    def targets(self) -> list[str]:
        return [link.target for link in self._links]

    def attached(self, target: str | None = None) -> bool:
        """True while the stream to ``target`` (or to every target) is welcomed and open."""
        links = [lk for lk in self._links if target is None or lk.target == target]
        return bool(links) and all(lk.attached for lk in links)

    def streams_opened(self, target: str) -> int:
        """How many streams were opened to ``target`` (reconnects included)."""
        return next(lk.streams_opened for lk in self._links if lk.target == target)

    async def ready(self, timeout: float | None = None) -> None:
        """Wait for the first welcome from every target; ``AttachError`` if one refused."""

        async def wait() -> None:
            for link in self._links:
                await link.welcomed.wait()
                if link.error is not None:
                    raise link.error

        await asyncio.wait_for(wait(), timeout)

    async def close(self) -> None:
        """Close every stream; in-flight invocations are cancelled."""
        await asyncio.gather(*(link.stop() for link in self._links))

    async def __aenter__(self) -> Attachment:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()


def as_targets(targets: str | Sequence[str]) -> list[str]:
    return [targets] if isinstance(targets, str) else list(targets)
