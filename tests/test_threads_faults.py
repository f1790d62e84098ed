"""The fault harness, short: three replicas on one PostgreSQL, one fault of each kind, audited.

``bench/threads_faults.py --short`` is run as an operator runs it (a process of its own, its own
PostgreSQL cluster, which it restarts, and three ``treadle serve`` processes). Every category of
its audit must be zero: nothing accepted lost or applied twice, one runner per thread, replies
after their input, no run left running, no silent subscriber gap, no unclear status. The seed is
fixed so that a failure repeats (``TREADLE_FAULTS_SEED`` picks another); the evidence of a run
is kept in the test's temporary directory (``faults.json``) and its summary is in the failure.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_three_replicas_under_the_four_faults_lose_duplicate_and_misorder_nothing(tmp_path: Path) -> None:
    seed = os.environ.get("TREADLE_FAULTS_SEED", "17")
    evidence = tmp_path / "faults.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "OTEL_", "TREADLE_"))}
    harness = subprocess.Popen([sys.executable, str(ROOT / "bench" / "threads_faults.py"), "--short", "--seed", seed,
                                "--json", str(evidence)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                cwd=ROOT, env=env)
    try:
        output, _ = harness.communicate(timeout=600)
    except subprocess.TimeoutExpired:
        harness.terminate()  # it stops its replicas and its cluster on SIGTERM
        output, _ = harness.communicate(timeout=60)
    assert evidence.exists(), f"the harness did not finish:\n{output}"
    report = json.loads(evidence.read_text())["report"]
    summary = "\n".join(report["lines"]) + f"\n(evidence: {evidence})"
    assert [f["kind"] for f in report["faults"]] == ["sigkill", "sigstop", "pg-restart", "sigterm"], summary
    counts = report["counts"]
    assert "subscriber_gap" in counts, summary
    assert counts == dict.fromkeys(counts, 0), summary
    assert harness.returncode == 0, output
