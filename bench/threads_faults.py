"""A fault harness for threads and signals: three replicas on one PostgreSQL, a seeded load, four faults.

    .venv/bin/python bench/threads_faults.py [--short] [--seed N] [--lease-ttl S] [--json FILE]

Three ``treadle serve`` processes share one PostgreSQL cluster of their own (started with
``.ci/postgres``: the harness restarts it, so it is never a shared one). The model is the
loopback OpenAI wire fake of ``tests/support``: every prompt any replica sent is recorded with
the replica that sent it (each replica has its own API key), when the call started and ended
(answered, or its client closed the connection), and the reply it got (``ok R<n>``, ``n`` the
call's number). A bounded, seeded load sends, to random threads on random replicas, signals of
every kind: ``SendMessage`` (wake or deliver by thread, deliver to the run id a client was last
answered, and persist), ``QueueMessage``, ``SendSignal`` (user, reactive),
``SendStateSignal``, ``SendNotificationSignal`` of each priority, and ``AgentService.Stream``
runs on the threads; every one carries a unique marker (``sigT<thread>N<n>``) in its text. Each thread has a subscriber on a random replica,
which subscribes again on another one, from the ``position`` of the last response it had, when
its stream ends with an error. Meanwhile four
faults, in turn: SIGKILL of a replica, SIGSTOP past the lease then SIGCONT, a restart of the
PostgreSQL cluster, SIGTERM of a replica (a killed or terminated replica is started again, so
three stay up); right after each fault, each thread that had a model call in flight on the
faulted replica gets a message through another replica. Then the load stops, every thread gets one last message (so that persisted
signals reach a run), and once all is idle the harness audits, through the API and the fake's
record only:

- accepted, never seen by the model / never stored: an accepted signal (answer ``wake``,
  ``deliver``, ``persist``; a notification the decision delivers, or a high-priority one
  summarised now and delivered in full once idle; a ``Stream`` that finished) whose marker is in
  no recorded prompt / in no stored message (``ListMessages``); a summarised notification
  whose summary message is not stored;
- seen twice (markers): a marker in two messages of one prompt, in two stored messages, or taken in as
  new input (after the prompt's last assistant message) by two model calls whose replies were
  both stored;
- two runners on one thread: pairs of model calls on one thread that overlap in time at the
  fake (a call whose client has gone ends when the connection closed);
- replies before their input: a stored reply ``R<n>`` that comes before a message whose marker
  was in call ``n``'s prompt; replies out of call order: a reply stored before that of a call
  that ended before it started;
- runs left running: ``ListRuns`` shows ``RUN_STATUS_RUNNING`` once everything is idle; answers
  naming a run (``accepted.run_id``, a ``Stream``'s chunks) that ``ListRuns`` does not have;
- subscriber gaps without an error: a finished run (``ListRuns`` times) that lies inside a
  subscription's unbroken stretch (from its first response to its end or error, less a second
  for delivery), of which the subscriber got no chunk or no ``finish``;
- unclear statuses: answers ``INTERNAL`` / ``UNKNOWN``, error messages (statuses and ``error``
  chunks) naming SQL, the database driver or an address other than the replica called, and error answers for calls that were
  applied all the same, except where the replica was killed or stopped with the call in
  flight (the transport broke: the client cannot know). When the API takes a ``request_id``,
  calls answered UNAVAILABLE or DEADLINE_EXCEEDED are retried with the same id instead.

And the takeover time: from each fault to the next model call on a thread that had a call in
flight on the faulted replica (on the cluster, for the restart), by another process (after a
SIGSTOP or a SIGTERM: the faulted one's own calls are its old run going on), by any (after a
SIGKILL, and after the restart, where it is the time until the thread moves again), p50 and
max against the lease TTL, and the max per kind of fault.

One line per category is printed, with the seed; ``--json`` writes the evidence (every call
and its answer, every model call, the stored messages and runs, each finding) for checking by
hand (with it, the replicas' logs are kept too); ``--audit FILE`` audits a saved evidence file
again (the audit is ``bench/threads_faults_audit.py``, which reads nothing but the evidence). Requests the fake refuses as the real API
would are counted as well. ``--short`` is one fault each in about a minute; without it, ``--rounds`` rounds of the
four faults with more load. The exit status is 1 when any count is not zero.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import signal as signals
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import grpc  # noqa: E402
from google.protobuf import json_format  # noqa: E402

from bench.threads_faults_audit import DELIVERY_SLACK, audit  # noqa: E402
from bench.threads_faults_processes import AGENT, RESOURCE, Model, Postgres, Replica, now  # noqa: E402
from treadle.v1 import (  # noqa: E402
    agent_pb2,
    agent_service_pb2,
    signal_pb2,
    thread_service_pb2,
)

RETRYABLE = {"UNAVAILABLE", "DEADLINE_EXCEEDED"}
CALL_TIMEOUT = 10.0


# --- the load --------------------------------------------------------------------------------


@dataclass
class Sent:
    """One call of the load and its answer."""

    marker: str
    thread: str
    op: str
    replica: str
    start: float
    end: float = 0.0
    action: str = ""
    run_id: str = ""
    decision: str = ""
    record_id: str = ""
    code: str = ""
    message: str = ""
    attempts: int = 1
    request_id: str = ""
    """Sent with the call, and again with each retry, when the API takes one."""
    stream_chunks: int = 0
    stream_finished: bool = False
    stream_errors: list[str] = field(default_factory=list)


PRIORITIES = ["NOTIFICATION_PRIORITY_URGENT", "NOTIFICATION_PRIORITY_HIGH", "NOTIFICATION_PRIORITY_MEDIUM",
              "NOTIFICATION_PRIORITY_LOW"]
OPS = ["wake", "deliver-run", "persist", "queue", "signal-user", "signal-reactive", "state", "stream"] + [
    f"notify-{p.rsplit('_', 1)[1].lower()}" for p in PRIORITIES]


class Harness:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.random = random.Random(args.seed)
        self.t0 = now()
        self.threads = [f"t{i:02d}" for i in range(args.threads)]
        self.counter = Counter[str]()
        self.sent: list[Sent] = []
        self.lock = threading.Lock()
        self.faults: list[dict[str, Any]] = []
        self.fault_windows: dict[int, list[tuple[float, float, str]]] = defaultdict(list)
        """Per slot: (from, to, what) while its process was killed, stopped or terminated."""
        self.stop_load = threading.Event()
        self.stop_subscribers = threading.Event()
        self.subscriptions: list[dict[str, Any]] = []
        self.status_errors: list[dict[str, Any]] = []
        self.request_ids = "request_id" in signal_pb2.SendMessageRequest.DESCRIPTOR.fields_by_name
        self.last_run: dict[str, str] = {}
        self.ops = [op for op in OPS if op not in args.without]
        if args.json:  # the replicas' logs (and data directories) beside the evidence
            self.workdir = Path(args.json).resolve().parent / (Path(args.json).stem + "-replicas")
            self.workdir.mkdir(parents=True, exist_ok=True)
        else:
            self.workdir = Path(tempfile.mkdtemp(prefix="threads-faults-"))

    def log(self, text: str) -> None:
        print(f"[{now() - self.t0:6.1f}s] {text}", flush=True)

    # --- setup ---

    def setup(self) -> None:
        self.pg = Postgres()
        self.model = Model(self.args.seed, (self.args.delay_min, self.args.delay_max))
        config = self.workdir / "agents.json"
        config.write_text(json.dumps({"agents": [{"id": AGENT, "name": "Echo", "instructions": "You are terse.",
                                                  "model": "openai/gpt-4o-mini",
                                                  "memory": {"lastMessages": 100000}}]}))
        self.replicas = [Replica(i, self.pg.url, config, self.model, self.args.lease_ttl, self.workdir) for i in range(3)]
        for r in self.replicas:
            r.start()
        for r in self.replicas:
            r.wait_ready()
        self.log(f"3 replicas up ({', '.join(r.target for r in self.replicas)}); PostgreSQL on port {self.pg.port}; "
                 f"logs in {self.workdir}")

    def close(self) -> None:
        self.stop_load.set()
        self.stop_subscribers.set()
        for r in getattr(self, "replicas", []):
            r.close()
        if hasattr(self, "model"):
            self.model.close()
        if hasattr(self, "pg"):
            self.pg.close()
        if not self.args.json:  # with --json the replicas' logs stay beside the evidence's paths
            shutil.rmtree(self.workdir, ignore_errors=True)

    # --- calls ---

    def live(self, rng: random.Random) -> Replica:
        return rng.choice(self.replicas)

    def marker(self, thread: str) -> str:
        with self.lock:
            self.counter[thread] += 1
            return f"sigT{thread[1:]}N{self.counter[thread]:05d}"

    def call(self, rng: random.Random, op: str, thread: str, replica: Replica | None = None) -> Sent:
        replica = replica or self.live(rng)
        marker = self.marker(thread)
        s = Sent(marker, thread, op, replica.name, now())
        with self.lock:
            self.sent.append(s)
        s.request_id = uuid.uuid4().hex
        while True:
            try:
                if op == "stream":
                    self._stream(replica, s)
                else:
                    self._signal(replica, s)
                s.code = s.message = ""
                break
            except grpc.RpcError as e:
                s.code, s.message = e.code().name, e.details() or ""
                self.note_status("call", s.op, replica.name, s.code, s.message)
                if s.request_id and s.code in RETRYABLE and s.attempts < 6 and op != "stream":
                    s.attempts += 1
                    time.sleep(0.2 * s.attempts)
                    replica = self.live(rng)
                    continue
                break
        s.end = now()
        if s.run_id and not s.code:
            self.last_run[thread] = s.run_id
        return s

    def _signal(self, replica: Replica, s: Sent) -> None:
        base: dict[str, Any] = {"agentId": AGENT, "resourceId": RESOURCE, "threadId": s.thread}
        stub = replica.threads
        text = f"{s.op} {s.marker}"
        if s.op == "deliver-run" and self.last_run.get(s.thread):
            # To the run a client was last told of, by its id, as a client that woke it would.
            answer = self._rpc(stub.SendMessage, signal_pb2.SendMessageRequest, {
                "agentId": AGENT, "runId": self.last_run[s.thread], "message": {"contents": text}}, s)
        elif s.op in ("wake", "persist", "final", "deliver-run"):
            body = base | {"message": {"contents": text}}
            if s.op == "persist":
                body |= {"ifActive": {"behavior": "ACTIVE_BEHAVIOR_PERSIST"}, "ifIdle": {"behavior": "IDLE_BEHAVIOR_PERSIST"}}
            answer = self._rpc(stub.SendMessage, signal_pb2.SendMessageRequest, body, s)
        elif s.op == "queue":
            answer = self._rpc(stub.QueueMessage, signal_pb2.QueueMessageRequest, base | {"message": {"contents": text}}, s)
        elif s.op.startswith("signal-"):
            answer = self._rpc(stub.SendSignal, signal_pb2.SendSignalRequest,
                               base | {"signal": {"type": s.op.split("-")[1], "contents": text}}, s)
        elif s.op == "state":
            answer = self._rpc(stub.SendStateSignal, signal_pb2.SendStateSignalRequest, base | {"state": {
                "id": "harness", "cacheKey": s.marker, "mode": "STATE_MODE_SNAPSHOT", "contents": text}}, s)
            if answer.get("skipped"):
                s.action = "SKIPPED"
                return
        else:
            priority = "NOTIFICATION_PRIORITY_" + s.op.split("-")[1].upper()
            answer = self._rpc(stub.SendNotificationSignal, signal_pb2.SendNotificationSignalRequest, base | {
                "notification": {"source": "harness", "kind": "load", "summary": text, "priority": priority}}, s)
            s.decision = answer.get("decision", {}).get("action", "")
            s.record_id = answer.get("record", {}).get("id", "")
        s.action = answer.get("accepted", {}).get("action", "")
        s.run_id = answer.get("accepted", {}).get("runId", "") or answer.get("runId", "")

    @staticmethod
    def _rpc(method: Any, kind: Any, body: dict[str, Any], s: Sent | None = None) -> dict[str, Any]:
        if s is not None:  # a request id where the API takes one (the same one on every retry)
            if "request_id" in kind.DESCRIPTOR.fields_by_name:
                body = body | {"requestId": s.request_id}
            else:
                s.request_id = ""
        request = json_format.ParseDict(body, kind())
        return json_format.MessageToDict(method(request, timeout=CALL_TIMEOUT))

    def _stream(self, replica: Replica, s: Sent) -> None:
        request = agent_service_pb2.StreamRequest(
            agent_id=AGENT, prompt=f"stream {s.marker}",
            options=agent_pb2.CallOptions(memory=agent_pb2.MemoryOptions(resource=RESOURCE, thread_id=s.thread)))
        for response in replica.agents.Stream(request, timeout=CALL_TIMEOUT * 3):
            for chunk in response.chunks:
                s.stream_chunks += 1
                s.run_id = s.run_id or chunk.run_id
                if chunk.HasField("finish"):
                    s.stream_finished = True
                if chunk.HasField("error"):
                    s.stream_errors.append(chunk.error.message)
                    self.note_status("stream error chunk", s.op, replica.name, "", chunk.error.message)

    def note_status(self, where: str, what: str, replica: str, code: str, message: str) -> None:
        with self.lock:
            self.status_errors.append({"where": where, "what": what, "replica": replica, "code": code,
                                       "message": message, "at": round(now() - self.t0, 3)})

    # --- load and subscribers ---

    def worker(self, index: int) -> None:
        rng = random.Random(self.args.seed * 1000 + index)
        while not self.stop_load.is_set():
            with self.lock:
                if len(self.sent) >= self.args.max_calls:
                    return
            self.call(rng, rng.choice(self.ops), rng.choice(self.threads))
            self.stop_load.wait(rng.uniform(0.05, self.args.pause))

    def subscriber(self, thread: str, index: int) -> None:
        rng = random.Random(self.args.seed * 7919 + index)
        position = ""  # each new stream resumes where the last one ended (what it missed is replayed)
        while not self.stop_subscribers.is_set():
            replica = self.live(rng)
            sub: dict[str, Any] = {"thread": thread, "replica": replica.name, "from": 0.0, "to": 0.0, "error": "",
                                   "runs": defaultdict(list)}
            call = replica.threads.SubscribeToThread(signal_pb2.SubscribeToThreadRequest(
                resource_id=RESOURCE, thread_id=thread, position=position))
            sub["call"] = call
            with self.lock:
                self.subscriptions.append(sub)
            try:
                for response in call:
                    if not sub["from"]:
                        sub["from"] = now()
                    for chunk in response.chunks:
                        kinds = sub["runs"][chunk.run_id]
                        kinds.append(chunk.WhichOneof("chunk") or "")
                        if chunk.HasField("error"):
                            self.note_status("subscriber error chunk", thread, replica.name, "", chunk.error.message)
                    position = response.position or position
                sub["to"] = now()
                sub["error"] = "ended" if not self.stop_subscribers.is_set() else ""
            except grpc.RpcError as e:
                sub["to"] = now()
                if not self.stop_subscribers.is_set():
                    sub["error"] = f"{e.code().name}: {e.details()}"
                    self.note_status("subscription", thread, replica.name, e.code().name, e.details() or "")
            self.stop_subscribers.wait(0.2)

    # --- faults ---

    def pick_target(self) -> tuple[Replica, list[str]]:
        """A replica with a model call in flight (waiting a little for one), and those calls' threads."""
        deadline = now() + 5
        while True:
            flying = self.model.in_flight()
            live = {r.name: r for r in self.replicas if r.up}
            busy = [c for c in flying if c.replica in live and c.thread]
            if busy or now() > deadline:
                break
            time.sleep(0.05)
        if busy:
            target = live[self.random.choice(sorted({c.replica for c in busy}))]
        else:
            target = self.random.choice([r for r in self.replicas if r.up])
        return target, sorted({c.thread for c in busy if c.replica == target.name})

    def probe(self, affected: list[str], target: Replica | None) -> None:
        """A user's message to each affected thread, through another replica, right after the fault:
        the thread's next run (the takeover) has work to do whatever the load does."""
        others = [r for r in self.replicas if r is not target]
        rng = random.Random(self.args.seed + len(self.faults))
        for thread in affected:
            replica = rng.choice(others)
            threading.Thread(target=self.call, args=(rng, "wake", "t" + thread[1:], replica), daemon=True).start()

    def fault(self, kind: str) -> None:
        if kind == "pg-restart":
            affected = sorted({c.thread for c in self.model.in_flight() if c.thread})
            at = now()
            self.log(f"PostgreSQL restart (threads with a call in flight: {affected})")
            self.pg.restart()
            self.probe(affected, None)
            self.faults.append({"kind": kind, "replica": "", "at": at, "done": now(), "threads": affected})
            self.log(f"PostgreSQL back after {now() - at:.2f} s")
            return
        target, affected = self.pick_target()
        at = now()
        entry = {"kind": kind, "replica": target.name, "slot": target.slot, "at": at, "threads": affected}
        self.faults.append(entry)
        self.probe(affected, target)
        if kind == "sigkill":
            target.send(signals.SIGKILL)
            assert target.proc is not None
            target.proc.wait()
            self.log(f"SIGKILL {target.name} (threads with a call in flight: {affected})")
            self.fault_windows[target.slot].append((at, now(), "killed"))
            target.start()
            target.wait_ready()
            self.log(f"{target.name} started again")
        elif kind == "sigstop":
            target.stopped = True
            target.send(signals.SIGSTOP)
            pause = self.args.lease_ttl * 1.5 + 1
            self.log(f"SIGSTOP {target.name} for {pause:g} s (threads with a call in flight: {affected})")
            time.sleep(pause)
            target.send(signals.SIGCONT)
            target.stopped = False
            self.fault_windows[target.slot].append((at, now(), "stopped"))
            self.log(f"SIGCONT {target.name}")
        elif kind == "sigterm":
            target.send(signals.SIGTERM)
            self.log(f"SIGTERM {target.name} (threads with a call in flight: {affected})")
            assert target.proc is not None
            try:
                code = target.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                target.proc.kill()
                code = target.proc.wait()
                self.log(f"{target.name} did not stop within 60 s of SIGTERM: killed")
            entry["exit"] = code
            self.log(f"{target.name} exited ({code}) after {now() - at:.2f} s")
            target.start()
            target.wait_ready()
            self.log(f"{target.name} started again")
        entry["done"] = now()

    # --- settling ---

    def idle_everywhere(self) -> bool:
        try:
            replica = next(r for r in self.replicas if r.up)
            for thread in self.threads:
                answer = replica.threads.GetActiveRun(signal_pb2.GetActiveRunRequest(resource_id=RESOURCE,
                                                                                     thread_id=thread), timeout=5)
                if answer.active_run.run_id:
                    return False
        except grpc.RpcError:
            return False
        return not self.model.in_flight() and all(now() - c.end > 0.5 for c in self.model.calls[-3:])

    def settle(self, what: str) -> bool:
        deadline = now() + self.args.lease_ttl * 6 + 20
        while now() < deadline:
            if self.idle_everywhere():
                time.sleep(0.5)
                if self.idle_everywhere():
                    self.log(f"idle ({what})")
                    return True
            time.sleep(0.25)
        self.log(f"not idle {self.args.lease_ttl * 6 + 20:g} s after {what}")
        return False

    # --- the run ---

    def run(self) -> dict[str, Any]:
        self.setup()
        rng = random.Random(self.args.seed + 2)
        for thread in self.threads:  # each thread exists before state signals are sent to it
            self.call(rng, "wake", thread)
        subs = [threading.Thread(target=self.subscriber, args=(t, i), daemon=True) for i, t in enumerate(self.threads)]
        for t in subs:
            t.start()
        workers = [threading.Thread(target=self.worker, args=(i,), daemon=True) for i in range(self.args.workers)]
        for t in workers:
            t.start()
        plan = ["sigkill", "sigstop", "pg-restart", "sigterm"] * self.args.rounds
        for kind in plan:
            self.stop_load.wait(self.args.between)
            self.fault(kind)
        self.stop_load.wait(self.args.between)
        self.stop_load.set()
        for t in workers:
            t.join(timeout=CALL_TIMEOUT * 4)
        self.log(f"load stopped: {len(self.sent)} calls")
        settled = self.settle("after the load")
        # What was persisted reaches a run: a last message wakes each idle thread (again, while one
        # was delivered into a run that had just started instead).
        waiting = list(self.threads)
        for _ in range(3):
            finals = [self.call(rng, "final", thread) for thread in waiting]
            settled = self.settle("after the last messages") and settled
            waiting = [s.thread for s in finals if s.action != "SIGNAL_ACTION_WAKE"]
            if not waiting:
                break
        time.sleep(DELIVERY_SLACK)
        self.stop_subscribers.set()
        for sub in list(self.subscriptions):
            sub["call"].cancel()
        for t in subs:
            t.join(timeout=5)
        return self.audit(settled)

    # --- the audit ---

    def fetch(self) -> tuple[dict[str, list[dict[str, Any]]], dict[str, list[dict[str, Any]]], dict[str, list[dict[str, Any]]]]:
        """The stored messages, runs and notification records of every thread (tried on each replica)."""
        for replica in self.replicas * 2:
            try:
                return self._fetch(replica)
            except grpc.RpcError as e:
                self.note_status("audit", "list", replica.name, e.code().name, e.details() or "")
                time.sleep(1)
        raise SystemExit("threads_faults: no replica answered the audit's List calls")

    def _fetch(self, replica: Replica) -> tuple[dict[str, list[dict[str, Any]]], dict[str, list[dict[str, Any]]],
                                                  dict[str, list[dict[str, Any]]]]:
        messages: dict[str, list[dict[str, Any]]] = {}
        runs: dict[str, list[dict[str, Any]]] = {}
        notes: dict[str, list[dict[str, Any]]] = {}
        for thread in self.threads:
            where = {"resourceId": RESOURCE, "threadId": thread}
            for name, kind, out, key in (("ListMessages", thread_service_pb2.ListMessagesRequest, messages, "messages"),
                                         ("ListRuns", thread_service_pb2.ListRunsRequest, runs, "runs")):
                items: list[dict[str, Any]] = []
                token = ""
                while True:
                    page = self._rpc(getattr(replica.threads, name), kind, where | {"pageSize": 500, "pageToken": token})
                    items += page.get(key, [])
                    token = page.get("nextPageToken", "")
                    if not token:
                        break
                out[thread] = items
            notes[thread] = self._rpc(replica.threads.ListNotifications, signal_pb2.ListNotificationsRequest,
                                      where).get("notifications", [])
        return messages, runs, notes

    def audit(self, settled: bool) -> dict[str, Any]:
        messages, runs, notes = self.fetch()
        evidence = {
            "seed": self.args.seed, "lease_ttl": self.args.lease_ttl, "threads": self.threads,
            "without": self.args.without, "request_ids": self.request_ids, "settled": settled, "t0": self.t0,
            "audited_at": now(), "logs": str(self.workdir) if self.args.json else "removed (kept with --json)",
            "replica_ports": [r.port for r in self.replicas],
            "fault_windows": {str(slot): [list(w) for w in ws] for slot, ws in self.fault_windows.items()},
            "faults": self.faults, "sent": [asdict(s) for s in self.sent],
            "model_calls": [asdict(c) for c in list(self.model.calls)], "refused": list(self.model.failures),
            "messages": messages, "runs": runs, "notifications": notes, "status_errors": self.status_errors,
            "subscriptions": [{k: (dict(v) if k == "runs" else v) for k, v in sub.items() if k != "call"}
                              for sub in self.subscriptions]}
        report = audit(evidence)
        if self.args.json:
            Path(self.args.json).write_text(json.dumps(evidence | {"report": report}, indent=1, default=str))
        return report


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seed", type=int, default=None, help="the load's and the faults' seed (default: random, printed)")
    p.add_argument("--short", action="store_true", help="one fault each, about a minute")
    p.add_argument("--rounds", type=int, default=2, help="rounds of the four faults (without --short)")
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--workers", type=int, default=None, help="concurrent senders")
    p.add_argument("--max-calls", type=int, default=None, help="a bound on the load's calls")
    p.add_argument("--pause", type=float, default=0.4, help="most seconds a sender waits between calls")
    p.add_argument("--between", type=float, default=None, help="seconds of load before each fault")
    p.add_argument("--lease-ttl", type=float, default=3.0)
    p.add_argument("--delay-min", type=float, default=0.15, help="least seconds the model takes to answer")
    p.add_argument("--delay-max", type=float, default=0.6, help="most seconds the model takes to answer")
    p.add_argument("--without", type=lambda v: [x for x in v.split(",") if x], default=[],
                   help=f"leave these kinds of call out of the load (comma-separated: {', '.join(sorted(set(OPS)))})")
    p.add_argument("--audit", metavar="FILE", help="audit a saved evidence file (from --json) again; run nothing")
    p.add_argument("--json", help="write the evidence (calls, model calls, messages, runs, findings) here")
    args = p.parse_args(argv)
    if args.seed is None:
        args.seed = random.SystemRandom().randrange(1, 10**6)
    if unknown := set(args.without) - set(OPS):
        p.error(f"--without: unknown kinds {sorted(unknown)}")
    if args.short:
        args.rounds = 1
    args.threads = args.threads or (4 if args.short else 8)
    args.workers = args.workers or (2 if args.short else 4)
    args.max_calls = args.max_calls or (250 if args.short else 1200)
    args.between = args.between if args.between is not None else (4.0 if args.short else 8.0)
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    if args.audit:
        evidence = json.loads(Path(args.audit).read_text())
        report = audit(evidence)
        print("\n".join(report["lines"]), flush=True)
        return 1 if any(report["counts"].values()) else 0
    print(f"threads_faults: seed {args.seed} (repeat with --seed {args.seed})", flush=True)
    harness = Harness(args)

    def stop(signum: int, frame: Any) -> None:
        raise SystemExit(f"threads_faults: stopped by signal {signum}")

    signals.signal(signals.SIGTERM, stop)  # the replicas and the cluster are cleaned up then too
    try:
        report = harness.run()
    finally:
        harness.close()
    print("\n".join(report["lines"]), flush=True)
    return 1 if any(report["counts"].values()) else 0


if __name__ == "__main__":
    sys.exit(main())
