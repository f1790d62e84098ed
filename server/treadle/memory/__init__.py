"""Storage: the ``MemoryStore`` protocol and its SQL adapter (SQLite by default, PostgreSQL).

::

    store = await open_store(database_url(".treadle"))   # migrates to the newest schema
    thread = await store.open_thread("user-1", "thread-1")
"""

from __future__ import annotations

from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError

from .base import MemoryStore, Page, PageRequest, RunRecord, RunStatus, StoredAgent, Thread
from .engine import Database, database_url, open_database
from .migrate import upgrade
from .sql import SqlStore


class StoreUnavailableError(ConnectionError):
    """The database cannot be opened or migrated (the message names it, without a password)."""


async def open_store(url: str) -> SqlStore:
    """A store on ``url``, migrated to the newest schema version."""
    db = open_database(url)
    try:
        await upgrade(db)
        await db.ready()
    except (SQLAlchemyError, OSError) as e:
        await db.dispose()
        shown = make_url(url).render_as_string(hide_password=True)
        raise StoreUnavailableError(f"cannot open the store at {shown}: {e}") from e
    except BaseException:
        await db.dispose()
        raise
    return SqlStore(db)


__all__ = [
    "MemoryStore", "Page", "PageRequest", "RunRecord", "RunStatus", "SqlStore", "StoredAgent",
    "Database", "StoreUnavailableError", "Thread", "database_url", "open_database", "open_store", "upgrade",
]
