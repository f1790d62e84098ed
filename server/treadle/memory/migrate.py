"""Versioned migrations (Alembic), run at start: safe to run twice and from two processes.

The upgrade holds a lock for its whole length (PostgreSQL: a transaction-level advisory lock;
SQLite: an exclusive transaction), so a second process waits, then finds the schema at head and
does nothing. Other features add their own modules to ``migrations/versions``.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Connection, text

from .engine import Database

MIGRATIONS = Path(__file__).parent / "migrations"
ADVISORY_LOCK_KEY = 0x7472_6561_646C  # "treadl"


def alembic_config(connection: Connection | None = None) -> object:
    from alembic.config import Config  # Alembic is only needed while migrating

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def head() -> str:
    from alembic.script import ScriptDirectory

    rev = ScriptDirectory.from_config(alembic_config()).get_current_head()  # type: ignore[arg-type]
    assert rev is not None
    return rev


async def upgrade(db: Database) -> None:
    """Bring the database to the newest schema version."""
    await db.run(_upgrade)


async def current_revision(db: Database) -> str | None:
    from alembic.runtime.migration import MigrationContext

    return await db.read(lambda c: MigrationContext.configure(c).get_current_revision())


def _upgrade(conn: Connection) -> None:
    from alembic import command

    if conn.dialect.name == "sqlite":
        conn.exec_driver_sql("BEGIN EXCLUSIVE")
    else:
        conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": ADVISORY_LOCK_KEY})
    try:
        command.upgrade(alembic_config(conn), "head")  # type: ignore[arg-type]
    except BaseException:
        conn.rollback()
        raise
    conn.commit()
