"""docs/scorers.md, run the way a user runs it: its config file served by ``treadle serve``, one
run, then its Python program listing and aggregating the scores."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import grpc

from tests.doc_blocks import DEFAULT_ADDRESS, block
from tests.support import OpenAIServer, Turn
from tests.test_cli import READY_TIMEOUT, ROOT, ServeProcess, clean_env
from tests.test_scorers_serve import traceparent
from treadle.v1 import agent_service_pb2, agent_service_pb2_grpc, score_service_pb2, score_service_pb2_grpc

DOC = "docs/scorers.md"
DOC_BLOCKS = {
    (DOC, "yaml", 0): "test_the_documented_agent_scores_its_runs_and_the_program_lists_them",
    (DOC, "python", 0): "test_the_documented_agent_scores_its_runs_and_the_program_lists_them",
    (DOC, "yaml", 1): "test_the_documented_remote_scorers_score_the_agents_runs",
    (DOC, "python", 1): "test_the_documented_remote_scorers_score_the_agents_runs",
    (DOC, "typescript", 0): "test_the_documented_remote_scorers_score_the_agents_runs",
}


def test_the_documented_agent_scores_its_runs_and_the_program_lists_them(tmp_path: Path, openai_server: Any) -> None:
    server: OpenAIServer = openai_server([Turn.say("Paris"), Turn.say('{"score": 1, "reason": "the capital"}')])
    config = tmp_path / "agents.yaml"
    config.write_text(block(DOC, "yaml"))
    proc = ServeProcess("--config", str(config), "--data-dir", str(tmp_path / "data"),
                        env=clean_env(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-test"))
    try:
        proc.wait_ready()
        channel = grpc.insecure_channel(proc.target)
        request = agent_service_pb2.GenerateRequest(agent_id="geo", prompt="Capital of France?")
        request.options.request_context.update({"tier": "pro"})
        trace = uuid.uuid4().hex
        run = agent_service_pb2_grpc.AgentServiceStub(channel).Generate(request, timeout=60, metadata=traceparent(trace))
        expected = 2 + (1 if _sampled(trace) else 0)  # exact-match, correct, and short when sampled
        stub = score_service_pb2_grpc.ScoreServiceStub(channel)
        deadline = time.monotonic() + READY_TIMEOUT
        while len(stub.ListScores(score_service_pb2.ListScoresRequest(), timeout=10).scores) < expected:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        program = tmp_path / "scores.py"
        program.write_text(block(DOC, "python").replace(DEFAULT_ADDRESS, proc.target))
        out = subprocess.run([sys.executable, str(program)], capture_output=True, text=True, timeout=60, cwd=ROOT)
        assert out.returncode == 0, out.stderr
        lines = out.stdout.splitlines()
        assert f"exact-match {run.run_id} 1.0 the answer is the expected text" in lines
        assert f"correct {run.run_id} 1.0 the capital" in lines
        assert "correct: 1 runs, mean 1.00, buckets [0, 0, 0, 1]" in lines
    finally:
        proc.close()


def _sampled(trace_id: str) -> bool:
    from treadle.scoring import sampled

    return sampled(0.5, trace_id)  # the hash of the run's trace id decides


def test_the_documented_remote_scorers_score_the_agents_runs(tmp_path: Path, openai_server: Any) -> None:
    from tests.test_typescript_processor import TS_CLIENT, TSX

    answers = ["Thank you for asking: " + "very " * 30 + "long.", "Sure."]
    server: OpenAIServer = openai_server([Turn.say(a) for a in answers])
    config = tmp_path / "agents.yaml"
    config.write_text(block(DOC, "yaml", 1))
    proc = ServeProcess("--config", str(config), "--data-dir", str(tmp_path / "data"),
                        env=clean_env(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-test"))
    python, typescript = tmp_path / "polite.py", tmp_path / "brevity.ts"
    python.write_text(block(DOC, "python", 1).replace(DEFAULT_ADDRESS, "TARGET"))
    typescript.write_text(block(DOC, "typescript", 0).replace(DEFAULT_ADDRESS, "TARGET"))
    children: list[subprocess.Popen[str]] = []
    try:
        proc.wait_ready()
        for path in (python, typescript):
            path.write_text(path.read_text().replace("TARGET", proc.target))
        children.append(subprocess.Popen([sys.executable, str(python)], cwd=ROOT, stderr=subprocess.PIPE, text=True))
        children.append(subprocess.Popen([str(TSX), str(typescript)], cwd=TS_CLIENT, stderr=subprocess.PIPE, text=True))
        for child in children:  # each says it attached (the Python SDK logs to stderr, the TS one via console.error)
            assert child.stderr is not None
            line = child.stderr.readline()
            assert "attached to" in line, line
        channel = grpc.insecure_channel(proc.target)
        traces = [uuid.uuid4().hex for _ in answers]
        runs = [agent_service_pb2_grpc.AgentServiceStub(channel).Generate(
            agent_service_pb2.GenerateRequest(agent_id="support", prompt="Can you help?"), timeout=60,
            metadata=traceparent(t)).run_id for t in traces]
        expected = {(r, "polite") for r in runs} | {
            (r, "brevity") for r, t in zip(runs, traces, strict=True) if _sampled(t)}
        stub = score_service_pb2_grpc.ScoreServiceStub(channel)
        deadline = time.monotonic() + READY_TIMEOUT
        while True:
            scores = stub.ListScores(score_service_pb2.ListScoresRequest(agent_id="support"), timeout=10).scores
            if len(scores) >= len(expected):
                break
            assert time.monotonic() < deadline, [(s.run_id, s.scorer_id) for s in scores]
            time.sleep(0.05)
        got = {(s.run_id, s.scorer_id): s for s in scores}
        assert set(got) == expected
        assert [got[(r, "polite")].score for r in runs] == [1.0, 0.0]
        assert got[(runs[0], "polite")].details["words"] == 35
        for r in runs:
            if (r, "brevity") in got:
                words = len(answers[runs.index(r)].split())
                assert got[(r, "brevity")].reason == f"{words} words"
    finally:
        for child in children:
            child.send_signal(signal.SIGINT)
            assert child.wait(timeout=30) == 0
        proc.close()
