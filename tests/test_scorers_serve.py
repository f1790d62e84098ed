"""Scorers against ``treadle serve`` processes, on both engines: every built-in on a live run,
an LLM judge kept out of the user's stream, usage and thread, sampling that picks the same runs
for two scorers, a retry that never duplicates a score, a server killed with a scoring in
progress that resumes after a restart, filters over the request context, ScoreRun on a stored
run, and bad definitions refused with nothing stored."""

from __future__ import annotations

import json
import signal
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import json_format

from tests.support import OpenAIServer, Turn
from tests.support.databases import Database
from tests.support.otlp import OtlpReceiver, otlp  # noqa: F401
from tests.test_cli import READY_TIMEOUT, ServeProcess, clean_env
from treadle.scoring import sampled
from treadle.v1 import agent_service_pb2, agent_service_pb2_grpc, score_service_pb2 as spb, score_service_pb2_grpc
from treadle.v1 import thread_service_pb2, thread_service_pb2_grpc

MODEL = "openai/gpt-4o-mini"
JUDGE = {"builtin": "llm-judge", "id": "correct",
         "options": {"model": MODEL, "instructions": "Score 1 when the answer names the capital correctly."}}


@pytest.fixture
def serve_on(database: Database, tmp_path: Path) -> Iterator[Callable[..., ServeProcess]]:
    procs: list[ServeProcess] = []

    def start(server: OpenAIServer, agents: list[dict[str, Any]], **settings: str) -> ServeProcess:
        config = tmp_path / "agents.yaml"
        config.write_text(json.dumps({"agents": agents}))
        env = clean_env(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-test", **settings)
        proc = ServeProcess(*database.serve_args, "--config", str(config), env=env)
        procs.append(proc)
        proc.wait_ready()
        return proc

    yield start
    for proc in procs:
        proc.close()


def agents_stub(proc: ServeProcess) -> Any:
    return agent_service_pb2_grpc.AgentServiceStub(grpc.insecure_channel(proc.target))


def scores_stub(proc: ServeProcess) -> Any:
    return score_service_pb2_grpc.ScoreServiceStub(grpc.insecure_channel(proc.target))


def traceparent(trace_id: str) -> tuple[tuple[str, str], ...]:
    """Call metadata that makes the run part of the caller's trace ``trace_id`` (32 hex digits)."""
    return (("traceparent", f"00-{trace_id}-{uuid.uuid4().hex[:16]}-01"),)


def stream(proc: ServeProcess, agent: str, prompt: str, trace_id: str | None = None,
           **options: Any) -> tuple[str, list[Any]]:
    """The run id and its chunks, as a client sees them (in the caller's trace ``trace_id``)."""
    request = agent_service_pb2.StreamRequest(agent_id=agent, prompt=prompt)
    json_format.ParseDict(options, request.options)
    metadata = traceparent(trace_id) if trace_id else None
    chunks = [c for r in agents_stub(proc).Stream(request, timeout=60, metadata=metadata) for c in r.chunks]
    return chunks[0].run_id, chunks


def wait_scores(proc: ServeProcess, count: int, **where: Any) -> list[Any]:
    stub = scores_stub(proc)
    deadline = time.monotonic() + READY_TIMEOUT
    while True:
        scores = list(stub.ListScores(spb.ListScoresRequest(**where), timeout=10).scores)
        if len(scores) >= count or time.monotonic() > deadline:
            assert len(scores) == count, [(s.scorer_id, s.run_id) for s in scores]
            return scores
        time.sleep(0.05)


def test_every_builtin_scores_a_live_run_and_the_judge_stays_out_of_the_users_run(
        serve_on: Any, openai_server: Any, otlp: OtlpReceiver) -> None:  # noqa: F811
    server: OpenAIServer = openai_server([
        Turn.say("Paris, write to ada@example.com"),
        Turn.say('{"score": 0.75, "reason": "right city"}'),
    ])
    agent = {"id": "geo", "model": MODEL, "instructions": "Answer in one word.", "scorers": [
        {"builtin": "exact-match", "options": {"expected": "Paris"}},
        {"builtin": "regex-match", "options": {"pattern": "^paris", "ignoreCase": True}},
        {"builtin": "json-schema", "options": {"schema": {"type": "object"}}},
        {"builtin": "tool-called", "options": {"tool": "lookup"}},
        {"builtin": "tool-not-called", "options": {"tool": "lookup"}},
        {"builtin": "answer-length", "options": {"min": 1, "max": 100}},
        {"builtin": "pii"},
        JUDGE,
    ]}
    proc = serve_on(server, [agent], OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=otlp.endpoint,
                    OTEL_EXPORTER_OTLP_PROTOCOL="http/protobuf", OTEL_BSP_SCHEDULE_DELAY="100")
    run_id, chunks = stream(proc, "geo", "Capital of France?", memory={"resource": "u1", "threadId": "t1"})

    text = "".join(c.text_delta.text for c in chunks if c.HasField("text_delta"))
    assert text == "Paris, write to ada@example.com"  # the judge's answer never reaches the stream
    finish = [c.finish for c in chunks if c.HasField("finish")][-1]

    scores = {s.scorer_id: s for s in wait_scores(proc, 8, run_id=run_id)}
    assert {k: s.score for k, s in scores.items()} == {
        "exact-match": 0.0, "regex-match": 1.0, "json-schema": 0.0, "tool-called": 0.0, "tool-not-called": 1.0,
        "answer-length": 1.0, "pii": 1.0, "correct": 0.75}
    assert scores["correct"].reason == "right city"
    assert "email" in scores["pii"].reason
    judged = scores["correct"]
    assert judged.thread_id == "t1" and judged.resource_id == "u1" and judged.source == spb.SCORE_SOURCE_LIVE
    assert [m.content.parts[0].text.text for m in judged.input.input_messages] == ["Capital of France?"]
    assert [s.content for s in judged.input.system_messages] == ["Answer in one word."]
    assert judged.output[0].content.parts[-1].text.text == "Paris, write to ada@example.com"
    assert len(judged.trace_id) == 32 and len(judged.span_id) == 16

    # The judge saw its own instructions and the run; the user's thread and usage saw none of it.
    system = server.requests[1]["messages"][0]["content"]
    assert system.startswith("Score 1 when the answer names the capital correctly.")
    threads = thread_service_pb2_grpc.ThreadServiceStub(grpc.insecure_channel(proc.target))
    listed = threads.ListMessages(thread_service_pb2.ListMessagesRequest(resource_id="u1", thread_id="t1"), timeout=10)
    assert [m.content.parts[-1].text.text for m in listed.messages] == [
        "Capital of France?", "Paris, write to ada@example.com"]
    [run] = threads.ListRuns(thread_service_pb2.ListRunsRequest(resource_id="u1", thread_id="t1"), timeout=10).runs
    assert run.usage == finish.total_usage and finish.total_usage.input_tokens > 0

    # The score is an evaluation event on the run's trace, in a span under the run's agent span.
    deadline = time.monotonic() + READY_TIMEOUT
    events: list[Any] = []
    while not events and time.monotonic() < deadline:
        spans = [s for r in otlp.trace_requests() for rs in r.resource_spans for ss in rs.scope_spans for s in ss.spans]
        events = [(s, e) for s in spans if s.name == "score correct" for e in s.events
                  if e.name == "gen_ai.evaluation.result"]
        time.sleep(0.05)
    [(span, event)] = events
    assert span.trace_id.hex() == judged.trace_id and span.parent_span_id.hex() == judged.span_id
    attrs = {a.key: a.value for a in event.attributes}
    assert attrs["gen_ai.evaluation.name"].string_value == "correct"
    assert attrs["gen_ai.evaluation.score.value"].double_value == 0.75
    assert any(s.name.startswith("chat ") and s.parent_span_id == span.span_id for s in spans)


def test_scorers_at_one_ratio_score_the_same_runs(serve_on: Any, openai_server: Any) -> None:
    runs = 12
    server: OpenAIServer = openai_server([Turn.say(f"answer {i}") for i in range(runs)])
    agent = {"id": "sampled", "model": MODEL, "scorers": [
        {"id": "a", "builtin": "answer-length", "sampling": {"ratio": 0.5}},
        {"id": "b", "builtin": "regex-match", "options": {"pattern": "answer"}, "sampling": {"ratio": 0.5}},
        {"id": "all", "builtin": "answer-length", "sampling": {"none": {}}},
    ]}
    proc = serve_on(server, [agent])
    ids = [stream(proc, "sampled", f"q{i}")[0] for i in range(runs)]
    every = wait_scores(proc, runs, scorer_id="all")
    assert {s.run_id for s in every} == set(ids)
    trace_of = {s.run_id: s.trace_id for s in every}
    expected = {r for r in ids if sampled(0.5, trace_of[r] or r)}  # untraced: the run id is the key
    assert 0 < len(expected) < runs
    a = {s.run_id for s in wait_scores(proc, len(expected), scorer_id="a")}
    b = {s.run_id for s in wait_scores(proc, len(expected), scorer_id="b")}
    assert a == b == expected


def test_a_filter_over_the_request_context_picks_the_runs(serve_on: Any, openai_server: Any) -> None:
    server: OpenAIServer = openai_server([Turn.say("one"), Turn.say("two")])
    agent = {"id": "tiers", "model": MODEL, "scorers": [
        {"builtin": "answer-length", "filter": {"match": "all", "conditions": [
            {"field": "requestContext.tier", "operator": "in", "value": ["pro", "team"]}]}}]}
    proc = serve_on(server, [agent])
    pro, _ = stream(proc, "tiers", "hi", requestContext={"tier": "pro"})
    free, _ = stream(proc, "tiers", "hi", requestContext={"tier": "free"})
    [score] = wait_scores(proc, 1, agent_id="tiers")
    assert score.run_id == pro and free != pro


def test_a_failed_scoring_is_retried_once_without_a_second_score(serve_on: Any, openai_server: Any) -> None:
    server: OpenAIServer = openai_server([
        Turn.say("Paris"), Turn.say("I cannot grade this."), Turn.say('{"score": 1, "reason": "ok"}')])
    proc = serve_on(server, [{"id": "geo", "model": MODEL, "scorers": [JUDGE]}])
    run_id, _ = stream(proc, "geo", "Capital of France?")
    [score] = wait_scores(proc, 1, run_id=run_id)
    assert score.score == 1.0 and len(server.requests) == 3
    time.sleep(0)  # nothing else is queued: a second listing is the same
    assert len(scores_stub(proc).ListScores(spb.ListScoresRequest(), timeout=10).scores) == 1


def test_a_server_killed_mid_scoring_scores_the_run_after_a_restart(serve_on: Any, openai_server: Any) -> None:
    entered, release = threading.Event(), threading.Event()

    def held(body: dict[str, Any]) -> Turn:
        entered.set()
        release.wait(READY_TIMEOUT)
        return Turn.say('{"score": 0.1, "reason": "never stored"}')

    server: OpenAIServer = openai_server([Turn.say("Paris"), held, Turn.say('{"score": 0.9, "reason": "again"}')])
    agents = [{"id": "geo", "model": MODEL, "scorers": [JUDGE]}]
    proc = serve_on(server, agents, TREADLE_SCORER_CLAIM="6")
    run_id, _ = stream(proc, "geo", "Capital of France?")
    assert entered.wait(READY_TIMEOUT)  # the judge is being asked: the row is claimed
    proc.proc.send_signal(signal.SIGKILL)
    proc.proc.wait(timeout=READY_TIMEOUT)
    release.set()

    again = serve_on(server, agents, TREADLE_SCORER_CLAIM="6")
    [score] = wait_scores(again, 1, run_id=run_id)
    assert (score.score, score.reason) == (0.9, "again")
    assert len(server.requests) == 3


def test_score_run_scores_a_stored_run_with_another_agents_scorers(serve_on: Any, openai_server: Any) -> None:
    server: OpenAIServer = openai_server([Turn.say("Paris"), Turn.say("Lyon")])
    agents = [{"id": "plain", "model": MODEL},
              {"id": "grader", "model": MODEL, "scorers": [{"id": "paris", "builtin": "exact-match",
                                                             "options": {"expected": "Paris"}}]}]
    proc = serve_on(server, agents)
    memory = {"resource": "u1", "threadId": "t1"}
    first, _ = stream(proc, "plain", "Capital of France?", memory=memory)
    second, _ = stream(proc, "plain", "Capital of France, again?", memory=memory)
    stub = scores_stub(proc)
    scored = [stub.ScoreRun(spb.ScoreRunRequest(run_id=r, agent_id="grader"), timeout=30).scores for r in (first, second)]
    assert [(s[0].run_id, s[0].score, s[0].source) for s in scored] == [
        (first, 1.0, spb.SCORE_SOURCE_TEST), (second, 0.0, spb.SCORE_SOURCE_TEST)]
    assert [m.content.parts[-1].text.text for m in scored[1][0].input.input_messages] == ["Capital of France, again?"]
    assert [m.content.parts[-1].text.text for m in scored[1][0].input.remembered_messages] == [
        "Capital of France?", "Paris"]
    [agg] = stub.AggregateScores(spb.AggregateScoresRequest(agent_id="grader", buckets=2), timeout=10).aggregates
    assert (agg.scorer_id, agg.count, agg.mean, list(agg.distribution)) == ("paris", 2, 0.5, [1, 1])
    # On demand again: the test score is replaced, never duplicated.
    stub.ScoreRun(spb.ScoreRunRequest(run_id=first, agent_id="grader"), timeout=30)
    assert len(stub.ListScores(spb.ListScoresRequest(agent_id="grader"), timeout=10).scores) == 2
    with pytest.raises(grpc.RpcError) as missing:
        stub.ScoreRun(spb.ScoreRunRequest(run_id="run_nope", agent_id="grader"), timeout=10)
    assert missing.value.code() == grpc.StatusCode.NOT_FOUND


@pytest.mark.parametrize(("scorer", "says"), [
    ({"builtin": "no-such"}, "unknown built-in scorer 'no-such'"),
    ({"builtin": "answer-length", "sampling": {"ratio": 0}}, "sampling.ratio must be in (0, 1]"),
    ({"builtin": "regex-match", "options": {"pattern": "("}}, "not a valid regular expression"),
    ({"builtin": "llm-judge", "options": {"model": MODEL}}, "option 'instructions' is required"),
    ({"builtin": "pii", "filter": {"conditions": [{"field": "requestContext.x", "operator": "like", "value": 1}]}},
     "operator 'like' is unknown"),
    ({"builtin": "pii", "filter": {"conditions": [{"field": "user", "operator": "exists"}]}},
     "field 'user' is not a field a filter can read"),
])
def test_a_bad_scorer_is_refused_and_nothing_is_stored(
        serve_on: Any, openai_server: Any, scorer: dict[str, Any], says: str) -> None:
    proc = serve_on(openai_server([]), [])
    stub = agents_stub(proc)
    request = agent_service_pb2.CreateAgentRequest()
    json_format.ParseDict({"agent": {"id": "bad", "model": MODEL, "scorers": [scorer]}}, request)
    with pytest.raises(grpc.RpcError) as refused:
        stub.CreateAgent(request, timeout=10)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "agent.scorers[0]" in (refused.value.details() or "") and says in (refused.value.details() or "")
    with pytest.raises(grpc.RpcError) as gone:
        stub.GetAgent(agent_service_pb2.GetAgentRequest(id="bad"), timeout=10)
    assert gone.value.code() == grpc.StatusCode.NOT_FOUND
