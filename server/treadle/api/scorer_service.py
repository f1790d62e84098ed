"""``ScorerService.Attach``: remote scorers, in any language, over one bidirectional stream.

The first message must be a handshake declaring scorer ids (checked as processor ids are; with
auth, the credential's ``processors`` scope must allow each, and an id attached under one
credential cannot be attached under another). Several streams serving one id are replicas,
used in turn. A scoring whose stream goes away, or that is not answered within its timeout,
fails (``ScorerError``) and the queue's retry and failure policy take over.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import re
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

import grpc

from ..scoring.builtins import ScoreResult, ScorerError, ScoringRun
from ..scoring.store import Job
from ..tracing import inject_context
from ..v1 import remote_pb2, score_service_pb2 as pb, score_service_pb2_grpc
from ..wire.data import dict_to_struct, struct_to_dict
from .handshake import HandshakeError, accept, negotiate_version
from .identity import Owners
from .score_service import fill_run

log = logging.getLogger(__name__)

SCORER_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$")
SERVICE_NAME = pb.DESCRIPTOR.services_by_name["ScorerService"].full_name
_END = object()


@dataclass(eq=False)
class ScorerStream:
    instance_id: str
    scorers: list[pb.ScorerDeclaration]
    outbound: asyncio.Queue[Any] = field(default_factory=asyncio.Queue)
    pending: dict[str, asyncio.Future[pb.ScoreInvocationResult]] = field(default_factory=dict)
    closed: bool = False
    _ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def resolve(self, result: pb.ScoreInvocationResult) -> None:
        future = self.pending.pop(result.invocation_id, None)
        if future is not None and not future.done():
            future.set_result(result)

    def fail_pending(self, reason: str) -> None:
        self.closed = True
        pending, self.pending = self.pending, {}
        for future in pending.values():
            if not future.done():
                future.set_exception(ScorerError(reason))


class ScorerHub:
    """Attached scorer streams by scorer id; ``Scoring.remote``."""

    def __init__(self) -> None:
        self.server_id = f"treadle-{uuid.uuid4().hex[:8]}"
        self._streams: dict[str, list[ScorerStream]] = {}
        self._turn: dict[str, int] = {}
        self.draining = False

    def attached(self, scorer_id: str) -> bool:
        return any(not s.closed for s in self._streams.get(scorer_id, []))

    def attach(self, stream: ScorerStream) -> None:
        for d in stream.scorers:
            self._streams.setdefault(d.id, []).append(stream)

    def detach(self, stream: ScorerStream, reason: str) -> None:
        stream.fail_pending(f"scorer stream {stream.instance_id} went away: {reason}")
        for d in stream.scorers:
            streams = self._streams.get(d.id, [])
            if stream in streams:
                streams.remove(stream)

    def _pick(self, scorer_id: str) -> ScorerStream:
        streams = [s for s in self._streams.get(scorer_id, []) if not s.closed]
        if not streams:
            raise ScorerError(f"remote scorer {scorer_id!r} is not attached")
        turn = self._turn.get(scorer_id, 0)
        self._turn[scorer_id] = turn + 1
        return streams[turn % len(streams)]

    async def score(self, job: Job, run: ScoringRun) -> ScoreResult:
        stream = self._pick(job.scorer_id)
        invocation = pb.ScoreInvocation(
            invocation_id=f"{stream.instance_id}/{next(stream._ids)}", scorer_id=job.scorer_id, run_id=job.run_id,
            agent_id=job.agent_id, thread_id=job.thread_id, resource_id=job.resource_id,
            source=pb.SCORE_SOURCE_TEST if job.source == "test" else pb.SCORE_SOURCE_LIVE,
            agent_version=job.agent_version)
        if run.request_context:
            dict_to_struct(run.request_context, invocation.request_context)
        fill_run(job.payload, invocation.input, invocation.output)
        carrier = inject_context()  # the scoring span: the scorer's span is its child
        invocation.trace_context.traceparent = carrier.get("traceparent", "")
        invocation.trace_context.tracestate = carrier.get("tracestate", "")
        future: asyncio.Future[pb.ScoreInvocationResult] = asyncio.get_running_loop().create_future()
        stream.pending[invocation.invocation_id] = future
        stream.outbound.put_nowait(pb.ScorerServiceAttachResponse(invocation=invocation))
        try:
            result = await future
        except asyncio.CancelledError:  # timed out: tell the process
            stream.pending.pop(invocation.invocation_id, None)
            if not stream.closed:
                stream.outbound.put_nowait(pb.ScorerServiceAttachResponse(
                    cancel=remote_pb2.CancelInvocation(invocation_id=invocation.invocation_id, reason="timeout")))
            raise
        if result.error:
            raise ScorerError(f"remote scorer {job.scorer_id!r} failed: {result.error}")
        return ScoreResult(result.score, result.reason, struct_to_dict(result.details))

    def drain(self, grace_ms: int) -> None:
        self.draining = True
        for streams in self._streams.values():
            for s in streams:
                s.outbound.put_nowait(pb.ScorerServiceAttachResponse(drain=remote_pb2.Drain(grace_ms=grace_ms)))

    def close_all(self) -> None:
        for streams in list(self._streams.values()):
            for s in list(streams):
                s.outbound.put_nowait(_END)


def check_handshake(request: pb.ScorerServiceAttachRequest) -> int:
    if request.WhichOneof("message") != "handshake":
        raise HandshakeError(grpc.StatusCode.INVALID_ARGUMENT, "the first message on a scorer stream must be a handshake")
    hs = request.handshake
    version = negotiate_version(hs.protocol_versions, "process")
    if not hs.scorers:
        raise HandshakeError(grpc.StatusCode.INVALID_ARGUMENT, "handshake declares no scorers")
    seen: set[str] = set()
    for i, d in enumerate(hs.scorers):
        if not SCORER_ID.match(d.id):
            raise HandshakeError(grpc.StatusCode.INVALID_ARGUMENT, f"scorers[{i}].id {d.id!r} is invalid: use 1-128 "
                                 "letters, digits, '_', '.', ':' or '-', starting with a letter or digit")
        if d.id in seen:
            raise HandshakeError(grpc.StatusCode.INVALID_ARGUMENT, f"scorers[{i}].id: scorer {d.id!r} is declared twice")
        seen.add(d.id)
    return version


class ScorerServicer(score_service_pb2_grpc.ScorerServiceServicer):
    def __init__(self, hub: ScorerHub) -> None:
        self.hub = hub
        self.owners = Owners("processors")

    def register(self, server: grpc.aio.Server) -> None:
        score_service_pb2_grpc.add_ScorerServiceServicer_to_server(self, server)

    async def Attach(  # noqa: N802 (gRPC method name)
        self, request_iterator: AsyncIterator[pb.ScorerServiceAttachRequest], context: grpc.aio.ServicerContext,
    ) -> AsyncIterator[pb.ScorerServiceAttachResponse]:
        requests = aiter(request_iterator)
        accepted = await accept(requests, context, self.owners, draining=self.hub.draining, check=check_handshake,
                                names=lambda m: (d.id for d in m.handshake.scorers))
        if accepted is None:
            return
        first, version, owner = accepted
        hs = first.handshake
        declared = [pb.ScorerDeclaration(id=d.id, name=d.name or d.id, description=d.description) for d in hs.scorers]
        stream = ScorerStream(hs.instance_id or context.peer(), declared)
        self.hub.attach(stream)
        log.info("scorer stream %s attached: %s", stream.instance_id, ", ".join(d.id for d in declared))
        reader = asyncio.create_task(self._read(requests, stream))
        try:
            yield pb.ScorerServiceAttachResponse(welcome=pb.ScorerWelcome(
                protocol_version=version, scorers=declared, server_id=self.hub.server_id))
            while True:
                message = await stream.outbound.get()
                if message is _END:
                    break
                yield message
        finally:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader
            self.hub.detach(stream, "stream closed")
            self.owners.release((d.id for d in declared), owner)

    async def _read(self, requests: AsyncIterator[pb.ScorerServiceAttachRequest], stream: ScorerStream) -> None:
        reason = "stream closed"
        try:
            async for request in requests:
                if request.WhichOneof("message") == "result":
                    stream.resolve(request.result)
                else:
                    log.warning("scorer stream %s sent a second handshake; ignored", stream.instance_id)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # the peer vanished (reset, SIGKILL)
            reason = f"{type(e).__name__}: {e}"
        self.hub.detach(stream, reason)
        stream.outbound.put_nowait(_END)
