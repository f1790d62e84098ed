"""``ScoreService``: list, aggregate and compute scores of finished runs (``treadle.scoring``)."""

from __future__ import annotations

import base64
import binascii
import json
from datetime import UTC, datetime
from typing import Any

import grpc

from ..core.errors import InvalidArgumentError, NotFoundError
from ..registry import Registry
from ..scoring.builtins import ScoringRun
from ..scoring.payload import message_from_dict
from ..scoring.service import Scoring
from ..scoring.store import ScoreFilter, StoredScore, stored_run
from ..v1 import score_service_pb2 as pb, score_service_pb2_grpc
from ..wire.data import datetime_to_ts, dict_to_struct, message_to_proto, system_messages_to_proto
from ..core.messages import SystemMessage
from .auth import require_admin
from .status import unary

SERVICE_NAME = "treadle.v1.ScoreService"
DEFAULT_PAGE_SIZE = 100
MAX_PAGE_SIZE = 1000
_SOURCES: dict[int, str] = {pb.SCORE_SOURCE_LIVE: "live", pb.SCORE_SOURCE_TEST: "test", pb.SCORE_SOURCE_UNSPECIFIED: ""}


class ScoreServicer(score_service_pb2_grpc.ScoreServiceServicer):
    def __init__(self, scoring: Scoring, registry: Registry) -> None:
        self.scoring = scoring
        self.registry = registry

    def register(self, server: grpc.aio.Server) -> None:
        score_service_pb2_grpc.add_ScoreServiceServicer_to_server(self, server)

    @property
    def _store(self) -> Any:
        if self.scoring.store is None:  # pragma: no cover - the app opens the store before serving
            raise RuntimeError("the store is not open")
        return self.scoring.store

    @unary
    async def ListScores(self, request: pb.ListScoresRequest, context: grpc.aio.ServicerContext) -> pb.ListScoresResponse:
        require_admin("reading scores")
        if request.page_size < 0:
            raise InvalidArgumentError("page_size must be >= 0")
        size = min(request.page_size or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)
        where = ScoreFilter(agent_id=request.agent_id, scorer_id=request.scorer_id, run_id=request.run_id,
                            thread_id=request.thread_id, source=_source(request.source),
                            start_us=_micros(request, "start_time"), end_us=_micros(request, "end_time"))
        rows = await self._store.listing(where, size + 1, _cursor(request.page_token))
        response = pb.ListScoresResponse()
        for row in rows[:size]:
            score_to_proto(row, response.scores.add())
        if len(rows) > size:
            last = rows[size - 1]
            response.next_page_token = base64.urlsafe_b64encode(
                json.dumps([last.scored_at or last.created_at, last.id]).encode()).decode()
        return response

    @unary
    async def AggregateScores(self, request: pb.AggregateScoresRequest,
                              context: grpc.aio.ServicerContext) -> pb.AggregateScoresResponse:
        require_admin("reading scores")
        buckets = request.buckets or 10
        if not 1 <= buckets <= 100:
            raise InvalidArgumentError(f"buckets must be in [1, 100], got {buckets}")
        where = ScoreFilter(agent_id=request.agent_id, scorer_id=request.scorer_id, source=_source(request.source),
                            start_us=_micros(request, "start_time"), end_us=_micros(request, "end_time"))
        response = pb.AggregateScoresResponse()
        for a in await self._store.aggregate(where, buckets):
            response.aggregates.add(agent_id=a.agent_id, scorer_id=a.scorer_id, agent_version=a.agent_version,
                                    count=a.count, mean=a.total / a.count, distribution=a.distribution,
                                    min=a.low, max=a.high)
        return response

    @unary
    async def ScoreRun(self, request: pb.ScoreRunRequest, context: grpc.aio.ServicerContext) -> pb.ScoreRunResponse:
        require_admin("scoring runs")
        if not request.run_id:
            raise InvalidArgumentError("run_id is required")
        for i, s in enumerate(request.scorer_ids):
            if not s:
                raise InvalidArgumentError(f"scorer_ids[{i}] is empty")
        run, payload, run_agent = await self._find_run(request.run_id)
        agent = self.registry.get_agent(request.agent_id or run_agent)
        scores = await self.scoring.score_now(agent, run, payload, list(request.scorer_ids))
        response = pb.ScoreRunResponse()
        for row in scores:
            score_to_proto(row, response.scores.add())
        return response

    async def _find_run(self, run_id: str) -> tuple[ScoringRun, dict[str, Any] | None, str]:
        """A run a live scorer queued (what it saw), else a finished run on a memory thread."""
        (queued,) = await self._store.payload_of(run_id)
        if queued is not None:
            from ..scoring.payload import run_from_payload
            run = run_from_payload(queued.payload, run_id=run_id, agent_id=queued.agent_id,
                                   thread_id=queued.thread_id, resource_id=queued.resource_id,
                                   trace_id=queued.trace_id, span_id=queued.span_id,
                                   agent_version=queued.agent_version)
            return run, queued.payload, queued.agent_id
        found = await stored_run(self._store.db, run_id, 10)
        if found is None:
            raise NotFoundError(f"run {run_id!r} not found: ScoreRun scores finished runs on a memory thread, "
                                "or runs a live scorer queued")
        row, mine, history = found
        try:
            agent = self.registry.get_agent(row.agent_id)
            system = list(agent.instructions)
        except NotFoundError:
            system = []
        detail = json.loads(row.detail) if row.detail else {}
        version = (detail.get("agentVersion") or {}).get("id", "")  # the version the run resolved
        run = ScoringRun(run_id=run_id, agent_id=row.agent_id, thread_id=row.thread_id, resource_id=row.resource_id,
                         agent_version=version, input_messages=[m for m in mine if m.role == "user"],
                         remembered_messages=history, system_messages=system,
                         output=[m for m in mine if m.role != "user"])
        return run, None, row.agent_id


def score_to_proto(row: StoredScore, out: pb.Score) -> pb.Score:
    out.id, out.run_id, out.scorer_id, out.agent_id = row.id, row.run_id, row.scorer_id, row.agent_id
    out.score, out.reason = row.score or 0.0, row.reason
    if row.details:
        dict_to_struct(row.details, out.details)
    fill_run(row.payload, out.input, out.output)
    out.trace_id, out.span_id = row.trace_id, row.span_id
    out.thread_id, out.resource_id = row.thread_id, row.resource_id
    out.source = pb.SCORE_SOURCE_TEST if row.source == "test" else pb.SCORE_SOURCE_LIVE
    datetime_to_ts(datetime.fromtimestamp((row.scored_at or row.created_at) / 1e6, UTC), out.create_time)
    out.agent_version = row.agent_version
    return out


def fill_run(payload: dict[str, Any], scorer_input: pb.ScorerInput, output: Any) -> None:
    """A stored run's input and output messages (a score row's payload) into their proto form."""
    for key, target in (("inputMessages", scorer_input.input_messages),
                        ("rememberedMessages", scorer_input.remembered_messages)):
        for m in payload.get(key) or []:
            message_to_proto(message_from_dict(m), target.add())
    system_messages_to_proto([SystemMessage(s["content"], s.get("providerOptions"))
                              for s in payload.get("systemMessages") or []], scorer_input.system_messages)
    for m in payload.get("output") or []:
        message_to_proto(message_from_dict(m), output.add())


def _source(value: int) -> str:
    if value not in _SOURCES:
        raise InvalidArgumentError(f"source {value} is unknown")
    return _SOURCES[value]


def _micros(request: Any, name: str) -> int | None:
    if not request.HasField(name):
        return None
    ts = getattr(request, name)
    return int(ts.seconds * 1_000_000 + ts.nanos // 1000)


def _cursor(token: str) -> tuple[int, str] | None:
    if not token:
        return None
    try:
        when, score = json.loads(base64.urlsafe_b64decode(token.encode()))
        if not isinstance(when, int) or not isinstance(score, str):
            raise ValueError
        return when, score
    except (ValueError, binascii.Error, TypeError):
        raise InvalidArgumentError("page_token is not a next_page_token of ListScores") from None
