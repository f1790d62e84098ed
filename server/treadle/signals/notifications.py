"""Notification signals: an inbox per thread, a delivery policy, and a dispatcher for what is due.

Built-in policy (priority defaults to medium):

=========  ==========================================  =================
priority   thread running                              thread idle
=========  ==========================================  =================
urgent     deliver                                     deliver
high       summary now; the full record once idle      deliver
medium     summary now                                 deliver
low        summary now                                 same
=========  ==========================================  =================

An agent's ``notification_policy`` overrides it, checked ``decide`` → ``sources`` →
``priorities`` → ``default`` → built-in. A summary reaches a running loop as a signal; on an
idle thread it is stored in the thread as a message (the next run has it in its history) and
shown to subscribers, without waking the model. A summarised record stays ``pending`` until it
is delivered in full (as the framework keeps it).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from datetime import datetime, timedelta
from typing import Any, Literal

from ..agents import NotificationPolicy, NotificationRule
from ..core.errors import FailedPreconditionError, InvalidArgumentError, NotFoundError
from ..core.messages import Message, new_id, utcnow
from ..core.tool import Tool, ToolContext
from .runtime import MAX_ID, Accepted, IfActive, IfIdle, Target, ThreadRuntime
from ..memory.retry import StoreConflictError
from .signal import Signal
from .store import PRIORITIES, NotificationRecord, PendingSignal, Priority, ThreadKey

log = logging.getLogger(__name__)

CAS_ATTEMPTS = 8
"""How often a sender merges again when other writers changed the record it read."""
MAX_DELIVERY_ATTEMPTS = 5

ActionName = Literal["deliver", "summarize", "defer", "discard"]


@dataclass
class NotificationInput:
    source: str
    kind: str
    summary: str
    priority: Priority = "medium"
    payload: Any = None
    dedupe_key: str = ""
    coalesce_key: str = ""
    attributes: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] | None = None


@dataclass
class Decision:
    action: ActionName
    deliver_at: datetime | None = None
    summary_at: datetime | None = None
    rule: str = "built-in"
    deliver_when_idle: bool = False
    """After a summary now, the full record follows once the thread is idle (high priority)."""


@dataclass
class DecideArgs:
    """What a ``decide`` function gets."""

    record: NotificationRecord
    active: bool
    now: datetime


@dataclass
class NotificationResult:
    record: NotificationRecord
    decision: Decision
    signal: Signal | None = None
    accepted: Accepted | None = None


def builtin_decision(record: NotificationRecord, active: bool, now: datetime) -> Decision:
    if record.priority == "urgent":
        return Decision("deliver")
    if record.priority == "low":
        return Decision("summarize")
    if not active:
        return Decision("deliver")
    return Decision("summarize", deliver_when_idle=record.priority == "high")


ToolLookup = Callable[[str], Tool]
"""The server's tool lookup (in-process tools, then attached remote ones): raises when unknown."""


async def decide(
    policy: NotificationPolicy | None, record: NotificationRecord, active: bool, now: datetime,
    deciders: Mapping[str, Callable[[DecideArgs], Any]], tools: ToolLookup | None = None,
) -> Decision:
    if policy is not None:
        if policy.decide:
            args = DecideArgs(record, active, now)
            fn = policy.decide if callable(policy.decide) else deciders.get(policy.decide)
            if fn is not None:
                answer = fn(args)
                if asyncio.iscoroutine(answer):
                    answer = await answer
            elif tools is not None:
                answer = await _decide_by_tool(tools, str(policy.decide), args)
            else:
                raise InvalidArgumentError(f"notification decide function {policy.decide!r} is not registered")
            if answer is not None:
                return _coerce(answer, now)
        for rule, name in ((policy.sources.get(record.source), "source"),
                           (policy.priorities.get(record.priority), "priority"),
                           (policy.default, "default")):
            if rule is not None:
                return _from_rule(rule, now, name)
    return builtin_decision(record, active, now)


async def _decide_by_tool(tools: ToolLookup, name: str, args: DecideArgs) -> Any:
    """``decide: NAME`` with no decide function of that name: the tool ``NAME`` answers, in this
    server or attached from another process in any language (see docs/signals.md). Its input is
    the record, whether the thread runs and the time, as JSON; its output the same answer a
    function gives (null, or ``{"action": ..., "summaryAt": ISO time}``)."""
    try:
        tool = tools(name)
    except NotFoundError:
        raise InvalidArgumentError(
            f"notification decide function {name!r} is not registered (no decide function or tool of that name)"
        ) from None
    r = args.record
    payload = {
        "record": {
            "id": r.id, "resourceId": r.key[0], "threadId": r.key[1], "agentId": r.agent_id,
            "source": r.source, "kind": r.kind, "priority": r.priority, "summary": r.summary,
            "payload": r.payload, "dedupeKey": r.dedupe_key, "coalesceKey": r.coalesce_key,
            "coalescedCount": r.coalesced_count, "attributes": r.attributes, "metadata": r.metadata,
            "createTime": _iso(r.create_time), "updateTime": _iso(r.update_time),
        },
        "active": args.active,
        "now": _iso(args.now),
    }
    ctx = ToolContext(tool_call_id=f"decide-{r.id}", run_id="", agent_id=r.agent_id,
                      thread_id=r.key[1], resource_id=r.key[0])
    try:
        answer = tool.execute(payload, ctx)
        if inspect.isawaitable(answer):
            answer = await answer
    except Exception as e:  # noqa: BLE001 - the sender learns why, and nothing is stored
        raise FailedPreconditionError(f"notification decide tool {name!r} failed: {e}") from e
    if isinstance(answer, Mapping):
        answer = {k: _parse_time(v) if k in _TIME_KEYS else v for k, v in answer.items()}
    return answer


_TIME_KEYS = ("deliverAt", "deliver_at", "summaryAt", "summary_at")


def _iso(t: datetime) -> str:
    return t.isoformat().replace("+00:00", "Z")


def _parse_time(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise InvalidArgumentError(f"decide returned a time that is not ISO 8601: {value!r}") from None


def _from_rule(rule: NotificationRule, now: datetime, name: str) -> Decision:
    at = now + timedelta(seconds=rule.delay) if rule.delay > 0 else None
    if rule.action == "summarize":
        return Decision("summarize", summary_at=at, rule=name)
    return Decision(rule.action, deliver_at=at if rule.action == "deliver" else None, rule=name)


def _coerce(answer: Any, now: datetime) -> Decision:
    """A ``Decision``, a ``NotificationRule`` or a dict such as
    ``{"action": "summarize", "summaryAt": datetime}``."""
    if isinstance(answer, Decision):
        answer.rule = "decide"
        return answer
    if isinstance(answer, NotificationRule):
        return _from_rule(answer, now, "decide")
    if isinstance(answer, Mapping):
        action = answer.get("action")
        if action not in ("deliver", "summarize", "defer", "discard"):
            raise InvalidArgumentError(f"decide returned an unknown action {action!r}")
        return Decision(action, deliver_at=answer.get("deliverAt") or answer.get("deliver_at"),
                        summary_at=answer.get("summaryAt") or answer.get("summary_at"), rule="decide")
    raise InvalidArgumentError(f"decide returned {answer!r}; return a decision, a dict or None")


def _restore(record: NotificationRecord, before: NotificationRecord) -> None:
    for f in fields(record):
        setattr(record, f.name, getattr(before, f.name))


def _rank(priority: str) -> int:
    return PRIORITIES.index(priority) if priority in PRIORITIES else 1  # type: ignore[arg-type]


class NotificationCenter:
    def __init__(
        self, runtime: ThreadRuntime, *, clock: Callable[[], datetime] = utcnow,
        deciders: dict[str, Callable[[DecideArgs], Any]] | None = None, tools: ToolLookup | None = None,
    ) -> None:
        self.runtime = runtime
        self.clock = clock
        self.deciders: dict[str, Callable[[DecideArgs], Any]] = deciders if deciders is not None else {}
        self.tools = tools
        self._kick = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        self._stream_options: dict[ThreadKey, IfIdle] = {}
        runtime.on_idle.append(self._thread_idle)

    # --- calls --------------------------------------------------------------------------------

    async def send(self, target: Target, n: NotificationInput, if_idle: IfIdle | None = None) -> NotificationResult:
        for name in ("source", "kind", "summary"):
            if not getattr(n, name):
                raise InvalidArgumentError(f"notification.{name} is required")
        if not target.resource_id or not target.thread_id:
            raise InvalidArgumentError("notifications need resource_id and thread_id")
        if max(len(target.resource_id), len(target.thread_id)) > MAX_ID:
            raise InvalidArgumentError(f"resource_id and thread_id must be at most {MAX_ID} characters")
        policy = self.runtime.agent(target.agent_id).notification_policy if target.agent_id else None
        key = (target.resource_id, target.thread_id)
        if if_idle is not None and if_idle.stream_options is not None:
            self._stream_options[key] = if_idle
        for _ in range(CAS_ATTEMPTS):
            result = await self._send_once(key, target, n, policy, if_idle)
            if result is not None:
                break
        else:  # pragma: no cover - needs CAS_ATTEMPTS writers racing on one record
            raise StoreConflictError("the notification record kept changing under concurrent senders; retry")
        self._kick.set()
        if result.decision.action == "defer" and await self.runtime.current_run(key) is None:
            await self._thread_idle(key)
        return result

    async def _send_once(
        self, key: ThreadKey, target: Target, n: NotificationInput, policy: NotificationPolicy | None,
        if_idle: IfIdle | None,
    ) -> NotificationResult | None:
        """One merge-decide-write; None when another writer changed the record meanwhile (every
        write is a compare-and-set on the version read, so the caller merges again)."""
        now = self.clock()
        record = await self.runtime.store.find_mergeable(key, n.source, n.kind, n.dedupe_key, n.coalesce_key)
        if record is not None:
            record.summary, record.payload = n.summary, n.payload if n.payload is not None else record.payload
            record.coalesced_count += 1
            record.attributes = {**record.attributes, **n.attributes}
            record.metadata = n.metadata if n.metadata is not None else record.metadata
            if _rank(n.priority) > _rank(record.priority):
                record.priority = n.priority
            record.update_time = now
        else:
            record = NotificationRecord(
                key, n.source, n.kind, n.summary, priority=n.priority, payload=n.payload,
                dedupe_key=n.dedupe_key, coalesce_key=n.coalesce_key, attributes=dict(n.attributes),
                metadata=n.metadata, agent_id=target.agent_id, create_time=now, update_time=now,
            )
        record.agent_id = target.agent_id or record.agent_id
        active = await self.runtime.current_run(key) is not None
        decision = await decide(policy, record, active, now, self.deciders, self.tools)
        result = NotificationResult(record, decision)
        if decision.action == "deliver" and (decision.deliver_at is None or decision.deliver_at <= now):
            sent = await self._deliver(record, if_idle)
            if sent is None:
                return None
            result.signal, result.accepted = sent
            return result
        if decision.action == "summarize" and (decision.summary_at is None or decision.summary_at <= now):
            record.deliver_when_idle = decision.deliver_when_idle
            # Claimed for its summary in the write that records it: a thread going idle meanwhile
            # (its idle hook delivers the full record) cannot leave it summarised by nobody.
            record.summary_signal_id, record.summary_at = new_id("sig"), None
            if not await self.runtime.store.save_notification(record):
                return None
            summary = await self._summarize(key, [record], claimed=True)
            if summary is not None:
                result.signal, result.accepted = summary
            return result
        if decision.action == "discard":
            record.status = "discarded"
        elif decision.action == "defer":
            record.deliver_when_idle = True
        elif decision.action == "deliver":
            record.deliver_at = decision.deliver_at
        else:
            record.summary_at = decision.summary_at
        return result if await self.runtime.store.save_notification(record) else None

    async def records(self, key: ThreadKey, statuses: Iterable[str] = ()) -> list[NotificationRecord]:
        return await self.runtime.store.list_notifications(key, statuses)

    # --- sending ------------------------------------------------------------------------------

    async def _deliver(
        self, record: NotificationRecord, if_idle: IfIdle | None,
    ) -> tuple[Signal, Accepted] | None:
        """Claim the record (compare-and-set to ``delivered``, its signal stored in the same
        transaction as accepted for the thread), then send it; None when another writer (an idle
        hook on another replica, a sender) changed the record first: it is not sent twice. A
        send that fails puts the record back (``failed`` after ``MAX_DELIVERY_ATTEMPTS``)."""
        attributes = {"id": record.id, "source": record.source, "type": record.kind,
                      "kind": record.kind, "priority": record.priority, "status": "delivered",
                      **record.attributes}
        # As the framework shows it: the record in ``metadata.notification``.
        metadata = {**(record.metadata or {}), "notification": {
            "signal": "notification", "recordId": record.id, "source": record.source,
            "kind": record.kind, "priority": record.priority, "status": "delivered"}}
        signal = Signal(type="notification", tag_name="notification", contents=record.summary,
                        attributes=attributes, metadata=metadata)
        signal.accepted_at = self.clock()
        idle = if_idle or self._stream_options.get(record.key) or IfIdle()
        target = Target(record.agent_id, "", *record.key)
        before = replace(record)
        record.delivery_attempts += 1
        record.status, record.delivered_signal_id = "delivered", signal.id
        record.deliver_at, record.summary_at, record.deliver_when_idle = None, None, False
        record.update_time = self.clock()
        claim = PendingSignal(record.key, signal.to_message(thread_id=record.key[1], resource_id=record.key[0]),
                              "accepted", agent_id=record.agent_id)
        if not await self.runtime.store.save_notification(record, claim if record.agent_id else None):
            _restore(record, before)
            return None
        try:
            sent = await self.runtime.send(target, signal, IfActive("deliver"), IfIdle(
                "wake" if record.agent_id else "persist", None, idle.stream_options, idle.options_json,
            ))
        except BaseException:
            attempts, version = record.delivery_attempts, record.version
            _restore(record, before)
            record.delivery_attempts, record.version = attempts, version
            if attempts >= MAX_DELIVERY_ATTEMPTS:
                record.status = "failed"
            with contextlib.suppress(Exception):
                await self.runtime.store.remove_pending([signal.id])
                await self.runtime.store.save_notification(record)
            raise
        return sent.signal, sent.accepted

    async def _summarize(
        self, key: ThreadKey, records: list[NotificationRecord], claimed: bool = False,
    ) -> tuple[Signal, Accepted] | None:
        """Each record is claimed (compare-and-set: its summary signal noted; it stays pending until
        delivered in full) before anyone is told; a
        summary names only those claimed (None when another writer changed them all).
        ``claimed``: the one record was stored with its summary signal already."""
        if claimed:
            return await self._send_summary(key, records, records[0].summary_signal_id or new_id("sig"))
        signal_id = new_id("sig")
        claimed_records: list[NotificationRecord] = []
        for r in records:
            before = replace(r)
            r.summary_signal_id, r.summary_at, r.update_time = signal_id, None, self.clock()
            if await self.runtime.store.save_notification(r):  # stored before anyone is told
                claimed_records.append(r)
            else:
                _restore(r, before)
        if not claimed_records:
            return None
        return await self._send_summary(key, claimed_records, signal_id)

    async def _send_summary(
        self, key: ThreadKey, claimed: list[NotificationRecord], signal_id: str,
    ) -> tuple[Signal, Accepted]:
        counts = Counter(r.source for r in claimed)
        top = max((r.priority for r in claimed), key=_rank)
        signal = Signal(type="notification", tag_name="notification-summary",
                        contents=", ".join(f"{s}: {n}" for s, n in counts.items()),
                        attributes={"pending": len(claimed), "priority": top},
                        metadata={"notification": {"signal": "summary", "recordIds": [r.id for r in claimed],
                                                   "pending": len(claimed), "priority": top}}, id=signal_id)
        # Running: delivered into the run. Idle: not woken ("discard" leaves it to us) but stored
        # in the thread, so the next run has it in its history and does not stream it again.
        sent = await self.runtime.send(Target("", "", *key), signal, IfActive("deliver"), IfIdle("discard"))
        accepted = sent.accepted
        if accepted.action == "discard":
            accepted = Accepted("persist")
            if not await self._store_in_thread(key, signal):
                await self.runtime.send(Target("", "", *key), signal, IfActive("deliver"), IfIdle("persist"))
        if accepted.action == "persist":  # idle: subscribers see it, the model does not wake
            self.runtime.hub.publish(key, signal.to_chunk())
        return sent.signal, accepted

    async def _store_in_thread(self, key: ThreadKey, signal: Signal) -> bool:
        """Store ``signal`` as a message of the thread (created when new); False without a store."""
        memory = self.runtime.loop.memory
        open_thread = getattr(memory, "open_thread", None)
        if memory is None or open_thread is None:
            return False
        await open_thread(key[0], key[1])
        message: Message = signal.to_message(thread_id=key[1], resource_id=key[0])
        await memory.save_messages(key[1], key[0], [message])
        return True

    async def _thread_idle(self, key: ThreadKey) -> None:
        """Records waiting for the thread to be idle are delivered, most urgent first."""
        if self._stopping:
            return
        waiting = [r for r in await self.runtime.store.list_notifications(key, ("pending", "summarized"))
                   if r.deliver_when_idle]
        for record in sorted(waiting, key=lambda r: (-_rank(r.priority), r.create_time)):
            if await self.runtime.current_run(key) is not None:
                return  # a delivery woke the thread; the rest follow when it is idle again
            await self._attempt(record)

    async def _attempt(self, record: NotificationRecord) -> None:
        try:
            await self._deliver(record, None)
        except Exception:
            log.exception("delivering notification %s failed", record.id)

    # --- the dispatcher -----------------------------------------------------------------------

    def start(self) -> None:
        """Deliver due records from now on, including those stored before a restart (and those
        that waited for their thread to be idle when the server stopped)."""
        if self._task is None:
            self._task = asyncio.create_task(self._dispatch_forever(), name="notification dispatcher")

    async def recover(self) -> None:
        """After a restart: records waiting for an idle thread whose thread is idle now."""
        waiting = await self.runtime.store.list_notifications(None, ("pending", "summarized"))
        for key in dict.fromkeys(r.key for r in waiting if r.deliver_when_idle):
            if await self.runtime.current_run(key) is None:
                await self._thread_idle(key)

    async def stop(self) -> None:
        """Let the dispatcher finish what it is sending (never cut a store call short), then end."""
        if self._task is not None:
            self._stopping = True
            self._kick.set()
            await self._task
            self._task = None

    async def _dispatch_forever(self) -> None:
        while not self._stopping:
            self._kick.clear()
            try:
                wait = await self.dispatch_due()
            except Exception:
                log.exception("notification dispatcher failed; retrying")
                wait = 1.0
            if self._stopping:
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._kick.wait(), wait)

    async def dispatch_due(self) -> float | None:
        """Send what is due; returns the seconds until the next record is due (None: nothing)."""
        now = self.clock()
        records = await self.runtime.store.list_notifications(None, ("pending", "summarized"))
        due = sorted((r for r in records if r.due_at is not None and r.due_at <= now),
                     key=lambda r: (-_rank(r.priority), r.create_time))
        summaries: dict[ThreadKey, list[NotificationRecord]] = {}
        for r in due:
            if r.deliver_at is not None and r.deliver_at <= now:
                await self._attempt(r)
            elif r.status == "pending":
                summaries.setdefault(r.key, []).append(r)
        for key, batch in summaries.items():
            await self._summarize(key, batch)
        later = [r.due_at for r in records if r.due_at is not None and r.due_at > now]
        return max(0.0, (min(later) - now).total_seconds()) if later else None


__all__ = [
    "DecideArgs", "Decision", "NotificationCenter", "NotificationInput",
    "NotificationResult", "builtin_decision", "decide",
]
