"""Versioned migrations (Alembic), run at start: safe to run twice and from two processes.

The upgrade holds a lock for its whole length (PostgreSQL: a transaction-level advisory lock;
SQLite: an exclusive transaction), so a second process waits, then finds the schema at head and
does nothing. Other features add their own modules to ``migrations/versions``.
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, text
from sqlalchemy.ext.asyncio import AsyncEngine

MIGRATIONS = Path(__file__).parent / "migrations"
ADVISORY_LOCK_KEY = 0x7472_6561_646C  # "treadl"


def alembic_config(connection: Connection | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def head() -> str:
    rev = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert rev is not None
    return rev


async def upgrade(engine: AsyncEngine) -> None:
    """Bring the database to the newest schema version."""
    async with engine.connect() as conn:
        await conn.run_sync(_upgrade)


async def current_revision(engine: AsyncEngine) -> str | None:
    async with engine.connect() as conn:
        return await conn.run_sync(lambda c: MigrationContext.configure(c).get_current_revision())


def _upgrade(conn: Connection) -> None:
    if conn.dialect.name == "sqlite":
        conn.exec_driver_sql("BEGIN EXCLUSIVE")
    else:
        conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": ADVISORY_LOCK_KEY})
    try:
        command.upgrade(alembic_config(conn), "head")
    except BaseException:
        conn.rollback()
        raise
    conn.commit()
