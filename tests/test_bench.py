"""``python -m bench``, at its smallest size: every scenario runs, the table and the JSON come out.

Run as an operator runs it (a process of its own; PostgreSQL from ``TREADLE_TEST_DATABASE_URL``
or a cluster it starts). Nothing here looks at a time: only that each scenario produced its rows,
each with its number, and that the table names every one of them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = {"inproc", "grpc", "memory-sqlite", "memory-postgresql", "remote", "signals"}


def test_one_command_runs_every_scenario_and_writes_the_table_and_json(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    done = subprocess.run([sys.executable, "-m", "bench", "--smoke", "--no-framework", "--json", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(out.read_text())
    rows = report["rows"]
    assert {r["scenario"] for r in rows} == SCENARIOS, rows
    for r in rows:
        assert isinstance(r["value"], (int, float)), r
        if r["floor"] is not None:
            assert r["ratio"] is not None, r
    # every target is judged, and the errors the scenarios count are none
    assert all(r["met"] is not None for r in rows if r["target"]), rows
    assert all(r["value"] == 0 for r in rows if r["name"].endswith("errors")), rows
    table = done.stdout
    assert table.count("\n| ") == len(rows) + 1, table  # the header's separator, then one line a row
    for r in rows:
        assert f"| {r['scenario']} | {r['name']} |" in table, r["name"]
    assert report["table"] in table
