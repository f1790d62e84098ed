"""Faults against replicas: three ``treadle serve`` processes on one PostgreSQL, a seeded load
of thread signals, and the faults an operator meets; then an audit through the API.

    .venv/bin/python bench/threads_faults.py [--seed N] [--signals N] [--threads N] [--ttl S]
                                             [--short] [--database URL]

The replicas serve one agent on a loopback OpenAI server whose answers take a seeded 50-400 ms
and say which signal they answer (``re <marker>``, the last marker the model was sent). A pool of
clients sends ``SendMessage`` (deliver into a running run, or wake an idle thread) and
``QueueMessage`` to random live replicas on random threads, each signal with a unique marker.
Meanwhile, in turn: SIGKILL one replica (restarted), SIGSTOP one for 1.5 lease TTLs (then
SIGCONT), SIGTERM one (restarted). Once no thread has a run, the audit reads every thread
(``ListMessages``, ``ListRuns``) from a live replica and counts:

- ``lost``: signals answered ``deliver``, ``wake`` or ``persist`` that are not stored;
- ``never_seen_by_the_model``: signals answered ``deliver`` or ``wake`` the model was never sent;
- ``duplicated``: signals stored more than once;
- ``two_runners``: pairs of runs on one thread whose recorded lifetimes overlap;
- ``reply_before_input``: answers stored before the signal they answer;
- ``left_running``: runs still recorded ``running``;
- ``placeholder_ids``: answers naming an internal takeover token as a run id;
- ``unclear``: calls that failed with a status other than ``UNAVAILABLE`` (a replica down).

Printed as one JSON object, with the counts and the seed. ``--short``: fewer signals, each fault
once, about a minute. PostgreSQL is ``--database``, else ``TREADLE_TEST_DATABASE_URL``, else a
throwaway cluster started with ``.ci/postgres``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from datetime import datetime
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import grpc  # noqa: E402
import psycopg  # noqa: E402
from google.protobuf import json_format  # noqa: E402

from tests.support import OpenAIServer, Turn  # noqa: E402
from treadle.v1 import signal_pb2, thread_service_pb2, thread_service_pb2_grpc  # noqa: E402

AGENTS = {"agents": [{"id": "echo", "name": "Echo", "instructions": "You are terse.", "model": "openai/gpt-4o-mini"}]}
TREADLE = [str(ROOT / ".venv" / "bin" / "treadle")]


def _postgres(url: str | None) -> tuple[str, str | None]:
    url = url or os.environ.get("TREADLE_TEST_DATABASE_URL")
    if url:
        return url, None
    out = subprocess.run([str(ROOT / ".ci" / "postgres"), "start"], capture_output=True, text=True, check=True).stdout
    values = dict(line.split("=", 1) for line in out.split() if "=" in line)
    return values["TREADLE_TEST_DATABASE_URL"], values["TREADLE_PG_DIR"]


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Replica:
    def __init__(self, name: str, database: str, config: Path, env: dict[str, str]) -> None:
        self.name, self.database, self.config, self.env = name, database, config, env
        self.proc: subprocess.Popen[bytes] | None = None
        self.target = ""
        self.down = threading.Event()
        self.log = Path(tempfile.mkdtemp(prefix=f"treadle-{name}-")) / "serve.log"

    def start(self) -> None:
        self.target = f"127.0.0.1:{_free_port()}"
        data = tempfile.mkdtemp(prefix="treadle-data-")
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [*TREADLE, "serve", "--listen", self.target, "--database", self.database, "--config", str(self.config)],
                stdout=log, stderr=log, env={**self.env, "TREADLE_DATA_DIR": data}, cwd=ROOT)
        self.channel = grpc.insecure_channel(self.target)
        self.stub = thread_service_pb2_grpc.ThreadServiceStub(self.channel)
        deadline = time.monotonic() + 120
        while True:
            try:
                self.stub.GetActiveRun(signal_pb2.GetActiveRunRequest(resource_id="probe", thread_id="probe"), timeout=2)
                break
            except grpc.RpcError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise RuntimeError(f"replica {self.name} did not start: see {self.log}") from None
                time.sleep(0.2)
        self.down.clear()

    def send_signal(self, sig: int) -> None:
        assert self.proc is not None
        self.proc.send_signal(sig)

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.channel.close()


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def call(replica: Replica, method: str, body: dict[str, Any], timeout: float = 60) -> dict[str, Any]:
    kind = getattr(signal_pb2, f"{method}Request", None) or getattr(thread_service_pb2, f"{method}Request")
    request = json_format.ParseDict(body, kind())
    return json_format.MessageToDict(getattr(replica.stub, method)(request, timeout=timeout))


def run(args: argparse.Namespace) -> dict[str, Any]:
    rng = random.Random(args.seed)
    base, pg_dir = _postgres(args.database)
    schema = f"faults_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    sep = "&" if "?" in base else "?"
    database = f"{base}{sep}options={quote(f'-csearch_path={schema}')}"
    delays = random.Random(args.seed + 1)
    lock = threading.Lock()

    def reply(body: dict[str, Any]) -> Turn:
        with lock:
            delay = delays.uniform(0.05, 0.4)
        time.sleep(delay)
        users = [m["content"] if isinstance(m["content"], str) else "".join(p.get("text", "") for p in m["content"])
                 for m in body["messages"] if m["role"] == "user"]
        markers = [w for u in users for w in u.split() if w.startswith("sig-")]
        return Turn.say(f"re {markers[-1] if markers else '-'}")

    server = OpenAIServer([reply] * (args.signals * 4 + 200))
    server.__enter__()
    work = Path(tempfile.mkdtemp(prefix="treadle-faults-"))
    config = work / "agents.json"
    config.write_text(json.dumps(AGENTS))
    env = {k: v for k, v in os.environ.items() if not k.startswith("TREADLE_")}
    env |= {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test",
            "TREADLE_THREAD_LEASE_TTL": str(args.ttl)}
    replicas = [Replica(name, database, config, env) for name in ("a", "b", "c")]
    for r in replicas:
        r.start()
    threads = [f"t{i}" for i in range(args.threads)]
    accepted: dict[str, tuple[str, str]] = {}  # marker -> (thread, action)
    answers: list[dict[str, Any]] = []
    unclear: list[str] = []
    faults: list[dict[str, Any]] = []

    def send(i: int) -> None:
        thread = rng_choice(threads, i)
        live = [r for r in replicas if not r.down.is_set()]
        replica = live[i % len(live)]
        marker = f"sig-{i}"
        method = "QueueMessage" if i % 7 == 3 else "SendMessage"
        body = {"agentId": "echo", "resourceId": "u", "threadId": thread, "message": {"contents": f"{marker} please"}}
        try:
            answer = call(replica, method, body)
        except grpc.RpcError as e:
            if e.code() not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED) or not replica.down.is_set():
                if e.code() != grpc.StatusCode.UNAVAILABLE:
                    unclear.append(f"{method} on {replica.name}: {e.code().name} {e.details()}")
            return
        accepted[marker] = (thread, answer["accepted"]["action"])
        answers.append(answer["accepted"])

    picks = random.Random(args.seed + 2)
    choices = [picks.randrange(len(threads)) for _ in range(args.signals)]

    def rng_choice(items: list[str], i: int) -> str:
        return items[choices[i]]

    plan = [("SIGKILL", 0.2), ("SIGSTOP", 0.45), ("SIGTERM", 0.7)]
    if not args.short:
        plan = plan + [("SIGKILL", 0.8), ("SIGSTOP", 0.9)]

    def inject() -> None:
        done = 0
        for kind, at in plan:
            while len(answers) + len(unclear) < at * args.signals:
                time.sleep(0.05)
            victim = replicas[rng.randrange(len(replicas))]
            started = time.monotonic()
            victim.down.set()
            if kind == "SIGSTOP":
                victim.send_signal(signal.SIGSTOP)
                time.sleep(args.ttl * 1.5)
                victim.send_signal(signal.SIGCONT)
                victim.down.clear()
            else:
                victim.stop(signal.SIGKILL if kind == "SIGKILL" else signal.SIGTERM)
                victim.start()
            faults.append({"fault": kind, "replica": victim.name, "seconds": round(time.monotonic() - started, 2)})
            done += 1

    injector = threading.Thread(target=inject, daemon=True)
    injector.start()
    with ThreadPoolExecutor(4) as pool:
        for i in range(args.signals):
            pool.submit(send, i)
            time.sleep(rng.uniform(0.0, 0.04))
    injector.join()

    # Quiet: no thread has a run, on any replica, twice a TTL apart.
    deadline = time.monotonic() + 120 + args.ttl * 4
    quiet = 0
    while quiet < 2 and time.monotonic() < deadline:
        busy = any(call(r, "GetActiveRun", {"resourceId": "u", "threadId": t}).get("activeRun", {}).get("runId")
                   for r in replicas for t in threads)
        quiet = 0 if busy else quiet + 1
        time.sleep(args.ttl)

    reader = replicas[0]
    stored: dict[str, list[int]] = {}
    lost, duplicated, two_runners, before, running = [], [], [], [], []
    for t in threads:
        messages = call(reader, "ListMessages", {"resourceId": "u", "threadId": t, "pageSize": 1000}).get("messages", [])
        texts = ["".join(p.get("text", {}).get("text", "") for p in m["content"].get("parts", [])) for m in messages]
        inputs: dict[str, int] = {}
        for n, (m, text) in enumerate(zip(messages, texts, strict=True)):
            if m["role"] != "MESSAGE_ROLE_ASSISTANT":
                for w in text.split():
                    if w.startswith("sig-"):
                        stored.setdefault(w, []).append(n)
                        inputs.setdefault(w, n)
        for n, (m, text) in enumerate(zip(messages, texts, strict=True)):
            if m["role"] == "MESSAGE_ROLE_ASSISTANT":
                for w in text.split():
                    if w.startswith("sig-") and inputs.get(w, -1) > n:
                        before.append(f"{t}: answer to {w} at {n}, input at {inputs[w]}")
        runs = call(reader, "ListRuns", {"resourceId": "u", "threadId": t, "pageSize": 1000}).get("runs", [])
        running += [f"{t}: {r['id']}" for r in runs if r["status"] == "RUN_STATUS_RUNNING"]
        spans = sorted((_time(r["startTime"]), _time(r.get("endTime", "9999-12-31T00:00:00Z")), r["id"]) for r in runs)
        for (s1, e1, r1), (s2, _e2, r2) in zip(spans, spans[1:]):
            if s2 < e1:
                two_runners.append(f"{t}: {r1} and {r2}")
    for marker, (thread, action) in accepted.items():
        if action in ("SIGNAL_ACTION_DELIVER", "SIGNAL_ACTION_WAKE", "SIGNAL_ACTION_PERSIST"):
            count = len(stored.get(marker, []))
            if count == 0:
                lost.append(f"{thread}: {marker} ({action})")
            elif count > 1:
                duplicated.append(f"{thread}: {marker} x{count}")
    seen = {w for r in server.requests for m in r["messages"] if m["role"] == "user"
            for w in (m["content"] if isinstance(m["content"], str)
                      else "".join(p.get("text", "") for p in m["content"])).split() if w.startswith("sig-")}
    unseen = [f"{t}: {m} ({a})" for m, (t, a) in accepted.items()
              if a in ("SIGNAL_ACTION_DELIVER", "SIGNAL_ACTION_WAKE") and m not in seen]
    placeholders = [a for a in answers if a.get("runId", "").startswith("takeover_")]
    for r in replicas:
        r.stop()
    server.close()
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA {schema} CASCADE")
    if pg_dir:
        subprocess.run([str(ROOT / ".ci" / "postgres"), "stop", pg_dir], check=False, capture_output=True)
    return {
        "seed": args.seed, "signals": args.signals, "accepted": len(accepted), "ttl": args.ttl, "faults": faults,
        "counts": {"lost": len(lost), "never_seen_by_the_model": len(unseen), "duplicated": len(duplicated), "two_runners": len(two_runners),
                   "reply_before_input": len(before), "left_running": len(running),
                   "placeholder_ids": len(placeholders), "unclear": len(unclear)},
        "examples": {"lost": lost[:5], "never_seen_by_the_model": unseen[:5], "duplicated": duplicated[:5], "two_runners": two_runners[:5],
                     "reply_before_input": before[:5], "left_running": running[:5], "unclear": unclear[:5]},
        "logs": [str(r.log) for r in replicas],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--signals", type=int, default=0)
    parser.add_argument("--threads", type=int, default=6)
    parser.add_argument("--ttl", type=float, default=3.0)
    parser.add_argument("--short", action="store_true")
    parser.add_argument("--database")
    args = parser.parse_args()
    args.signals = args.signals or (120 if args.short else 600)
    print(json.dumps(run(args), indent=1))


if __name__ == "__main__":
    main()
