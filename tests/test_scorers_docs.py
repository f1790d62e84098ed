"""docs/scorers.md, run the way a user runs it: its config file served by ``treadle serve``, one
run, then its Python program listing and aggregating the scores."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import grpc

from tests.doc_blocks import DEFAULT_ADDRESS, block
from tests.support import OpenAIServer, Turn
from tests.test_cli import READY_TIMEOUT, ROOT, ServeProcess, clean_env
from treadle.v1 import agent_service_pb2, agent_service_pb2_grpc, score_service_pb2, score_service_pb2_grpc

DOC = "docs/scorers.md"
DOC_BLOCKS = {
    (DOC, "yaml", 0): "test_the_documented_agent_scores_its_runs_and_the_program_lists_them",
    (DOC, "python", 0): "test_the_documented_agent_scores_its_runs_and_the_program_lists_them",
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
        run = agent_service_pb2_grpc.AgentServiceStub(channel).Generate(request, timeout=60)
        expected = 2 + (1 if _sampled(run.run_id) else 0)  # exact-match, correct, and short when sampled
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


def _sampled(run_id: str) -> bool:
    from treadle.scoring import sampled

    return sampled(0.5, run_id)  # the server exports no traces here: the run id is the key
