"""Remote scorers in their own processes (Python, TypeScript, Go and Java SDKs) against a ``treadle serve``
process: sampled runs scored alike by both, what a scorer receives, a failing scorer retried
without a duplicate, ScoreRun through a remote scorer, fail-open, and refused handshakes."""

from __future__ import annotations

import asyncio
import time
import uuid
from pathlib import Path
from typing import Any

import grpc
import pytest

from tests.java_build import java, java_build  # noqa: F401
from tests.remote.procs import Child, spawn
from tests.support import OpenAIServer, Turn
from tests.test_cli import READY_TIMEOUT
from tests.test_scorers_serve import scores_stub, serve_on, stream, wait_scores  # noqa: F401
from tests.test_typescript_processor import TS_CLIENT, TSX, node_modules  # noqa: F401
from treadle.scoring import sampled
from treadle.v1 import score_service_pb2 as spb, score_service_pb2_grpc

MODEL = "openai/gpt-4o-mini"
TS_SCORER = Path(__file__).resolve().parent / "remote" / "ts" / "word_scorer.ts"


async def ts_scorer(target: str) -> Child:
    proc = await asyncio.create_subprocess_exec(str(TSX), str(TS_SCORER), target, cwd=TS_CLIENT,
                                                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
    child = Child(proc)
    await child.expect("ready")
    return child


async def py_scorer(target: str) -> Child:
    child = await spawn("tests.remote.scorer_main", target)
    await child.expect("ready")
    return child


async def test_typescript_and_python_scorers_score_the_same_sampled_runs(
        serve_on: Any, openai_server: Any, node_modules: None) -> None:  # noqa: F811
    runs = 10
    answers = [f"Thanks, answer number {i}" if i % 2 else "Paris" for i in range(runs)]
    server: OpenAIServer = openai_server([Turn.say(a) for a in answers])
    agent = {"id": "geo", "model": MODEL, "instructions": "Be brief.", "scorers": [
        {"id": "ts-words", "sampling": {"ratio": 0.5}},
        {"id": "py-polite", "sampling": {"ratio": 0.5}},
    ]}
    proc = serve_on(server, [agent])
    ts, py = await ts_scorer(proc.target), await py_scorer(proc.target)
    try:
        memory = {"resource": "u1", "threadId": "t1"}
        traces = [uuid.uuid4().hex for _ in range(runs)]  # each run in a trace of the caller's
        ids = [(await asyncio.to_thread(stream, proc, "geo", f"q{i}", traces[i], memory=memory,
                                        requestContext={"tier": "pro"}))[0] for i in range(runs)]
        expected = {r for r, t in zip(ids, traces, strict=True) if sampled(0.5, t)}  # the trace id is the key
        assert 0 < len(expected) < runs
        words = await asyncio.to_thread(wait_scores, proc, len(expected), scorer_id="ts-words")
        polite = await asyncio.to_thread(wait_scores, proc, len(expected), scorer_id="py-polite")
        assert {s.run_id for s in words} == {s.run_id for s in polite} == expected
        by_run = {s.run_id: s for s in words}
        for i, run_id in enumerate(ids):
            if run_id not in expected:
                continue
            n = len(answers[i].split())
            assert by_run[run_id].score == pytest.approx(1.0 if n <= 3 else 3 / n)
            assert by_run[run_id].reason == f"{n} words"
            details = dict(by_run[run_id].details)
            assert details["question"] == f"q{i}" and list(details["system"]) == ["Be brief."]
            assert details["tier"] == "pro"
        assert {s.run_id: s.score for s in polite} == {
            r: (1.0 if answers[ids.index(r)].startswith("Thanks") else 0.0) for r in expected}
    finally:
        await ts.close()
        await py.close()


async def test_a_failing_remote_scorer_is_retried_without_a_duplicate(serve_on: Any, openai_server: Any) -> None:
    server: OpenAIServer = openai_server([Turn.say("Paris")])
    proc = serve_on(server, [{"id": "geo", "model": MODEL, "scorers": [{"id": "py-flaky"}]}])
    py = await py_scorer(proc.target)
    try:
        run_id, _ = await asyncio.to_thread(stream, proc, "geo", "Capital?")
        [score] = await asyncio.to_thread(wait_scores, proc, 1, run_id=run_id)
        assert score.score == 0.5
        # ScoreRun goes through the same remote scorer, as a test score beside the live one.
        stub = scores_stub(proc)
        [test] = (await asyncio.to_thread(stub.ScoreRun, spb.ScoreRunRequest(run_id=run_id), timeout=30)).scores
        assert (test.scorer_id, test.score, test.source) == ("py-flaky", 0.5, spb.SCORE_SOURCE_TEST)
        listed = await asyncio.to_thread(stub.ListScores, spb.ListScoresRequest(run_id=run_id), timeout=10)
        assert sorted(s.source for s in listed.scores) == [spb.SCORE_SOURCE_LIVE, spb.SCORE_SOURCE_TEST]
    finally:
        await py.close()


async def test_a_fail_open_scorer_that_is_not_attached_is_skipped_at_once(serve_on: Any, openai_server: Any) -> None:
    server: OpenAIServer = openai_server([Turn.say("Paris")])
    agent = {"id": "geo", "model": MODEL, "scorers": [
        {"id": "nobody", "failurePolicy": "FAILURE_POLICY_FAIL_OPEN"}, {"builtin": "answer-length"}]}
    proc = serve_on(server, [agent])
    assert any("agent 'geo' names scorer(s) 'nobody' that this server does not have" in line for line in proc.stderr)
    run_id, _ = await asyncio.to_thread(stream, proc, "geo", "Capital?")
    [score] = await asyncio.to_thread(wait_scores, proc, 1, run_id=run_id)
    assert score.scorer_id == "answer-length"
    deadline = time.monotonic() + READY_TIMEOUT
    while not any("scorer nobody on run" in line and "skipped" in line for line in proc.stderr):
        assert time.monotonic() < deadline, proc.stderr
        await asyncio.sleep(0.05)


@pytest.mark.parametrize(("ids", "says"), [
    ([], "declares no scorers"), (["bad id"], "is invalid"), (["a", "a"], "declared twice")])
async def test_a_bad_handshake_is_refused(serve_on: Any, openai_server: Any, ids: list[str], says: str) -> None:
    proc = serve_on(openai_server([]), [])
    async with grpc.aio.insecure_channel(proc.target) as channel:
        call = score_service_pb2_grpc.ScorerServiceStub(channel).Attach(iter([spb.ScorerServiceAttachRequest(
            handshake=spb.ScorerHandshake(protocol_versions=[1], scorers=[spb.ScorerDeclaration(id=i) for i in ids]))]))
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            async for _ in call:
                pass
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT and says in (refused.value.details() or "")


async def test_go_and_java_scorers_score_every_run(serve_on: Any, openai_server: Any, go_build: Any, java: Any) -> None:  # noqa: F811
    answers = ["France's capital is Paris.", "The capital of France is Paris, a city on the Seine."]
    server: OpenAIServer = openai_server([Turn.say(a) for a in answers])
    agent = {"id": "geo", "model": MODEL, "scorers": [{"id": "go-length"}, {"id": "java-mentions"}]}
    proc = serve_on(server, [agent])
    go = Child(await asyncio.create_subprocess_exec(str(go_build("scorer")), proc.target,
                                                     stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE))
    jv = await java("dev.treadle.interop.JavaScorer", proc.target)
    try:
        await go.expect("ready")
        await jv.expect("ready")
        memory = {"resource": "u1", "threadId": "t1"}
        prompts = ["Capital of France?", "And its river, the Seine?"]
        ids = [(await asyncio.to_thread(stream, proc, "geo", p, memory=memory))[0] for p in prompts]
        scores = await asyncio.to_thread(wait_scores, proc, 4, agent_id="geo")
        got = {(s.run_id, s.scorer_id): s for s in scores}
        assert [got[(r, "go-length")].score for r in ids] == [1.0, pytest.approx(5 / 11)]
        assert got[(ids[1], "go-length")].reason == "11 words" and got[(ids[1], "go-length")].details["by"] == "go"
        assert [got[(r, "java-mentions")].score for r in ids] == [1.0, 1.0]
        assert [got[(r, "java-mentions")].reason for r in ids] == ["looked for France", "looked for Seine"]
        assert dict(got[(ids[0], "java-mentions")].details) == {"by": "java", "thread": "t1"}
    finally:
        await go.close()
