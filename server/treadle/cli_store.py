"""``treadle migrate`` and ``treadle backup``: the store's upkeep, for operators.

``migrate`` brings the store (SQLite under ``--data-dir``, or PostgreSQL with ``--database``) to
the schema this version of Treadle needs, and exits: run it with the new version before a
rollout, so that no replica migrates while the others serve. Servers migrate at start too (under
a lock), so it is never required, only earlier.

``backup FILE`` copies the SQLite store to ``FILE`` with SQLite's online backup, consistent while
a server is running and writing. (PostgreSQL: ``pg_dump``.)
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import sys
from pathlib import Path
from typing import Any

from .config.settings import Settings


def add_parsers(sub: Any) -> None:
    migrate = sub.add_parser("migrate", help="bring the store's schema up to this version, then exit",
                             description="Migrate the store to this version's schema and exit (servers also "
                                         "migrate at start). Safe to repeat, and to run beside running servers.")
    _store_arguments(migrate)
    migrate.set_defaults(run=_migrate)
    backup = sub.add_parser("backup", help="copy the SQLite store to FILE, consistently, while servers run",
                            description="Copy the SQLite store (DATA_DIR/treadle.db) to FILE with SQLite's "
                                        "online backup. For PostgreSQL use pg_dump.")
    backup.add_argument("file", metavar="FILE", type=Path)
    _store_arguments(backup)
    backup.set_defaults(run=_backup)


def _store_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data-dir", metavar="DIR", type=Path,
                        help="where the SQLite store lives (TREADLE_DATA_DIR; default ./.treadle)")
    parser.add_argument("--database", metavar="URL",
                        help="the PostgreSQL store instead: postgresql://USER@HOST/DB (TREADLE_DATABASE_URL)")


def _settings(args: argparse.Namespace) -> Settings:
    return Settings.from_env(data_dir=args.data_dir, database=args.database)


def _migrate(args: argparse.Namespace) -> int:
    from sqlalchemy.engine import make_url

    from .memory import database_url, open_database
    from .memory.migrate import current_revision, head, upgrade

    settings = _settings(args)
    url = database_url(settings.data_dir, settings.database)
    shown = make_url(url).render_as_string(hide_password=True)

    async def run() -> tuple[str | None, str | None]:
        db = open_database(url)
        try:
            before = await current_revision(db)
            await upgrade(db)
            return before, await current_revision(db)
        finally:
            await db.dispose()

    try:
        before, after = asyncio.run(run())
    except Exception as e:  # noqa: BLE001 - said, not raised
        print(f"treadle migrate: cannot migrate the store at {shown}: {e}", file=sys.stderr)
        return 1
    assert after == head()
    if before == after:
        print(f"{shown}: schema already at {after}")
    else:
        print(f"{shown}: schema migrated from {before or 'empty'} to {after}")
    return 0


def _backup(args: argparse.Namespace) -> int:
    settings = _settings(args)
    if settings.database:
        print("treadle backup: the store is PostgreSQL: back it up with pg_dump", file=sys.stderr)
        return 2
    source = Path(settings.data_dir) / "treadle.db"
    if not source.exists():
        print(f"treadle backup: no store at {source} (--data-dir or TREADLE_DATA_DIR names another)",
              file=sys.stderr)
        return 1
    if args.file.exists():
        print(f"treadle backup: {args.file} exists; give a new file name", file=sys.stderr)
        return 1
    src, dst = sqlite3.connect(source, timeout=30), sqlite3.connect(args.file)
    try:
        src.backup(dst)
    finally:
        dst.close()
        src.close()
    print(f"backed up {source} to {args.file}")
    return 0
