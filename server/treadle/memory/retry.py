"""Database faults: what is retried, for how long, and what a caller sees when it still fails.

PostgreSQL pools check a connection that sat idle before handing it out (``engine.py``), so a connection
the server closed (a restart, an idle timeout, a failover) is replaced instead of failing the
next statement. A transaction that still meets a transient fault is run again whole, with
exponential backoff from ``FIRST_DELAY`` to ``MAX_DELAY``, for at most ``BUDGET`` seconds:

- the connection was lost or refused (``OperationalError``/``InterfaceError`` with no SQLSTATE,
  class 08: connection exception);
- ``57P01`` admin shutdown, ``57P02`` crash shutdown, ``57P03`` cannot connect now (the server
  is starting or stopping);
- ``40001`` serialization failure and ``40P01`` deadlock detected.

What still fails raises ``StoreUnavailableError``, which answers ``UNAVAILABLE`` with a message
that names the kind of fault only: never SQL, a host, a port or a password (those go to the
server log).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from sqlalchemy.exc import DBAPIError

log = logging.getLogger(__name__)

BUDGET = 15.0
"""Seconds a transaction is retried for before the call answers UNAVAILABLE (a PostgreSQL
restart takes a few seconds; a failover longer than this fails the calls it meets)."""
FIRST_DELAY = 0.05
MAX_DELAY = 1.0
TRANSIENT_STATES = frozenset({"57P01", "57P02", "57P03", "40001", "40P01"})

T = TypeVar("T")


class StoreUnavailableError(Exception):
    """The database could not be reached within the retry budget (UNAVAILABLE: retry later)."""


class StoreConflictError(StoreUnavailableError):
    """A compare-and-set kept losing to other writers (UNAVAILABLE: the call changed nothing)."""


def transient(error: BaseException) -> str:
    """What kind of transient fault ``error`` is ("" when it is not one)."""
    if not isinstance(error, DBAPIError):
        return ""
    if error.connection_invalidated:
        return "connection lost"
    state = getattr(error.orig, "sqlstate", None)
    if state in TRANSIENT_STATES:
        return {"57P01": "database shutting down", "57P02": "database crashed",
                "57P03": "database starting", "40001": "serialization failure",
                "40P01": "deadlock"}[state]
    if state is not None and state.startswith("08"):
        return "connection lost"
    name = type(error.orig).__name__
    if state is None and name in ("OperationalError", "InterfaceError"):
        return "connection lost"
    return ""


async def retrying(attempt: Callable[[], Awaitable[T]], *, budget: float = BUDGET) -> T:
    """``attempt()`` again on transient faults, until it succeeds or ``budget`` seconds passed."""
    deadline = time.monotonic() + budget
    delay = FIRST_DELAY
    while True:
        try:
            return await attempt()
        except DBAPIError as e:
            kind = transient(e)
            if not kind:
                raise
            if time.monotonic() + delay > deadline:
                log.warning("database fault not recovered within %.0f s: %s", budget, e)
                raise StoreUnavailableError(
                    f"the database is unavailable ({kind}); retried for {budget:.0f} s") from None
            log.info("database fault (%s); retrying in %.2f s", kind, delay)
        await asyncio.sleep(delay)
        delay = min(delay * 2, MAX_DELAY)


__all__ = ["BUDGET", "StoreConflictError", "StoreUnavailableError", "retrying", "transient"]
