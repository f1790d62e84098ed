"""Serving scorers to Treadle servers over ``ScorerService.Attach``.

A scorer has an ``id`` (agents name it in ``scorers``) and a ``score(run)`` method, sync or
async, that returns a ``Score`` (or a bare number in [0, 1]); ``@scorer("id")`` makes one of a
function. ``run`` is a ``ScorerRun``: the run's input, remembered and system messages and its
stored output (``treadle.v1.Message``), with ``question`` and ``answer`` as plain text.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc
from opentelemetry.trace import TracerProvider

from treadle.v1 import message_pb2, score_service_pb2 as pb, score_service_pb2_grpc
from treadle.wire.data import dict_to_struct, struct_to_dict

from ._attach import PROTOCOL_VERSION, Attachment, Send, as_targets, cancel_all, default_instance_id
from ._connect import Connect, TLSConfig
from ._tracing import ParentContexts, invocation_span, mark_error, tracer_from

log = logging.getLogger("treadle_client")


@dataclass
class Score:
    """A scorer's answer: a score in [0, 1], why, and anything worth keeping with it."""

    score: float
    reason: str = ""
    details: dict[str, Any] = field(default_factory=dict)


def _text(message: message_pb2.Message) -> str:
    return "".join(p.text.text for p in message.content.parts if p.HasField("text"))


@dataclass
class ScorerRun:
    """One finished run, as a remote scorer sees it."""

    run_id: str
    agent_id: str
    thread_id: str
    resource_id: str
    request_context: dict[str, Any]
    input_messages: list[message_pb2.Message]
    remembered_messages: list[message_pb2.Message]
    system_messages: list[message_pb2.SystemMessage]
    output: list[message_pb2.Message]
    source: str
    """``live`` or ``test`` (scored on demand)."""
    agent_version: str = ""

    @property
    def answer(self) -> str:
        """The text of the run's assistant messages."""
        return "".join(_text(m) for m in self.output if m.role == message_pb2.MESSAGE_ROLE_ASSISTANT)

    @property
    def question(self) -> str:
        """The text of the run's last user input message."""
        for m in reversed(self.input_messages):
            if m.role == message_pb2.MESSAGE_ROLE_USER and _text(m):
                return _text(m)
        return ""


class Scorer:
    """Subclass with an ``id`` and ``score(run)``; or use ``@scorer``."""

    id: str = ""
    name: str = ""
    description: str = ""

    def score(self, run: ScorerRun) -> Any:
        raise NotImplementedError


class _FunctionScorer(Scorer):
    def __init__(self, id: str, fn: Callable[[ScorerRun], Any], description: str) -> None:
        self.id, self._fn, self.description = id, fn, description or (fn.__doc__ or "").strip()

    def score(self, run: ScorerRun) -> Any:
        return self._fn(run)


def scorer(id: str, *, description: str = "") -> Callable[[Callable[[ScorerRun], Any]], Scorer]:
    """``@scorer("id")`` over ``def f(run) -> Score | float`` (or ``async def``)."""
    def wrap(fn: Callable[[ScorerRun], Any]) -> Scorer:
        return _FunctionScorer(id, fn, description)
    return wrap


class _ScorerSession:
    def __init__(self, scorers: dict[str, Scorer], instance_id: str, tracer: Any, send: Send) -> None:
        self._scorers = scorers
        self._instance_id = instance_id
        self._tracer = tracer
        self._parents = ParentContexts()
        self._send = send
        self._running: dict[str, asyncio.Task[None]] = {}

    def handshake(self) -> pb.ScorerServiceAttachRequest:
        return pb.ScorerServiceAttachRequest(handshake=pb.ScorerHandshake(
            protocol_versions=[PROTOCOL_VERSION], instance_id=self._instance_id,
            scorers=[pb.ScorerDeclaration(id=s.id, name=s.name, description=s.description)
                     for s in self._scorers.values()],
        ))

    def on_message(self, message: pb.ScorerServiceAttachResponse) -> bool:
        kind = message.WhichOneof("message")
        if kind == "invocation":
            invocation = message.invocation
            task = asyncio.create_task(self._run(invocation))
            self._running[invocation.invocation_id] = task
            task.add_done_callback(lambda _: self._running.pop(invocation.invocation_id, None))
        elif kind == "cancel":
            running = self._running.get(message.cancel.invocation_id)
            if running is not None:
                running.cancel()
        elif kind == "drain":
            log.info("server is draining; will reconnect when it closes the stream")
        return kind == "welcome"

    async def close(self) -> None:
        await cancel_all(self._running.values())

    async def _run(self, inv: pb.ScoreInvocation) -> None:
        result = pb.ScoreInvocationResult(invocation_id=inv.invocation_id)
        run = ScorerRun(
            run_id=inv.run_id, agent_id=inv.agent_id, thread_id=inv.thread_id, resource_id=inv.resource_id,
            request_context=struct_to_dict(inv.request_context), input_messages=list(inv.input.input_messages),
            remembered_messages=list(inv.input.remembered_messages),
            system_messages=list(inv.input.system_messages), output=list(inv.output),
            source="test" if inv.source == pb.SCORE_SOURCE_TEST else "live", agent_version=inv.agent_version)
        attributes = {"gen_ai.operation.name": "evaluate", "treadle.scorer.id": inv.scorer_id,
                      "treadle.run.id": inv.run_id}
        with invocation_span(self._tracer, f"score {inv.scorer_id}", inv.trace_context, attributes,
                             self._parents) as span:
            try:
                found = self._scorers.get(inv.scorer_id)
                if found is None:
                    raise LookupError(f"scorer {inv.scorer_id!r} is not served by this process")
                out = found.score(run)
                if inspect.isawaitable(out):
                    out = await out
                answer = out if isinstance(out, Score) else Score(float(out))
                result.score, result.reason = answer.score, answer.reason
                if answer.details:
                    dict_to_struct(answer.details, result.details)
            except Exception as e:  # the server retries per the scorer's failure policy
                mark_error(span, e)
                result.error = str(e) or type(e).__name__
        self._send(pb.ScorerServiceAttachRequest(result=result))


def _open(channel: grpc.aio.Channel, requests: AsyncIterator[Any], metadata: Any) -> Any:
    return score_service_pb2_grpc.ScorerServiceStub(channel).Attach(requests, metadata=metadata)


async def serve_scorers(
    scorers: Sequence[Scorer],
    targets: str | Sequence[str],
    *,
    instance_id: str | None = None,
    tracer_provider: TracerProvider | None = None,
    backoff: tuple[float, float] = (0.1, 5.0),
    token: str | None = None,
    tls: TLSConfig | None = None,
) -> Attachment:
    """Serve ``scorers`` to every server in ``targets`` until ``await attachment.close()``.

    Each scoring runs in a span that is a child of the server's ``score`` span. ``token``
    (default: ``TREADLE_TOKEN``) and ``tls`` are as for ``AgentClient``.
    """
    by_id: dict[str, Scorer] = {}
    for s in scorers:
        if not isinstance(s, Scorer) or not s.id:
            raise TypeError(f"serve_scorers takes Scorer objects with an id, got {s!r}")
        if s.id in by_id:
            raise ValueError(f"scorer {s.id!r} is given twice")
        by_id[s.id] = s
    if not by_id:
        raise ValueError("give at least one scorer")
    tracer = tracer_from(tracer_provider)
    iid = instance_id or default_instance_id()
    return Attachment(
        as_targets(targets), _open, lambda send: _ScorerSession(by_id, iid, tracer, send), backoff,
        Connect(tls, token), "scorer " + ", ".join(by_id),
    )
