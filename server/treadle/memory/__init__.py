"""Storage: the ``MemoryStore`` protocol and its SQL adapter (SQLite by default, PostgreSQL).

::

    store = await open_store(database_url(".treadle"))   # migrates to the newest schema
    thread = await store.open_thread("user-1", "thread-1")
"""

from __future__ import annotations

from .base import MemoryStore, Page, PageRequest, RunRecord, RunStatus, StoredAgent, Thread
from .engine import create_engine, database_url
from .migrate import upgrade
from .sql import SqlStore


async def open_store(url: str) -> SqlStore:
    """An engine for ``url``, migrated to the newest schema version."""
    engine = create_engine(url)
    try:
        await upgrade(engine)
    except BaseException:
        await engine.dispose()
        raise
    return SqlStore(engine)


__all__ = [
    "MemoryStore", "Page", "PageRequest", "RunRecord", "RunStatus", "SqlStore", "StoredAgent",
    "Thread", "create_engine", "database_url", "open_store", "upgrade",
]
