"""The audit of ``bench/threads_faults.py``: findings from the evidence alone.

``audit(evidence)`` reads only what the run recorded (every call and its answer, every model
call the fake saw, what ``ListMessages``, ``ListRuns`` and ``ListNotifications`` answered
afterwards, what each subscription received, every error status) and returns the counts, one
printed line per category, and each finding with the ids a reader needs to check it by hand.
``threads_faults.py --audit FILE`` runs it again on a saved evidence file.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter, defaultdict
from datetime import datetime
from typing import Any

MARKER = re.compile(r"sigT(\d{2})N(\d{5})")
"""Every call of the load carries one unique marker: its thread and its number."""
REPLY = re.compile(r"\bR(\d{6})\b")
"""The fake answers call ``n`` with ``ok R<n>``."""
LEAKS = re.compile(r"\b(select|insert into|update \w+ set|delete from|psycopg|sqlalchemy|sqlalche\.me|asyncpg|sqlite3"
                   r"|password|sql)\b", re.IGNORECASE)
"""What names the database's internals (SQL, its driver's exceptions); naming the engine alone is fine."""
ADDRESS = re.compile(r"\b(\d{1,3}(?:\.\d{1,3}){3}|localhost)(?::|\W+port\W+)(\d+)", re.IGNORECASE)
UNCLEAR_CODES = {"INTERNAL", "UNKNOWN"}
DELIVERY_SLACK = 1.0
"""Seconds a chunk may take to reach a subscriber on another replica after its run's end time."""

CATEGORIES = [
    ("lost_model", "accepted, never seen by the model"),
    ("lost_stored", "accepted, never stored"),
    ("twice", "seen twice"),
    ("two_runners", "two runners on one thread (pairs of overlapping model calls)"),
    ("reply_before_input", "replies stored before their input"),
    ("reply_order", "replies stored out of call order"),
    ("left_running", "runs left running"),
    ("unreal_run", "answers naming a run that ListRuns does not have"),
    ("subscriber_gap", "subscriber gaps without an error"),
    ("unclear", "unclear statuses"),
]


def markers(text: str) -> list[str]:
    return ["T%sN%s" % x for x in MARKER.findall(text)]


def expected(s: dict[str, Any]) -> tuple[bool, bool]:
    """Whether the answer to call ``s`` promises that the model sees it, and that it is stored."""
    if s["code"]:
        return False, False
    if s["op"] == "stream":
        done = s["stream_finished"] and not s["stream_errors"]
        return done, done
    if s["op"].startswith("notify-"):
        # Delivered now, or (high priority, thread running) a summary now and the record once idle.
        delivered = s["decision"] == "NOTIFICATION_ACTION_DELIVER" or (
            s["op"] == "notify-high" and s["decision"] == "NOTIFICATION_ACTION_SUMMARIZE")
        return delivered, delivered
    taken = s["action"] in ("SIGNAL_ACTION_WAKE", "SIGNAL_ACTION_DELIVER", "SIGNAL_ACTION_PERSIST")
    return taken, taken


def _stamp(value: str) -> float:
    return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


def audit(e: dict[str, Any]) -> dict[str, Any]:
    t0 = e["t0"]
    calls = e["model_calls"]
    sent = e["sent"]
    messages, runs, notes = e["messages"], e["runs"], e["notifications"]
    findings: dict[str, list[Any]] = defaultdict(list)

    def at(t: float) -> float:
        return round(t - t0, 3)

    # Where each marker and reply is stored: (thread, message index), text parts only.
    stored: dict[str, list[tuple[str, int]]] = defaultdict(list)
    reply_at: dict[int, tuple[str, int]] = {}
    message_ids: dict[str, set[str]] = defaultdict(set)
    for thread, items in messages.items():
        for i, m in enumerate(items):
            message_ids[thread].add(m.get("id", ""))
            text = " ".join(p.get("text", {}).get("text", "") for p in m.get("content", {}).get("parts", []))
            for x in sorted(set(markers(text))):
                stored[x].append((thread, i))
            for r in REPLY.findall(text):
                reply_at[int(r)] = (thread, i)
    seen: dict[str, list[int]] = defaultdict(list)
    for c in calls:
        for x in {x for msg in c["messages"] for x in msg}:
            seen[x].append(c["n"])

    # Accepted, never seen by the model / never stored.
    for s in sent:
        model, store = expected(s)
        key = s["marker"][3:]
        brief = {k: s[k] for k in ("marker", "op", "thread", "action", "decision", "replica")} | {
            "run": s["run_id"], "sent_at": at(s["start"])}
        if model and not seen.get(key):
            findings["lost_model"].append(brief)
        if store and not stored.get(key):
            findings["lost_stored"].append(brief)
    by_record = {r.get("id"): (thread, r) for thread, rs in notes.items() for r in rs}
    for s in sent:
        if s["op"].startswith("notify-") and not s["code"] and s["decision"] == "NOTIFICATION_ACTION_SUMMARIZE":
            thread, record = by_record.get(s["record_id"], (s["thread"], {}))
            summary = record.get("summarySignalId", "")
            if not summary or summary not in message_ids[thread]:
                findings["lost_stored"].append({"marker": s["marker"], "op": s["op"], "thread": s["thread"],
                                                "what": "summary message not stored", "record": s["record_id"],
                                                "summary_signal": summary})

    # Seen twice: in two messages of one prompt, stored twice, new input of two calls both stored.
    doubled: dict[str, list[int]] = defaultdict(list)
    for c in calls:
        for x, n in Counter(x for msg in c["messages"] for x in set(msg)).items():
            if n > 1:
                doubled[x].append(c["n"])
    findings["twice_prompt"] = [{"marker": "sig" + x, "calls": ns} for x, ns in doubled.items()]
    findings["twice_stored"] = [{"marker": "sig" + x, "stored_at": places} for x, places in stored.items()
                                if len(places) > 1]
    fresh_in: dict[str, list[int]] = defaultdict(list)
    for c in calls:
        if c["n"] in reply_at:
            for x in set(c["fresh"]):
                fresh_in[x].append(c["n"])
    findings["twice_taken"] = [{"marker": "sig" + x, "calls": ns} for x, ns in fresh_in.items() if len(ns) > 1]
    findings["twice"] = sorted({f["marker"] for k in ("twice_prompt", "twice_stored", "twice_taken")
                                for f in findings[k]})

    # Two runners on one thread: model calls on one thread that overlap in time.
    per_thread: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for c in calls:
        if c["thread"]:
            per_thread[c["thread"]].append(c)
        elif len(c["threads"]) > 1:
            findings["mixed_prompt"].append({"call": c["n"], "threads": c["threads"]})
    for thread, cs in per_thread.items():
        cs.sort(key=lambda c: c["start"])
        for i, a in enumerate(cs):
            for b in cs[i + 1:]:
                if b["start"] >= (a["end"] or float("inf")):
                    break
                findings["two_runners"].append({"thread": "t" + thread[1:], "calls": [a["n"], b["n"]],
                                                "replicas": [a["replica"], b["replica"]],
                                                "a": [at(a["start"]), at(a["end"])], "b": [at(b["start"]), at(b["end"])]})

    # Replies before their input; replies out of call order.
    for c in calls:
        if c["n"] not in reply_at:
            continue
        thread, where = reply_at[c["n"]]
        late = [x for msg in c["messages"] for x in msg if stored.get(x) and min(i for _, i in stored[x]) > where]
        if late:
            findings["reply_before_input"].append({"call": c["n"], "thread": thread, "reply_at": where,
                                                   "inputs_after": ["sig" + x for x in late]})
    for thread, cs in per_thread.items():
        placed = [c for c in cs if c["n"] in reply_at]
        for i, a in enumerate(placed):
            for b in placed[i + 1:]:
                if a["end"] <= b["start"] and reply_at[a["n"]][1] > reply_at[b["n"]][1]:
                    findings["reply_order"].append({"thread": "t" + thread[1:], "earlier_call": a["n"],
                                                    "later_call": b["n"],
                                                    "stored_at": [reply_at[a["n"]][1], reply_at[b["n"]][1]]})

    # Run ids answered to clients that name no run of the thread.
    run_ids = {thread: {r.get("id") for r in rs} for thread, rs in runs.items()}
    for s in sent:
        if s["run_id"] and not s["code"] and s["run_id"] not in run_ids.get(s["thread"], set()):
            findings["unreal_run"].append({k: s[k] for k in ("marker", "op", "thread", "action", "replica")}
                                          | {"run": s["run_id"]})

    # Runs left running.
    for thread, rs in runs.items():
        for r in rs:
            if r.get("status") == "RUN_STATUS_RUNNING":
                findings["left_running"].append({"thread": thread, "run": r.get("id"), "start": r.get("startTime")})

    # Subscriber gaps without an error: a finished run inside an unbroken subscription, not seen whole.
    for sub in e["subscriptions"]:
        if not sub["from"]:
            continue
        to = sub["to"] or e["audited_at"]
        for r in runs.get(sub["thread"], []):
            if r.get("status") != "RUN_STATUS_FINISHED" or "startTime" not in r or "endTime" not in r:
                continue
            start, end = _stamp(r["startTime"]), _stamp(r["endTime"])
            if start <= sub["from"] or end >= to - DELIVERY_SLACK:
                continue
            kinds = sub["runs"].get(r["id"], [])
            if "finish" not in kinds:
                findings["subscriber_gap"].append({"thread": sub["thread"], "subscriber_on": sub["replica"],
                                                   "run": r["id"], "chunks_seen": len(kinds),
                                                   "window": [at(sub["from"]), at(to)], "run_times": [at(start), at(end)]})

    # Unclear statuses. A client's own transport error names the replica it dialled: no leak.
    ours = {str(p) for p in e["replica_ports"]}
    for err in e["status_errors"]:
        text = err["message"] or ""
        leaked = LEAKS.search(text) or any(port not in ours for _, port in ADDRESS.findall(text))
        if err["code"] in UNCLEAR_CODES or leaked:
            findings["unclear"].append(err)
    for s in sent:
        if s["code"] and (seen.get(s["marker"][3:]) or stored.get(s["marker"][3:])):
            excuse = _excuse(s, e["fault_windows"])
            if not excuse:
                findings["unclear"].append({"where": "error answer for an applied call", "marker": s["marker"],
                                            "op": s["op"], "replica": s["replica"], "code": s["code"],
                                            "message": s["message"]})

    # Takeover: from a fault to the next model call on a thread that had a call in flight there.
    takeovers: list[float] = []
    by_kind: dict[str, list[float]] = defaultdict(list)
    never: list[dict[str, Any]] = []
    for f in e["faults"]:
        for thread in f["threads"]:
            after = [c["start"] for c in per_thread.get(thread, []) if c["start"] > f["at"]
                     and (f["kind"] not in ("sigstop", "sigterm") or c["replica"] != f["replica"])]
            if after:
                takeovers.append(min(after) - f["at"])
                by_kind[f["kind"]].append(takeovers[-1])
            else:
                never.append({"fault": f["kind"], "thread": thread})

    counts = {k: len(findings[k]) for k, _ in CATEGORIES}
    counts["not_settled"] = 0 if e["settled"] else 1
    counts["refused_requests"] = len(e["refused"])
    findings["refused_requests"] = list(e["refused"])
    lines = _lines(e, counts, findings, takeovers, by_kind, never)
    return {"seed": e["seed"], "counts": counts, "lines": lines,
            "takeover": {"samples": takeovers, "by_fault": dict(by_kind), "never": never, "lease_ttl": e["lease_ttl"]},
            "findings": dict(findings), "faults": e["faults"]}


def _excuse(s: dict[str, Any], windows: dict[str, list[list[Any]]]) -> str:
    """Why an error answer tells the client nothing: its replica was killed or stopped during the call."""
    slot = s["replica"][1:].split("g")[0]
    for start, end, what in windows.get(slot, []):
        if s["start"] <= end and s["end"] >= start:
            return str(what)
    return ""


def _lines(e: dict[str, Any], counts: dict[str, int], findings: dict[str, list[Any]], takeovers: list[float],
           by_kind: dict[str, list[float]], never: list[dict[str, Any]]) -> list[str]:
    sent, calls, ttl, t0 = e["sent"], e["model_calls"], e["lease_ttl"], e["t0"]
    accepted = sum(1 for s in sent if any(expected(s)))
    ops = Counter(s["op"] for s in sent)
    answers = Counter(s["code"] or ("stream finished" if s["stream_finished"] else "stream unfinished")
                      if s["op"] == "stream" else s["code"] or s["action"] or s["decision"] or "none" for s in sent)
    lines = [
        f"seed {e['seed']} · 3 replicas · lease TTL {ttl:g} s · {len(e['threads'])} threads · {len(sent)} calls, "
        f"{accepted} accepted · {len(calls)} model calls · request ids "
        f"{'used' if e['request_ids'] else 'not in the API'}" + (f" · without {','.join(e['without'])}"
                                                                  if e["without"] else ""),
        "calls: " + ", ".join(f"{k} {v}" for k, v in sorted(ops.items())),
        "answers: " + ", ".join(f"{k.replace('SIGNAL_ACTION_', '').replace('NOTIFICATION_ACTION_', 'notify ')} {v}"
                                for k, v in sorted(answers.items())),
        f"model calls whose client left before the answer: {sum(bool(c['dropped']) for c in calls)}; requests the "
        f"real API would refuse: {len(e['refused'])}; replica logs: {e['logs']}",
        "faults: " + ", ".join(f"{f['kind']} {f['replica'] or 'cluster'} at {f['at'] - t0:.1f} s" for f in e["faults"]),
    ]
    for k, label in CATEGORIES:
        detail = ""
        if k == "twice":
            detail = (f" markers (in two messages of a prompt {len(findings['twice_prompt'])}, stored twice "
                      f"{len(findings['twice_stored'])}, taken in by two stored calls {len(findings['twice_taken'])})")
        if k == "unclear" and findings[k]:
            kinds = Counter("INTERNAL/UNKNOWN" if x.get("code") in UNCLEAR_CODES else
                            "applied though answered an error" if x.get("where", "").startswith("error answer") else
                            "naming SQL/database/host" for x in findings[k])
            detail = " (" + ", ".join(f"{a} {b}" for a, b in sorted(kinds.items())) + ")"
        if k == "lost_stored" and findings[k]:
            detail = f" ({sum(1 for x in findings[k] if x.get('what'))} of them notification summaries)"
        lines.append(f"{label}: {counts[k]}{detail}")
    if takeovers:
        lines.append(f"takeover (fault to the next model call on an affected thread): p50 "
                     f"{statistics.median(takeovers):.2f} s, max {max(takeovers):.2f} s, lease TTL {ttl:g} s "
                     f"({len(takeovers)} threads; {len(never)} never taken over); max by fault: "
                     + ", ".join(f"{k} {max(v):.2f} s" for k, v in by_kind.items()))
    else:
        lines.append(f"takeover: no affected thread was run again ({len(never)} affected), lease TTL {ttl:g} s")
    if not e["settled"]:
        lines.append("the threads did not settle (a run stayed active): see runs left running")
    return lines
