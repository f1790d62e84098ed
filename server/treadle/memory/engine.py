"""The engine factory: one SQLAlchemy async engine per store, SQLite or PostgreSQL.

SQLite (the default) is a file under the data directory, in WAL mode so readers never wait for a
writer. Its driver is put in autocommit mode and every write transaction starts with
``BEGIN IMMEDIATE``: a writer then waits (``busy_timeout``) for the write lock up front instead of
failing halfway when another connection or process wrote first. PostgreSQL uses psycopg 3.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

SQLITE_FILE = "treadle.db"
BUSY_TIMEOUT_SECONDS = 30.0


def database_url(data_dir: Path | str, database: str | None = None) -> str:
    """The SQLAlchemy URL: ``database`` (a ``postgresql://`` URL) when given, else the SQLite
    file under ``data_dir`` (created if missing)."""
    if database:
        scheme, sep, rest = database.partition("://")
        if not sep:
            raise ValueError(f"database URL {database!r} must look like postgresql://USER@HOST/DB")
        if scheme in ("postgresql", "postgres", "postgresql+psycopg"):
            return f"postgresql+psycopg://{rest}"
        if scheme in ("sqlite", "sqlite+aiosqlite"):
            return f"sqlite+aiosqlite://{rest}"
        raise ValueError(f"database URL {database!r}: only postgresql:// is supported")
    path = Path(data_dir)
    path.mkdir(parents=True, exist_ok=True)
    return f"sqlite+aiosqlite:///{(path / SQLITE_FILE).resolve()}"


def create_engine(url: str, **kwargs: Any) -> AsyncEngine:
    if url.startswith("sqlite"):
        engine = create_async_engine(url, connect_args={"timeout": BUSY_TIMEOUT_SECONDS}, **kwargs)
        event.listen(engine.sync_engine, "connect", _sqlite_on_connect)
        return engine
    kwargs.setdefault("pool_size", 10)
    kwargs.setdefault("max_overflow", 20)
    return create_async_engine(url, **kwargs)


def _sqlite_on_connect(dbapi_connection: Any, _record: Any) -> None:
    dbapi_connection.isolation_level = None  # transactions are begun explicitly (see writing)
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def is_sqlite(engine: AsyncEngine) -> bool:
    return engine.dialect.name == "sqlite"


@asynccontextmanager
async def writing(engine: AsyncEngine) -> AsyncIterator[AsyncConnection]:
    """One write transaction, committed at the end (rolled back on an exception)."""
    if not is_sqlite(engine):
        async with engine.begin() as conn:
            yield conn
        return
    async with engine.connect() as conn:
        await conn.exec_driver_sql("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            await conn.rollback()
            raise
        await conn.commit()


@asynccontextmanager
async def reading(engine: AsyncEngine) -> AsyncIterator[AsyncConnection]:
    async with engine.connect() as conn:
        yield conn
