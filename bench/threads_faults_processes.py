"""The processes of ``bench/threads_faults.py``: the model fake, the PostgreSQL cluster, the replicas.

The model is the loopback OpenAI wire fake of ``tests/support``; it records every call with the
process that made it (each replica has its own API key), when it started and ended (answered, or
its client closed the connection), the markers of each prompt message, and answers ``ok R<n>``.
"""

from __future__ import annotations

import json
import os
import random
import re
import select
import shutil
import signal as signals
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from bench.threads_faults_audit import markers
from tests.support.openai_wire import OpenAIServer
from tests.support.script import Turn
from treadle.v1 import agent_service_pb2_grpc, signal_pb2, thread_service_pb2_grpc

ROOT = Path(__file__).resolve().parents[1]
RESOURCE = "harness"
AGENT = "echo"


def now() -> float:
    return time.time()


# --- the model -------------------------------------------------------------------------------


@dataclass
class ModelCall:
    n: int
    replica: str
    """``r<slot>g<generation>``: one process."""
    start: float
    end: float = 0.0
    thread: str = ""
    messages: list[list[str]] = field(default_factory=list)
    """The markers of each prompt message, in prompt order."""
    fresh: list[str] = field(default_factory=list)
    """Markers after the prompt's last assistant message: the call's new input."""
    threads: list[str] = field(default_factory=list)
    dropped: bool = False
    """The client closed the connection before the answer: its end is when it did."""


class Model(OpenAIServer):
    """The OpenAI fake, answering ``ok R<n>`` to every call after a seeded delay."""

    def __init__(self, seed: int, delay: tuple[float, float]) -> None:
        self.calls: list[ModelCall] = []
        self._local = threading.local()
        self._random = random.Random(seed + 1)
        self._delay = delay
        self._calls_lock = threading.Lock()
        super().__init__()

    def _serve(self, h: Any, raw: bytes) -> None:
        key = h.headers.get("Authorization", "").removeprefix("Bearer sk-")
        try:
            body = json.loads(raw)
        except ValueError:
            body = {}
        messages: list[list[str]] = []
        last_assistant = -1
        for i, m in enumerate(body.get("messages", []) if isinstance(body, dict) else []):
            content = m.get("content")
            text = content if isinstance(content, str) else json.dumps(content)
            messages.append(markers(text))
            if m.get("role") == "assistant":
                last_assistant = i
        fresh = [x for msg in messages[last_assistant + 1:] for x in msg]
        threads = sorted({x.split("N")[0] for msg in messages for x in msg})
        with self._calls_lock:
            call = ModelCall(len(self.calls), key, now(), 0.0, threads[0] if len(threads) == 1 else "",
                             messages, fresh, threads)
            self.calls.append(call)
            delay = self._random.uniform(*self._delay)
        self._local.turn = Turn.say(["ok ", f"R{call.n:06d}"])
        try:
            if self._client_left(h.connection, delay):
                call.dropped = True  # the caller (its process or its run) is gone: the call ended there
                h.close_connection = True
                return
            super()._serve(h, raw)
        finally:
            call.end = now()

    @staticmethod
    def _client_left(conn: socket.socket, delay: float) -> bool:
        """Wait ``delay`` (the model thinking), or less if the client closes its connection."""
        deadline = now() + delay
        while (left := deadline - now()) > 0:
            readable, _, _ = select.select([conn], [], [], left)
            if readable:
                try:
                    if conn.recv(1, socket.MSG_PEEK) == b"":
                        return True
                except OSError:
                    return True
                time.sleep(min(0.01, max(0.0, deadline - now())))  # data (not a close): keep waiting
        return False

    def _next_turn(self, body: Any) -> Turn | str:
        return self._local.turn

    def in_flight(self) -> list[ModelCall]:
        with self._calls_lock:
            return [c for c in self.calls if not c.end]


# --- PostgreSQL and the replicas -------------------------------------------------------------


def _pg_bin() -> str:
    for d in sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=lambda p: [int(x) for x in re.findall(r"\d+", p.parent.name)],
                    reverse=True):
        if (d / "pg_ctl").exists():
            return str(d)
    found = shutil.which("pg_ctl")
    if not found:
        raise SystemExit("threads_faults: pg_ctl not found (apt-get install postgresql)")
    return str(Path(found).parent)


class Postgres:
    """A cluster of the harness's own, from ``.ci/postgres``; restarted by ``pg_ctl``."""

    def __init__(self) -> None:
        out = subprocess.run([str(ROOT / ".ci" / "postgres"), "start"], capture_output=True, text=True, check=True).stdout
        values = dict(line.split("=", 1) for line in out.split() if "=" in line)
        self.url = values["TREADLE_TEST_DATABASE_URL"]
        self.dir = values["TREADLE_PG_DIR"]
        self.port = self.url.rsplit(":", 1)[1].split("/")[0]

    def _ctl(self, *args: str) -> None:
        cmd = [f"{_pg_bin()}/pg_ctl", "-D", f"{self.dir}/data", *args]
        if os.getuid() == 0:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        subprocess.run(cmd, capture_output=True, check=True, timeout=60)

    def restart(self) -> None:
        """Stop (fast: connections are cut) and start again with the same options."""
        self._ctl("-m", "fast", "-w", "-t", "60", "-l", f"{self.dir}/server.log", "restart")

    def close(self) -> None:
        subprocess.run([str(ROOT / ".ci" / "postgres"), "stop", self.dir], capture_output=True, check=False)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _treadle() -> list[str]:
    script = Path(sys.executable).parent / "treadle"
    return [str(script)] if script.exists() else [sys.executable, "-m", "treadle.cli"]


class Replica:
    """One slot: a ``treadle serve`` process on a fixed port, started again after a fault."""

    def __init__(self, slot: int, database: str, config: Path, model: Model, ttl: float, logs: Path) -> None:
        self.slot, self.database, self.config, self.model, self.ttl, self.logs = slot, database, config, model, ttl, logs
        self.port = _free_port()
        self.target = f"127.0.0.1:{self.port}"
        self.generation = 0
        self.proc: subprocess.Popen[bytes] | None = None
        self.stopped = False
        self.channel = grpc.insecure_channel(self.target)
        self.threads = thread_service_pb2_grpc.ThreadServiceStub(self.channel)
        self.agents = agent_service_pb2_grpc.AgentServiceStub(self.channel)

    @property
    def name(self) -> str:
        return f"r{self.slot}g{self.generation}"

    def start(self) -> None:
        self.generation += 1
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "OTEL_", "TREADLE_"))}
        env |= {"OPENAI_BASE_URL": self.model.base_url, "OPENAI_API_KEY": f"sk-{self.name}",
                "TREADLE_THREAD_LEASE_TTL": f"{self.ttl:g}", "PYTHONUNBUFFERED": "1",
                "TREADLE_DATA_DIR": tempfile.mkdtemp(prefix=f"data-{self.name}-", dir=self.logs)}
        log = open(self.logs / f"{self.name}.log", "wb")  # noqa: SIM115 - the process keeps it
        self.proc = subprocess.Popen([*_treadle(), "serve", "--listen", self.target, "--database", self.database,
                                      "--config", str(self.config)], stdout=log, stderr=subprocess.STDOUT, env=env,
                                     cwd=ROOT)
        log.close()

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = now() + timeout
        while now() < deadline:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise SystemExit(f"threads_faults: replica {self.name} exited at start; see {self.logs}/{self.name}.log")
            try:
                self.threads.GetActiveRun(signal_pb2.GetActiveRunRequest(resource_id=RESOURCE, thread_id="t00"),
                                          timeout=2, wait_for_ready=True)
                return
            except grpc.RpcError:
                time.sleep(0.2)
        raise SystemExit(f"threads_faults: replica {self.name} never became ready")

    @property
    def up(self) -> bool:
        return self.proc is not None and self.proc.poll() is None and not self.stopped

    def send(self, sig: int) -> None:
        assert self.proc is not None
        self.proc.send_signal(sig)

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            if self.stopped:
                self.proc.send_signal(signals.SIGCONT)
            self.proc.kill()
            self.proc.wait()
        self.channel.close()
