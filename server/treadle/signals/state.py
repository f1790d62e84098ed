"""State signals: named, versioned thread state, skipped when unchanged."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from ..core.errors import InvalidArgumentError
from ..memory.retry import StoreConflictError
from .runtime import IfActive, IfIdle, Sent, Target, ThreadRuntime
from .signal import Signal, normalise_type
from .store import StateChannel, ThreadKey

CAS_ATTEMPTS = 8
"""How often a sender reads the channel again when other senders moved it first."""


@dataclass
class StateInput:
    id: str
    cache_key: str
    mode: Literal["snapshot", "delta"] = "snapshot"
    value: Any = None
    delta: Any = None
    contents: str = ""
    attributes: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] | None = None
    tag_name: str = ""


@dataclass
class StateResult:
    sent: Sent | None
    version: int
    skipped: bool = False
    reason: str = ""


ThreadCheck = Callable[[ThreadKey], Awaitable[None]]
"""Raises ``NotFoundError`` when the thread does not exist (state lives in an existing thread)."""


async def send_state(
    runtime: ThreadRuntime, target: Target, state: StateInput,
    if_active: IfActive | None = None, if_idle: IfIdle | None = None,
    check_thread: ThreadCheck | None = None,
) -> StateResult:
    """A new version of channel ``state.id``, or ``skipped`` when its cache key and mode are the
    channel's current ones. With ``check_thread``, a thread that does not exist is refused before
    anything is stored or woken (as the framework fails: it cannot load the thread)."""
    if not state.id:
        raise InvalidArgumentError("state.id is required (the state channel, e.g. 'browser')")
    if not state.cache_key:
        raise InvalidArgumentError("state.cache_key is required")
    if not target.resource_id or not target.thread_id:
        if target.run_id and (run := runtime.active_run_by_id(target.run_id)) is not None:
            target = Target(target.agent_id or run.agent_id, "", *run.key)
        else:
            raise InvalidArgumentError("state signals need resource_id and thread_id: state lives in a thread")
    key = (target.resource_id, target.thread_id)
    if check_thread is not None:
        await check_thread(key)
    for _ in range(CAS_ATTEMPTS):
        result = await _send_once(runtime, key, target, state, if_active, if_idle)
        if result is not None:
            return result
    raise StoreConflictError(f"state channel {state.id!r} kept changing under concurrent senders; retry")


async def _send_once(
    runtime: ThreadRuntime, key: tuple[str, str], target: Target, state: StateInput,
    if_active: IfActive | None, if_idle: IfIdle | None,
) -> StateResult | None:
    """The next version is claimed (compare-and-set on the version read) before it is sent, so
    two senders never send one version twice; None when another sender claimed it first."""
    current = await runtime.store.get_state(key, state.id)
    if current is not None and current.cache_key == state.cache_key and current.mode == state.mode:
        return StateResult(None, current.version, skipped=True, reason="unchanged")
    before = current.version if current else 0
    version = before + 1
    _, tag = normalise_type("state", state.tag_name or "state")
    # As the framework shows it: the channel in ``metadata.state``, the value beside it.
    metadata: dict[str, Any] = {
        **(state.metadata or {}),
        "state": {"id": state.id, "threadId": target.thread_id, "cacheKey": state.cache_key,
                  "version": version, "mode": state.mode},
    }
    if state.mode == "snapshot" and state.value is not None:
        metadata["value"] = state.value
    if state.mode == "delta" and state.delta is not None:
        metadata["delta"] = state.delta
    signal = Signal(type="state", tag_name=tag, contents=state.contents,
                    attributes=dict(state.attributes), metadata=metadata)
    signal.to_message()  # bad attributes raise before the version is claimed
    claimed = StateChannel(state.id, state.cache_key, state.mode, version, signal.id)
    if not await runtime.store.put_state(key, claimed, before):
        return None
    try:
        sent = await runtime.send(target, signal, if_active, if_idle)
    except BaseException:  # not sent: the channel goes back to what it was (unless moved on)
        # (version 0 with no cache key: as if none was stored)
        await runtime.store.put_state(key, current or StateChannel(state.id, "", "", 0, ""), version)
        raise
    return StateResult(sent, version)


__all__ = ["StateInput", "StateResult", "send_state"]
