"""The two storage engines every storage and memory test runs on: SQLite and PostgreSQL.

PostgreSQL is a real server: ``TREADLE_TEST_DATABASE_URL`` when set (``tests/run.sh`` and
``.ci/run`` start one with ``.ci/postgres``), else a cluster this module starts with
``.ci/postgres`` for the session. Each test gets a schema of its own on it. Under ``CI=true`` a
PostgreSQL that cannot be had fails the run; by hand, without one, only SQLite runs (and says so).
"""

from __future__ import annotations

import os
import subprocess
import uuid
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENV = "TREADLE_TEST_DATABASE_URL"

_started: dict[str, str] = {}
_tried: list[bool] = []


def start_postgres() -> None:
    """Make sure ``TREADLE_TEST_DATABASE_URL`` is set if it can be (once, when the first test
    that takes ``database`` is collected, so other test runs never wait for a cluster)."""
    if _tried or os.environ.get(ENV):
        return
    _tried.append(True)
    result = subprocess.run([str(ROOT / ".ci" / "postgres"), "start"], capture_output=True, text=True)
    if result.returncode == 0:
        values = dict(line.split("=", 1) for line in result.stdout.split() if "=" in line)
        os.environ[ENV] = values[ENV]
        _started["dir"] = values["TREADLE_PG_DIR"]
        return
    message = f"PostgreSQL could not start for the storage tests:\n{result.stderr}"
    if os.environ.get("CI") == "true":
        raise pytest.UsageError(message)
    warnings.warn(message + "\nOnly SQLite is tested.", stacklevel=1)


def stop_postgres() -> None:
    if "dir" in _started:
        subprocess.run([str(ROOT / ".ci" / "postgres"), "stop", _started.pop("dir")], check=False,
                       capture_output=True)


def engines() -> list[str]:
    start_postgres()
    return ["sqlite", "postgresql"] if os.environ.get(ENV) else ["sqlite"]


@dataclass
class Database:
    """One test's database: ``settings`` go to ``Settings``/``treadle serve``; ``url`` to the store."""

    engine: str
    data_dir: Path
    database: str | None

    @property
    def settings(self) -> dict[str, Any]:
        return {"data_dir": self.data_dir, "database": self.database}

    @property
    def serve_args(self) -> list[str]:
        args = ["--data-dir", str(self.data_dir)]
        return args + (["--database", self.database] if self.database else [])

    @property
    def url(self) -> str:
        from treadle.memory import database_url

        return database_url(self.data_dir, self.database)


@pytest.fixture
def database(engine: str, tmp_path: Path) -> Iterator[Database]:
    """A fresh, empty database on ``engine`` (parametrized by ``pytest_generate_tests``)."""
    if engine == "sqlite":
        yield Database("sqlite", tmp_path / "data", None)
        return
    yield from postgres_database(tmp_path)


@pytest.fixture
def postgres(tmp_path: Path) -> Iterator[Database]:
    """A fresh schema on PostgreSQL, for what only PostgreSQL does (several server processes
    on one store): started like ``database``'s, and a failure without one."""
    start_postgres()
    if not os.environ.get(ENV):
        pytest.fail("this test needs PostgreSQL (.ci/postgres start)")
    yield from postgres_database(tmp_path)


def postgres_database(tmp_path: Path) -> Iterator[Database]:
    import psycopg

    base = os.environ[ENV]
    schema = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    sep = "&" if "?" in base else "?"
    try:
        yield Database("postgresql", tmp_path / "data", f"{base}{sep}options={quote(f'-csearch_path={schema}')}")
    finally:
        # An app the test stops after this fixture's teardown (fixtures end in reverse order) may
        # still be inside a transaction on the schema: its event loop is not running now, so a
        # DROP waiting for it would wait forever. The cluster is thrown away after the run, so
        # such a schema is left behind instead.
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute("SET lock_timeout = '2s'")
            try:
                conn.execute(f"DROP SCHEMA {schema} CASCADE")
            except psycopg.errors.LockNotAvailable:
                pass
