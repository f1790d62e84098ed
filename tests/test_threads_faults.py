"""The fault harness, short: three ``treadle serve`` replicas on one PostgreSQL under a seeded
signal load, with a SIGKILL, a SIGSTOP past the lease and a SIGTERM, audited through the API
(``bench/threads_faults.py --short``, run as a user runs it). What one runner per thread
guarantees is asserted: no two runs of a thread overlap, no run is left ``running``, no client
is answered an internal takeover token, and every failed call says ``UNAVAILABLE``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.support.databases import Database
from tests.test_cli import ROOT


def test_the_short_fault_run_keeps_one_runner_per_thread(postgres: Database) -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "threads_faults.py"), "--short", "--seed", "7",
         "--database", os.environ["TREADLE_TEST_DATABASE_URL"]],
        capture_output=True, text=True, timeout=600, cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout)
    counts = report["counts"]
    assert report["accepted"] > 0 and [f["fault"] for f in report["faults"]] == ["SIGKILL", "SIGSTOP", "SIGTERM"]
    owned = {k: counts[k] for k in ("two_runners", "left_running", "placeholder_ids", "unclear")}
    assert owned == dict.fromkeys(owned, 0), report
