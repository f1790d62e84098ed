"""Scoring finished runs off the request path.

``Scoring.run_finished`` is called by the loop when a run ends with ``finish``: it applies each
scorer's filter and sampling (cheap, in memory) and hands the matches to a background task that
queues them (one ``scores`` row per scorer and run). The stream's end never waits for either.
Workers in every replica claim due rows, score them (a built-in, a Python scorer registered
with the app, or a remote scorer attached over ``ScorerService``), store the score and emit a
``gen_ai.evaluation.result`` event in a ``score`` span on the run's trace. A failure is retried
with exponential backoff up to ``max_attempts``; a replica that dies holding a row loses its
claim after the scorer's timeout plus ``LEASE_GRACE``, and another replica (or the same one
restarted) scores it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import inspect
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import NonRecordingSpan, SpanContext, SpanKind, Status, StatusCode, TraceFlags, Tracer

from ..agents import Agent, ScorerRef
from ..core.errors import FailedPreconditionError, InvalidArgumentError, NotFoundError
from . import builtins, rules
from .builtins import ScoreResult, ScorerError, ScoringRun
from .payload import run_from_payload, run_to_payload, scorer_to_dict
from .store import Job, ScoreStore, StoredScore

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 60.0
LEASE_GRACE = 5.0
"""Seconds a claim outlives the scorer's timeout before another replica may take the row."""
MAX_ATTEMPTS = 5
BACKOFF_BASE = 1.0
BACKOFF_MAX = 60.0
POLL_SECONDS = 1.0
"""How often an idle worker looks for rows other replicas queued or whose backoff ran out."""
WORKERS = 4
CLAIM_BATCH = 8
"""Rows a worker claims in one transaction and scores at once."""
HAND_OVER_SECONDS = 0.05
"""How long finished runs gather before they are queued together (after their streams ended)."""

EVALUATION_EVENT = "gen_ai.evaluation.result"


def sampled(ratio: float | None, key: str) -> bool:
    """Whether a run is in a ``ratio`` sample: a hash of its trace id (``key``) mapped onto [0, 1)
    below the ratio. Deterministic, so scorers at one ratio pick the same runs, and a lower ratio
    picks a subset of a higher one."""
    if ratio is None or ratio >= 1:
        return True
    point = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big") / 2**64
    return point < ratio


def filter_fields(name: str) -> bool:
    return name in ("threadId", "resourceId") or (name.startswith("requestContext.") and len(name) > 15)


def check_scorer(ref: ScorerRef, path: str) -> None:
    """``InvalidArgumentError`` naming the first bad part of a scorer's definition."""
    try:
        if ref.builtin:
            builtins.parse(ref.builtin, ref.options)
        elif ref.options:
            raise ValueError("options are only for built-in scorers (set builtin)")
        if ref.filter:
            rules.check_group(ref.filter, "filter", filter_fields)
    except ValueError as e:
        raise InvalidArgumentError(f"{path}: {e}") from None


@dataclass
class FinishedRun:
    """What the loop hands over when a run finishes (built only for agents with scorers)."""

    agent: Agent
    run: ScoringRun


@dataclass
class _Stats:
    enqueued: int = 0
    scored: int = 0
    failed: int = 0
    retried: int = 0


class Scoring:
    def __init__(self, models: Any, tracer: Tracer) -> None:
        self.models = models
        self.tracer = tracer
        self.store: ScoreStore | None = None
        self.replica = f"scorer-{uuid.uuid4().hex[:12]}"
        self.code_scorers: dict[str, Any] = {}
        """Python scorers by id (``TreadleApp.add_scorer``)."""
        self.remote: Any = None
        """Attached remote scorers (``ScorerHub``), when the server has them."""
        self.judge_for: Callable[[Job, Any], Any] = lambda job, options: options
        """Seam for agent versions: the judge options a job's scoring uses (identity here)."""
        self.claim_seconds = DEFAULT_TIMEOUT + LEASE_GRACE
        """How long a claim on a row lasts (``TREADLE_SCORER_CLAIM``); a scoring may take this
        less ``LEASE_GRACE`` at most."""
        self.stats = _Stats()
        self._wake = asyncio.Event()
        self._workers: list[asyncio.Task[None]] = []
        self._closing = False
        self._handed: list[tuple[Agent, ScoringRun, list[ScorerRef]]] = []
        self._flusher: asyncio.Task[None] | None = None

    # --- on the request path: filter, sample, hand over ----------------------------------------

    def on_loop_finish(self, agent: Agent, run_id: str, ml: Any, options: Any, span_context: Any,
                       agent_version: str = "") -> None:
        """The loop's ``on_finish``: the run as the scorers will see it, then ``run_finished``."""
        memory = options.memory
        valid = span_context is not None and span_context.is_valid
        structured = options.structured_output
        run = ScoringRun(
            run_id=run_id, agent_id=agent.id, input_messages=list(ml.get_input()),
            remembered_messages=list(ml.get_remembered()), system_messages=list(ml.get_all_system_messages()),
            output=list(ml.get_response()), thread_id=memory.thread if memory else "",
            resource_id=memory.resource if memory else "", request_context=dict(options.request_context or {}),
            trace_id=f"{span_context.trace_id:032x}" if valid else "",
            span_id=f"{span_context.span_id:016x}" if valid else "",
            structured_output=structured.get("schema") if isinstance(structured, dict) else None,
            agent_version=agent_version,
        )
        self.run_finished(FinishedRun(agent, run))

    def run_finished(self, finished: FinishedRun) -> None:
        """Called by the loop after ``finish``; never blocks and never raises."""
        if self.store is None or self._closing:
            return
        try:
            run = finished.run
            key = run.trace_id or run.run_id
            record = {"threadId": run.thread_id, "resourceId": run.resource_id,
                      "requestContext": run.request_context}
            refs = [r for r in finished.agent.scorers if sampled(r.ratio, key) and rules.matches(r.filter, record)]
        except Exception:
            log.warning("scorers of run %s could not be matched", finished.run.run_id, exc_info=True)
            return
        if not refs:
            return
        self._handed.append((finished.agent, run, refs))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.get_running_loop().create_task(self._flush())

    async def _flush(self) -> None:
        """Queue what runs handed over, in one transaction per ``HAND_OVER_SECONDS``: after the
        streams that handed them over have ended, and in as few writes as the traffic allows."""
        assert self.store is not None
        while self._handed:
            if not self._closing:
                await asyncio.sleep(HAND_OVER_SECONDS)
            handed, self._handed = self._handed, []
            try:
                jobs = []
                for agent, run, refs in handed:
                    payload = run_to_payload(run)
                    jobs += [self._job(agent.id, run, ref, payload, "live") for ref in refs]
                self.stats.enqueued += await self.store.enqueue(jobs)
                self._wake.set()
            except Exception:
                log.warning("could not queue the scoring of %d run(s)", len(handed), exc_info=True)

    def _job(self, agent_id: str, run: ScoringRun, ref: ScorerRef, payload: dict[str, Any], source: str) -> Job:
        return Job(run_id=run.run_id, scorer_id=ref.scorer_id, agent_id=agent_id, scorer=scorer_to_dict(ref),
                   payload=payload, source=source, agent_version=run.agent_version, thread_id=run.thread_id,
                   resource_id=run.resource_id, trace_id=run.trace_id, span_id=run.span_id)

    # --- workers ----------------------------------------------------------------------------------

    def start(self, workers: int = WORKERS) -> None:
        if self._workers or self.store is None:
            return
        self._closing = False
        self._workers = [asyncio.create_task(self._work(i), name=f"scorer-worker-{i}") for i in range(workers)]

    async def stop(self) -> None:
        """Let queued hand-overs reach the store, then stop the workers (a row being scored stays
        claimed until its claim runs out, then any replica scores it)."""
        self._closing = True
        if self._flusher is not None:
            await asyncio.gather(self._flusher, return_exceptions=True)
        for task in self._workers:
            task.cancel()
        for task in self._workers:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._workers = []

    async def _work(self, index: int) -> None:
        assert self.store is not None
        while True:
            try:
                jobs = await self.store.claim(self.replica, self._lease_us(), CLAIM_BATCH)
            except Exception:
                log.warning("could not claim scores", exc_info=True)
                jobs = []
            if not jobs:
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), POLL_SECONDS)
                continue
            await asyncio.gather(*(self._run(job) for job in jobs))

    def _lease_us(self) -> int:
        return int(self.claim_seconds * 1_000_000)

    async def _run(self, job: Job) -> bool:
        """Score one claimed row and record the outcome."""
        assert self.store is not None
        try:
            result = await self.score(job)
        except Exception as e:
            message = str(e) or type(e).__name__
            fail_open = job.scorer.get("failurePolicy") == "fail_open"
            last = fail_open or job.attempts >= MAX_ATTEMPTS
            retry = None if last else int(min(BACKOFF_MAX, BACKOFF_BASE * 2 ** (job.attempts - 1)) * 1_000_000)
            log.warning("scorer %s on run %s failed (attempt %d of %d%s): %s", job.scorer_id, job.run_id,
                        job.attempts, MAX_ATTEMPTS, ", fail_open: skipped" if fail_open else "", message)
            with contextlib.suppress(Exception):
                await self.store.fail(job, self.replica, message, retry, "skipped" if fail_open else "failed")
            if last:
                self.stats.failed += 1
            else:
                self.stats.retried += 1
            return False
        if not await self.store.succeed(job, self.replica, result.score, result.reason, result.details):
            log.info("score of %s on run %s was taken over by another replica", job.scorer_id, job.run_id)
            return False
        self.stats.scored += 1
        return True

    async def score(self, job: Job) -> ScoreResult:
        """Run the job's scorer in a ``score`` span under the run's agent span, with the
        evaluation event; raises on any failure (the caller retries)."""
        ref = job.scorer
        timeout = min(float(ref.get("timeout") or DEFAULT_TIMEOUT), self.claim_seconds - LEASE_GRACE)
        run = run_from_payload(job.payload, run_id=job.run_id, agent_id=job.agent_id, thread_id=job.thread_id,
                               resource_id=job.resource_id, trace_id=job.trace_id, span_id=job.span_id,
                               agent_version=job.agent_version)
        span = self.tracer.start_span(f"score {job.scorer_id}", context=_parent(job), kind=SpanKind.INTERNAL,
                                      attributes={"gen_ai.operation.name": "evaluate", "treadle.run.id": job.run_id,
                                                  "treadle.scorer.id": job.scorer_id, "treadle.score.source": job.source,
                                                  "gen_ai.agent.id": job.agent_id})
        try:
            with trace.use_span(span, end_on_exit=False):
                result = await asyncio.wait_for(self._call(job, ref, run), timeout)
            if not 0 <= result.score <= 1:
                raise ScorerError(f"scorer {job.scorer_id!r} answered {result.score}, outside [0, 1]")
            span.add_event(EVALUATION_EVENT, {
                "gen_ai.evaluation.name": job.scorer_id, "gen_ai.evaluation.score.value": result.score,
                "gen_ai.evaluation.explanation": result.reason, "treadle.run.id": job.run_id,
                "treadle.score.source": job.source})
            return result
        except TimeoutError:
            span.set_status(Status(StatusCode.ERROR, "timed out"))
            raise ScorerError(f"scorer {job.scorer_id!r} took longer than {timeout:g}s") from None
        except Exception as e:
            span.set_status(Status(StatusCode.ERROR, str(e)))
            raise
        finally:
            span.end()

    async def _call(self, job: Job, ref: dict[str, Any], run: ScoringRun) -> ScoreResult:
        if ref.get("builtin"):
            options = ref.get("options")
            if ref["builtin"] == "llm-judge":
                options = self.judge_for(job, options)
            return await builtins.run_builtin(ref["builtin"], options, run, self.models, self.tracer)
        scorer = self.code_scorers.get(job.scorer_id)
        if scorer is not None:
            out = scorer.score(run) if hasattr(scorer, "score") else scorer(run)
            if inspect.isawaitable(out):
                out = await out
            if not isinstance(out, ScoreResult):
                raise ScorerError(f"scorer {job.scorer_id!r} returned {type(out).__name__}, not a ScoreResult")
            return out
        if self.remote is not None and self.remote.attached(job.scorer_id):
            result: ScoreResult = await self.remote.score(job, run)
            return result
        raise ScorerError(f"scorer {job.scorer_id!r} is neither built in, registered nor attached")

    # --- on demand --------------------------------------------------------------------------------

    async def score_now(self, agent: Agent, run: ScoringRun, payload: dict[str, Any] | None,
                        scorer_ids: list[str]) -> list[StoredScore]:
        """Score ``run`` now with ``agent``'s scorers (``scorer_ids``, or all), stored as
        ``test`` scores (replacing earlier test scores of the same run and scorer)."""
        if self.store is None:
            raise FailedPreconditionError("scores need a store")
        by_id = {r.scorer_id: r for r in agent.scorers}
        unknown = [s for s in scorer_ids if s not in by_id]
        if unknown:
            raise NotFoundError(f"agent {agent.id!r} has no scorer {unknown[0]!r} (it has: "
                                f"{', '.join(by_id) or 'none'})")
        refs = [by_id[s] for s in scorer_ids] if scorer_ids else list(by_id.values())
        if not refs:
            raise FailedPreconditionError(f"agent {agent.id!r} has no scorers")
        payload = payload if payload is not None else run_to_payload(run)
        out = []
        for ref in refs:
            job = self._job(agent.id, run, ref, payload, "test")
            taken = await self.store.take(job, self.replica, self._lease_us())
            try:
                result = await self.score(taken)
            except Exception as e:  # on demand: not retried, the error is the answer
                await self.store.fail(taken, self.replica, str(e) or type(e).__name__, None)
                raise FailedPreconditionError(f"scorer {ref.scorer_id!r} could not score run {run.run_id!r}: {e}") from None
            await self.store.succeed(taken, self.replica, result.score, result.reason, result.details)
            out.extend(await self.store.get([job.id]))
        return out


def _parent(job: Job) -> Any:
    """The run's agent span as the parent of the score span (a new trace when it had none)."""
    if not job.trace_id or not job.span_id:
        return None
    try:
        context = SpanContext(int(job.trace_id, 16), int(job.span_id, 16), is_remote=True,
                              trace_flags=TraceFlags(TraceFlags.SAMPLED))
    except ValueError:
        return None
    return trace.set_span_in_context(NonRecordingSpan(context))
