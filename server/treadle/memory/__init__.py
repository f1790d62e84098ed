"""Storage: the ``MemoryStore`` protocol and its SQL adapter (SQLite by default, PostgreSQL).

::

    store = await open_store(database_url(".treadle"))   # migrates to the newest schema
    thread = await store.open_thread("user-1", "thread-1")
"""

from __future__ import annotations

from .base import MemoryStore, Page, PageRequest, RunRecord, RunStatus, StoredAgent, Thread
from .engine import Database, database_url, open_database
from .migrate import upgrade
from .sql import SqlStore


async def open_store(url: str) -> SqlStore:
    """A store on ``url``, migrated to the newest schema version."""
    db = open_database(url)
    try:
        await upgrade(db)
    except BaseException:
        await db.dispose()
        raise
    return SqlStore(db)


__all__ = [
    "MemoryStore", "Page", "PageRequest", "RunRecord", "RunStatus", "SqlStore", "StoredAgent",
    "Database", "Thread", "database_url", "open_database", "open_store", "upgrade",
]
