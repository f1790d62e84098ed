"""Attached tool streams, by tool name: dispatch, timeouts, cancellation and drain.

Several streams serving one tool name are replicas; each call goes to the next one in turn. A
call whose stream dies, or that is not answered by its deadline, fails with ``ToolCallError``
(the loop turns that into a tool error for the model), so a run never waits on a dead process.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import metrics

from ..v1 import prompt_pb2, remote_pb2, tool_service_pb2

log = logging.getLogger(__name__)

DEFAULT_TOOL_TIMEOUT = 60.0
"""Seconds the server waits for a remote tool's answer unless settings say otherwise."""

_DRAINED = object()
"""Put on a stream's outbound queue to end the response stream."""


class ToolCallError(Exception):
    """A remote tool call that got no answer: not attached, stream lost, timeout, drain."""


@dataclass(eq=False)
class ToolStream:
    """One attached connection: its tools, its pending calls and its outbound queue."""

    instance_id: str
    tools: dict[str, prompt_pb2.ToolDefinition]
    outbound: asyncio.Queue[Any] = field(default_factory=asyncio.Queue)
    pending: dict[str, asyncio.Future[tool_service_pb2.ToolCallResult]] = field(default_factory=dict)
    closed: bool = False
    _ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def send(self, message: tool_service_pb2.ToolServiceAttachResponse) -> None:
        self.outbound.put_nowait(message)

    def next_id(self) -> str:
        return f"{self.instance_id}/{next(self._ids)}"

    def resolve(self, result: tool_service_pb2.ToolCallResult) -> None:
        """An answer arrived; late answers (after a timeout or cancel) are ignored."""
        future = self.pending.pop(result.invocation_id, None)
        if future is not None and not future.done():
            future.set_result(result)
        elif future is None:
            log.debug("tool stream %s: ignoring answer to unknown invocation %r",
                      self.instance_id, result.invocation_id)

    def fail_pending(self, reason: str) -> None:
        self.closed = True
        pending, self.pending = self.pending, {}
        for future in pending.values():
            if not future.done():
                future.set_exception(ToolCallError(reason))

    def end(self) -> None:
        """Ask the servicer to finish the response stream (after its queue empties)."""
        self.outbound.put_nowait(_DRAINED)


def is_end(message: Any) -> bool:
    return message is _DRAINED


class _Metrics:
    """Envoy ext_proc-style counters, exported through OpenTelemetry metrics."""

    def __init__(self, meter: metrics.Meter) -> None:
        self.streams_started = meter.create_counter(
            "treadle.tool.streams_started", description="Tool streams attached")
        self.streams_failed = meter.create_counter(
            "treadle.tool.streams_failed", description="Tool streams refused or lost with calls pending")
        self.calls = meter.create_counter(
            "treadle.tool.calls", description="Remote tool calls, by tool and outcome")
        self.timeouts = meter.create_counter(
            "treadle.tool.timeouts", description="Remote tool calls not answered in time")
        self.latency = meter.create_histogram(
            "treadle.tool.latency", unit="s", description="Remote tool call latency")


class ToolHub:
    """The server's view of every attached tool stream."""

    def __init__(
        self,
        *,
        timeout: float = DEFAULT_TOOL_TIMEOUT,
        server_id: str = "",
        meter: metrics.Meter | None = None,
    ) -> None:
        self.timeout = timeout
        self.server_id = server_id
        self._streams: list[ToolStream] = []
        self._turn: dict[str, int] = {}
        self._changed = asyncio.Condition()
        self._draining = False
        self._metrics = _Metrics(meter or metrics.NoOpMeter("treadle"))

    # --- attachment ---------------------------------------------------------------------------

    @property
    def draining(self) -> bool:
        return self._draining

    async def attach(self, stream: ToolStream) -> None:
        self._streams.append(stream)
        self._metrics.streams_started.add(1)
        log.info("tool stream %s attached: %s", stream.instance_id, ", ".join(stream.tools))
        await self._notify()

    async def detach(self, stream: ToolStream, reason: str = "") -> None:
        if stream not in self._streams:
            return
        self._streams.remove(stream)
        if stream.pending:
            self._metrics.streams_failed.add(1)
        names = ", ".join(stream.tools)
        stream.fail_pending(
            f"the process serving tool(s) {names} disconnected before answering"
            + (f" ({reason})" if reason else "")
        )
        log.info("tool stream %s detached", stream.instance_id)
        await self._notify()

    def record_refused(self) -> None:
        self._metrics.streams_failed.add(1)

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    def streams(self) -> list[ToolStream]:
        """Every open stream, in attach order."""
        return [s for s in self._streams if not s.closed]

    def replicas(self, name: str) -> list[ToolStream]:
        return [s for s in self._streams if name in s.tools and not s.closed]

    def definition(self, name: str) -> prompt_pb2.ToolDefinition | None:
        """The declaration models see; with replicas, the most recently attached one."""
        replicas = self.replicas(name)
        return replicas[-1].tools[name] if replicas else None

    async def wait_attached(self, name: str, count: int = 1, timeout: float | None = None) -> None:
        """Wait until at least ``count`` streams serve ``name`` (tests and start-up ordering)."""

        async def wait() -> None:
            async with self._changed:
                await self._changed.wait_for(lambda: len(self.replicas(name)) >= count)

        await asyncio.wait_for(wait(), timeout)

    # --- calls --------------------------------------------------------------------------------

    def _pick(self, name: str) -> ToolStream:
        replicas = self.replicas(name)
        if not replicas:
            raise ToolCallError(f"tool {name!r} is not attached")
        turn = self._turn.get(name, 0)
        self._turn[name] = turn + 1
        return replicas[turn % len(replicas)]

    async def call(
        self, invocation: tool_service_pb2.ToolInvocation, timeout: float | None = None
    ) -> tool_service_pb2.ToolCallResult:
        """Send ``invocation`` (its id and deadline are filled in here) and wait for the answer."""
        name = invocation.tool_name
        if self._draining:
            raise ToolCallError(f"tool {name!r} is unavailable: the server is shutting down")
        stream = self._pick(name)
        timeout = self.timeout if timeout is None else timeout
        invocation.invocation_id = stream.next_id()
        invocation.deadline.FromNanoseconds(time.time_ns() + int(timeout * 1e9))
        future: asyncio.Future[tool_service_pb2.ToolCallResult] = (
            asyncio.get_running_loop().create_future()
        )
        stream.pending[invocation.invocation_id] = future
        stream.send(tool_service_pb2.ToolServiceAttachResponse(call=invocation))
        started = time.monotonic()
        outcome = "error"
        try:
            result = await asyncio.wait_for(asyncio.shield(future), timeout)
            outcome = "error" if result.WhichOneof("outcome") == "error" else "ok"
            return result
        except TimeoutError:
            outcome = "timeout"
            self._metrics.timeouts.add(1, {"tool": name})
            self._cancel(stream, invocation.invocation_id, "timeout")
            raise ToolCallError(f"tool {name!r} did not answer within {timeout:g}s") from None
        except asyncio.CancelledError:
            outcome = "cancelled"
            self._cancel(stream, invocation.invocation_id, "run cancelled")
            raise
        finally:
            self._metrics.calls.add(1, {"tool": name, "outcome": outcome})
            self._metrics.latency.record(time.monotonic() - started, {"tool": name})

    def _cancel(self, stream: ToolStream, invocation_id: str, reason: str) -> None:
        future = stream.pending.pop(invocation_id, None)
        if future is not None:
            future.cancel()
        if not stream.closed:
            stream.send(tool_service_pb2.ToolServiceAttachResponse(
                cancel=remote_pb2.CancelInvocation(invocation_id=invocation_id, reason=reason)))

    # --- shutdown -----------------------------------------------------------------------------

    async def drain(self, grace: float) -> None:
        """Refuse new calls, tell every stream, let in-flight calls finish within ``grace``,
        then end the streams (their processes reconnect elsewhere)."""
        self._draining = True
        streams = list(self._streams)
        for stream in streams:
            stream.send(tool_service_pb2.ToolServiceAttachResponse(
                drain=remote_pb2.Drain(grace_ms=int(grace * 1000))))
        pending = [f for s in streams for f in s.pending.values()]
        if pending:
            await asyncio.wait(pending, timeout=grace)
        for stream in streams:
            stream.fail_pending("the server is shutting down")
            stream.end()
