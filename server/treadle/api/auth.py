"""The caller of the current RPC, and the scope checks servicers ask for.

The gate (``api/gate.py``) authenticates each call and puts the caller's credential in a
context variable for the rest of the call; any code running in that call (a servicer, a task it
starts) asks here::

    from treadle.api.auth import require_resource

    require_resource(thread.resource_id)  # PermissionDeniedError unless the caller may

When auth is off (no ``auth`` section: the server listens on loopback only), there is no
credential and every check passes.
"""

from __future__ import annotations

from contextvars import ContextVar

from ..config.auth import Credential, Scope
from ..core.errors import PermissionDeniedError

_CALLER: ContextVar[Credential | None] = ContextVar("treadle_caller", default=None)

_WHAT: dict[Scope, str] = {
    "agents": "agent",
    "resources": "resource",
    "processors": "processor id",
    "tools": "tool name",
    "voices": "voice provider id",
}


def current_credential() -> Credential | None:
    """The credential of the RPC being served; None when auth is off."""
    return _CALLER.get()


def owner() -> str | None:
    """A key for who attached something (a tool, a processor); None when auth is off."""
    cred = _CALLER.get()
    return cred.id if cred is not None else None


def may(scope: Scope, name: str) -> bool:
    cred = _CALLER.get()
    return cred is None or cred.allows(scope, name)


def require(scope: Scope, name: str) -> None:
    """``PermissionDeniedError`` naming the missing scope unless the caller's credential allows."""
    cred = _CALLER.get()
    if cred is not None and cred.matches(scope, name) and (holder := cred.reserved.get(scope, {}).get(name)):
        raise PermissionDeniedError(
            f"{_WHAT[scope]} {name!r} is named for credential {holder!r}: only it may attach it"
        )
    if cred is not None and not cred.allows(scope, name):
        raise PermissionDeniedError(
            f"credential {cred.id!r} may not use {_WHAT[scope]} {name!r}: "
            f"its {scope!r} scope does not include it"
        )


def require_resource(resource_id: str) -> None:
    """For every thread read, subscription and signal: the caller must hold ``resource_id``."""
    require("resources", resource_id)


def sees_raw_tool_payloads() -> bool:
    """True when the caller's credential has ``rawToolPayloads``: it is sent tool payloads as the
    model saw them, not as the agent's tool payload rules project them. Without auth (loopback
    only) nobody is: the projections are what every client sees."""
    cred = _CALLER.get()
    return cred is not None and cred.raw_tool_payloads


def require_admin(action: str) -> None:
    cred = _CALLER.get()
    if cred is not None and not cred.admin:
        raise PermissionDeniedError(f"{action} needs an admin credential; {cred.id!r} is not admin")


def set_caller(cred: Credential | None) -> object:
    """Set for the current call (the gate does this); returns a token for ``reset_caller``."""
    return _CALLER.set(cred)


def reset_caller(token: object) -> None:
    _CALLER.reset(token)  # type: ignore[arg-type]
