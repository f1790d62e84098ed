"""The engine adapters: how a transaction runs on SQLite and on PostgreSQL. Nothing else differs.

The store's SQL is written once, as plain functions of a SQLAlchemy ``Connection``
(``sql.py``); a ``Database`` runs such a function as one write transaction or one read:

- **SQLite** (the default) is a file under the data directory, in WAL mode so readers never wait
  for a writer. A whole transaction runs in one hop to a small thread pool, with the standard
  ``sqlite3`` driver: a transaction is a few microseconds of work, and one hop per transaction
  instead of one per statement is what makes it cheap next to a run. The driver is in
  autocommit mode and every write starts with ``BEGIN IMMEDIATE``, so a writer waits for the
  write lock up front (``busy_timeout``) instead of failing halfway when another connection or
  process wrote first. A write first tries to run right on the event loop, on a connection of
  its own that never waits (``busy_timeout=0``): uncontended, that saves the hop to a thread
  and back, which costs more than the write; when the write lock is taken (another write of
  this process in a thread, or another process) it is rolled back and run in the pool instead.
  Reads run on that connection too (WAL: a reader never waits for a writer), in the pool only
  while it is in use.
- **PostgreSQL** uses psycopg 3's asyncio driver; the same function runs through
  ``AsyncConnection.run_sync``. Pooled connections are in autocommit mode (a read or a write of
  one statement needs no transaction), and in READ COMMITTED while a transaction has them. They
  are checked before use, and a transaction that meets a transient fault (a restart, a
  serialization failure) runs again (``retry.py``). A run's own statements, each one statement
  alone (``Database.one``), run on psycopg's connections directly, from a small pool of their
  own (``_Connections``): SQLAlchemy's asyncio layer (a greenlet switch, a pool checkout, a
  connection and cursor wrapper) cost more of the server's CPU than psycopg's work per statement.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections import namedtuple
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.exc import DBAPIError, DisconnectionError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from .retry import retrying

SQLITE_FILE = "treadle.db"
BUSY_TIMEOUT_SECONDS = 30.0
POOL_TIMEOUT_SECONDS = 300.0
"""How long a run may wait for a free connection when the pool is exhausted (backpressure)."""
PING_AFTER_IDLE = 1.0
"""Seconds in the pool after which a PostgreSQL connection is checked before it is used."""
SQLITE_THREADS = 4
PREPARE_THRESHOLD = 1
"""PostgreSQL: a statement is prepared on a connection the second time it runs there (psycopg's
default is the sixth). Every run repeats the same few statements, whose parsing and planning
cost the server more than running them; one that runs once is not prepared at all."""

T = TypeVar("T")
Work = Callable[..., T]


def database_url(data_dir: Path | str, database: str | None = None) -> str:
    """The SQLAlchemy URL: ``database`` (a ``postgresql://`` URL) when given, else the SQLite
    file under ``data_dir`` (created if missing)."""
    if database:
        scheme, sep, rest = database.partition("://")
        if not sep:
            raise ValueError(f"database URL {database!r} must look like postgresql://USER@HOST/DB")
        if scheme in ("postgresql", "postgres", "postgresql+psycopg"):
            return f"postgresql+psycopg://{rest}"
        if scheme in ("sqlite", "sqlite+pysqlite"):
            return f"sqlite+pysqlite://{rest}"
        raise ValueError(f"database URL {database!r}: only postgresql:// is supported")
    path = Path(data_dir)
    path.mkdir(parents=True, exist_ok=True)
    return f"sqlite+pysqlite:///{(path / SQLITE_FILE).resolve()}"


class Database:
    """Runs ``fn(connection, *args)`` as one write transaction (``write``) or a read (``read``)."""

    dialect: str

    async def write(self, fn: Work[T], *args: Any) -> T:
        raise NotImplementedError

    async def read(self, fn: Work[T], *args: Any) -> T:
        raise NotImplementedError

    async def write_one(self, fn: Work[T], *args: Any) -> T:
        """A write that is one statement (which is atomic by itself), and reads at most: as
        ``write``, but on PostgreSQL without ``BEGIN`` and ``COMMIT`` (two round trips fewer).
        ``fn`` must change the database in one statement only, and must be safe to run again
        after a transient fault (retried as a read is)."""
        return await self.write(fn, *args)

    async def one(self, statement: Prepared, params: dict[str, Any], *, write: bool = False) -> Buffered:
        """``statement`` alone, with ``params``: a read, or with ``write`` a write that is one
        statement (``write_one``'s rules). Its rows (named tuples) and row count, fetched."""
        def work(conn: Connection) -> Buffered:
            return statement.buffered(conn, params)

        return await (self.write_one(work) if write else self.read(work))

    async def run(self, fn: Work[T], *args: Any) -> T:
        """``fn`` on a connection with no transaction begun (migrations manage their own)."""
        raise NotImplementedError

    async def ready(self) -> None:
        """Once the store is open: connections a server's first runs need, made now."""

    async def dispose(self) -> None:
        raise NotImplementedError


def conninfo(url: str) -> str:
    """A libpq URL for a SQLAlchemy ``postgresql+psycopg://`` one."""
    from sqlalchemy.engine import make_url

    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def open_database(url: str) -> Database:
    return SqliteDatabase(url) if url.startswith("sqlite") else PostgresDatabase(url)


class SqliteDatabase(Database):
    dialect = "sqlite"

    def __init__(self, url: str) -> None:
        self.engine: Engine = create_engine(
            url, connect_args={"timeout": BUSY_TIMEOUT_SECONDS, "check_same_thread": False},
            pool_size=SQLITE_THREADS, pool_timeout=POOL_TIMEOUT_SECONDS, pool_reset_on_return=None,
        )
        event.listen(self.engine, "connect", _sqlite_on_connect)
        self._threads = ThreadPoolExecutor(SQLITE_THREADS, thread_name_prefix="treadle-sqlite")
        self._inline: Connection | None = None
        """The event loop's own connection (``busy_timeout=0``), opened on the first write."""
        self._inline_lock = threading.Lock()

    async def _in_thread(self, work: Callable[[], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._threads, work)

    async def write(self, fn: Work[T], *args: Any) -> T:
        done, out = self._write_inline(fn, args)
        if done:
            return out

        def work() -> T:
            with self.engine.connect() as conn:
                return _transaction(conn, fn, args)

        return await self._in_thread(work)

    def _write_inline(self, fn: Work[T], args: tuple[Any, ...]) -> tuple[bool, Any]:
        """``(True, result)`` when the write ran here without waiting, ``(False, None)`` when the
        write lock is taken (nothing written) or the inline connection is in use."""
        if not self._inline_lock.acquire(blocking=False):
            return False, None
        try:
            try:
                return True, _transaction(self._inline_connection(), fn, args)
            except OperationalError as e:
                if not _is_busy(e.orig):
                    raise
                return False, None  # rolled back; the pool's connections wait for the lock
        finally:
            self._inline_lock.release()

    def _inline_connection(self) -> Connection:
        if self._inline is None:
            self._inline = self.engine.connect()
            self._inline.exec_driver_sql("PRAGMA busy_timeout=0")
        return self._inline

    async def read(self, fn: Work[T], *args: Any) -> T:
        done, out = self._read_inline(fn, args)
        if done:
            return out
        return await self.run(fn, *args)

    def _read_inline(self, fn: Work[T], args: tuple[Any, ...]) -> tuple[bool, Any]:
        """A read on the event loop's connection, as a write is: in WAL mode a read never waits
        for a writer, and it takes a few microseconds where the hop to a thread and back takes
        a hundred. ``(False, None)`` when that connection is in use or the database is busy."""
        if not self._inline_lock.acquire(blocking=False):
            return False, None
        try:
            conn = self._inline_connection()
            try:
                return True, fn(conn, *args)
            except OperationalError as e:
                if not _is_busy(e.orig):
                    raise
                return False, None
            finally:
                conn.rollback()  # ends the read (the driver is in autocommit: nothing to undo)
        finally:
            self._inline_lock.release()

    async def run(self, fn: Work[T], *args: Any) -> T:
        def work() -> T:
            with self.engine.connect() as conn:
                return fn(conn, *args)

        return await self._in_thread(work)

    async def dispose(self) -> None:
        with self._inline_lock:
            if self._inline is not None:
                self._inline.close()
                self._inline = None
        await self._in_thread(self.engine.dispose)
        self._threads.shutdown(wait=True)


def _transaction(conn: Connection, fn: Work[T], args: tuple[Any, ...]) -> T:
    """``BEGIN IMMEDIATE`` and ``COMMIT`` on the driver's connection (SQLAlchemy's execution of
    them cost more than SQLite's); a statement ``fn`` runs through SQLAlchemy begins its
    transaction object, which is committed or rolled back with it."""
    raw = conn.connection.dbapi_connection
    assert raw is not None
    try:
        raw.execute("BEGIN IMMEDIATE")
    except sqlite3.Error as e:  # wrapped as SQLAlchemy would (busy: see ``_write_inline``)
        conn._handle_dbapi_exception(e, "BEGIN IMMEDIATE", (), None, None)
    try:
        out = fn(conn, *args)
    except BaseException:
        conn.rollback()
        raw.rollback()
        raise
    conn.commit()
    raw.commit()
    return out


def _is_busy(error: BaseException | None) -> bool:
    return isinstance(error, sqlite3.OperationalError) and (
        getattr(error, "sqlite_errorcode", None) in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
        or "locked" in str(error) or "busy" in str(error))


def _sqlite_on_connect(dbapi_connection: Any, _record: Any) -> None:
    dbapi_connection.isolation_level = None  # transactions are begun explicitly (see write)
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


class PostgresDatabase(Database):
    dialect = "postgresql"

    def __init__(self, url: str) -> None:
        self._single: AsyncEngine = create_async_engine(
            url, pool_size=10, max_overflow=20, pool_timeout=POOL_TIMEOUT_SECONDS,
            connect_args={"prepare_threshold": PREPARE_THRESHOLD}, isolation_level="AUTOCOMMIT",
        )
        """Reads and single statements (``read``, ``write_one``): most of what a run asks, so the
        pool's connections are in autocommit mode as they are, with nothing to set and reset."""
        self.engine: AsyncEngine = self._single.execution_options(isolation_level="READ COMMITTED")
        """The same pool, for transactions (``write``, ``writing``, ``reading``, ``run``): a
        connection is set to READ COMMITTED while it is out of the pool."""
        self._direct = _Connections(conninfo(url), size=20)
        """A run's single statements (``one``), on psycopg's connections directly."""
        # A connection the database closed (restart, idle timeout) is replaced, not used: it is
        # pinged when it comes out of the pool after more than PING_AFTER_IDLE seconds there.
        # One that went back less than that ago was just working; pinging it too would add a
        # round trip to every transaction of a run. (A fault in between is a transient fault
        # like any other: the transaction runs again, ``retry.py``.)
        dialect = self._single.dialect
        pool_events = self._single.sync_engine

        @event.listens_for(pool_events, "checkin")
        def _returned(dbapi_connection: Any, record: Any) -> None:
            record.info["returned"] = time.monotonic()

        @event.listens_for(pool_events, "checkout")
        def _ping_if_idle(dbapi_connection: Any, record: Any, proxy: Any) -> None:
            returned = record.info.get("returned")
            if returned is not None and time.monotonic() - returned <= PING_AFTER_IDLE:
                return
            try:
                alive = dialect.do_ping(dbapi_connection)
            except Exception:
                alive = False
            if not alive:
                raise DisconnectionError("the connection was closed while idle")  # the pool takes another

    async def write(self, fn: Work[T], *args: Any) -> T:
        """One transaction, run again whole on a transient fault (``retry.py``)."""
        async def attempt() -> T:
            async with self.engine.begin() as conn:
                return await conn.run_sync(fn, *args)

        return await retrying(attempt)

    async def read(self, fn: Work[T], *args: Any) -> T:
        """Reads run outside a transaction (autocommit): under PostgreSQL's READ COMMITTED every
        statement sees its own snapshot either way, and a read then costs one round trip per
        statement instead of two more for BEGIN and ROLLBACK."""
        async def attempt() -> T:
            async with self._single.connect() as conn:
                return await conn.run_sync(fn, *args)

        return await retrying(attempt)

    async def write_one(self, fn: Work[T], *args: Any) -> T:
        return await self.read(fn, *args)

    async def one(self, statement: Prepared, params: dict[str, Any], *, write: bool = False) -> Buffered:
        """On psycopg's connection directly (``_Connections``), retried as a read is; the
        driver's errors wrapped as SQLAlchemy wraps them, so callers and ``retry.py`` see the
        same errors on every path."""
        import psycopg

        sql, args = statement.driver_args(self._single.dialect, [params])

        async def attempt() -> Buffered:
            try:
                async with self._direct.connection() as conn:
                    cursor = await conn.execute(sql, args[0])
                    rows = await cursor.fetchall() if cursor.description else []
                    return statement.fetched(cursor.description, rows, cursor.rowcount)
            except psycopg.Error as e:
                lost = isinstance(e, psycopg.OperationalError) and getattr(e, "sqlstate", None) is None
                raise DBAPIError.instance(sql, args[0], e, psycopg.Error, connection_invalidated=lost) from e

        return await retrying(attempt)

    async def run(self, fn: Work[T], *args: Any) -> T:
        async with self.engine.connect() as conn:
            return await conn.run_sync(fn, *args)

    async def ready(self) -> None:
        """``_Connections.OPEN`` connections for a run's statements, as the pool has some from
        opening the store: a server's first runs do not wait for connections to be made."""
        import psycopg

        try:
            await self._direct.fill(_Connections.OPEN)
        except psycopg.Error as e:
            raise DBAPIError.instance("", None, e, psycopg.Error) from e

    async def dispose(self) -> None:
        await self._direct.close()
        await self._single.dispose()


class _Connections:
    """psycopg's connections for ``PostgresDatabase.one``, in autocommit mode, statements prepared
    as the pool's are (``PREPARE_THRESHOLD``). Made when none is free (up to ``size`` at once; more
    callers wait, for at most ``POOL_TIMEOUT_SECONDS``), at most ``KEEP`` kept while idle, and
    pinged when taken after more than ``PING_AFTER_IDLE`` seconds idle: the pool's own rules.

    Not psycopg_pool: it connects in the background and makes callers wait for it, where a
    statement here must fail at once when the server cannot be reached, so that ``retry.py``'s
    backoff and budget decide, as they do for every other statement."""

    KEEP = 10
    OPEN = 2
    """Made when the store opens (``PostgresDatabase.ready``)."""

    def __init__(self, conninfo: str, size: int) -> None:
        self._conninfo = conninfo
        self._slots = asyncio.Semaphore(size)
        self._idle: list[tuple[Any, float]] = []
        """(connection, when it came back), the last one back taken first."""
        self._closed = False

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[Any]:
        if not self._slots.locked():
            await self._slots.acquire()  # free: taken without waiting (no task for a timeout)
        else:
            try:
                await asyncio.wait_for(self._slots.acquire(), POOL_TIMEOUT_SECONDS)
            except TimeoutError:
                raise PoolTimeoutError(f"no database connection free within {POOL_TIMEOUT_SECONDS:.0f} s") from None
        try:
            conn = await self._take()
            try:
                yield conn
            finally:
                if conn.broken:  # lost: so are, most likely, those idle since before (a restart)
                    await self._drop_idle()
                await self._give_back(conn)
        finally:
            self._slots.release()

    async def _take(self) -> Any:
        import psycopg

        while self._idle:
            conn, returned = self._idle.pop()
            if conn.closed or conn.broken:
                continue
            if time.monotonic() - returned > PING_AFTER_IDLE:
                try:
                    await conn.execute("")
                except psycopg.Error:
                    await conn.close()
                    continue
            return conn
        if self._closed:
            raise psycopg.OperationalError("the database's connections are closed")
        return await psycopg.AsyncConnection.connect(
            self._conninfo, autocommit=True, prepare_threshold=PREPARE_THRESHOLD)

    async def _give_back(self, conn: Any) -> None:
        from psycopg.pq import TransactionStatus

        if (self._closed or conn.closed or conn.broken or len(self._idle) >= self.KEEP
                or conn.info.transaction_status != TransactionStatus.IDLE):  # cut off mid-statement
            await conn.close()
            return
        self._idle.append((conn, time.monotonic()))

    async def fill(self, count: int) -> None:
        """``count`` connections made and idle (fewer when some are already)."""
        made = await asyncio.gather(*(self._take() for _ in range(max(0, count - len(self._idle)))))
        self._idle.extend((conn, time.monotonic()) for conn in made)

    async def _drop_idle(self) -> None:
        idle, self._idle = self._idle, []
        for conn, _ in idle:
            await conn.close()

    async def close(self) -> None:
        self._closed = True
        await self._drop_idle()


def is_postgres(conn: Connection) -> bool:
    return conn.dialect.name == "postgresql"


class Prepared:
    """A statement of every run (the fence check, a lease's expiry, the run's end), compiled once
    per dialect and run on the driver's own cursor, in the transaction of the ``Connection``:
    SQLAlchemy's execution (a context, parameter and result processing) costs several times
    what SQLite takes to run such a statement. Only for statements whose parameters need no
    conversion (strings and integers) and that expand nothing (no ``IN`` of a list). A ``str``
    is a statement as psycopg takes it (``%(name)s`` parameters), for PostgreSQL only."""

    def __init__(self, statement: Any, column_keys: list[str] | None = None) -> None:
        self.statement = statement
        self.column_keys = column_keys
        """For an ``INSERT``: the columns given (else every column of the table)."""
        self._compiled: dict[str, tuple[str, dict[str, Any], tuple[str, ...] | None]] = {}
        self._rows: dict[tuple[str, ...], Any] = {}

    def _compile(self, dialect: Any) -> tuple[str, dict[str, Any], tuple[str, ...] | None]:
        compiled = self._compiled.get(dialect.name)
        if compiled is None:
            if isinstance(self.statement, str):
                compiled = (self.statement, {}, None)
            else:
                c = self.statement.compile(dialect=dialect, column_keys=self.column_keys)
                positional = tuple(c.positiontup) if dialect.positional and c.positiontup else None
                defaults = {k: b.value for k, b in c.binds.items() if b.value is not None}
                compiled = (c.string, defaults, positional)
            self._compiled[dialect.name] = compiled
        return compiled

    def driver_args(self, dialect: Any, rows: list[dict[str, Any]]) -> tuple[str, list[Any]]:
        """The statement as the driver of ``dialect`` takes it, and each of ``rows`` as its
        parameters (defaults filled in)."""
        sql, defaults, order = self._compile(dialect)
        values = [{**defaults, **r} for r in rows]
        return sql, [tuple(v[k] for k in order) for v in values] if order is not None else values

    def cursor(self, conn: Connection, params: dict[str, Any]) -> Any:
        """The driver's cursor, the statement executed with ``params`` (defaults filled in)."""
        return self._execute(conn, [params], many=False)

    def executemany(self, conn: Connection, rows: list[dict[str, Any]]) -> None:
        """The statement once for each of ``rows`` (an ``INSERT`` of several rows)."""
        self._execute(conn, rows, many=True).close()

    def _execute(self, conn: Connection, rows: list[dict[str, Any]], many: bool) -> Any:
        sql, args = self.driver_args(conn.dialect, rows)
        cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
        try:
            if many:
                cursor.executemany(sql, args)
            else:
                cursor.execute(sql, args[0])
        except Exception as e:
            # As SQLAlchemy would: the driver's error wrapped (a lost connection invalidated),
            # so that retries and busy handling see what they see for any other statement.
            cursor.close()
            conn._handle_dbapi_exception(e, sql, args if many else args[0], None, None)
        return cursor

    def first(self, conn: Connection, params: dict[str, Any]) -> Any:
        """The first row (a tuple), or None."""
        cursor = self.cursor(conn, params)
        try:
            return cursor.fetchone()
        finally:
            cursor.close()

    def all(self, conn: Connection, params: dict[str, Any]) -> list[Any]:
        """Every row, each a named tuple (``row.column``)."""
        return self.buffered(conn, params).all()

    def buffered(self, conn: Connection, params: dict[str, Any]) -> Buffered:
        """Every row (named tuples) and the row count."""
        cursor = self.cursor(conn, params)
        try:
            return self.fetched(cursor.description, cursor.fetchall() if cursor.description else [],
                                cursor.rowcount)
        finally:
            cursor.close()

    def fetched(self, description: Any, rows: list[Any], rowcount: int) -> Buffered:
        """A driver's result as ``Buffered``: its rows as named tuples."""
        names = tuple(d[0] for d in description or ())
        row_type = self._rows.get(names)
        if row_type is None:
            row_type = self._rows[names] = namedtuple("Row", names, rename=True)  # type: ignore[misc]
        return Buffered([row_type(*r) for r in rows], rowcount)

    def rowcount(self, conn: Connection, params: dict[str, Any]) -> int:
        cursor = self.cursor(conn, params)
        try:
            return int(cursor.rowcount)
        finally:
            cursor.close()


# --- statement by statement ------------------------------------------------------------------------
# For code that awaits between statements (``async with writing(db) as conn: await
# conn.execute(...)``): one hop per statement on SQLite, so prefer ``Database.write`` on hot paths.


class Buffered:
    """A statement's result, fetched in full (rows and row count)."""

    def __init__(self, rows: list[Any], rowcount: int) -> None:
        self._rows, self.rowcount = rows, rowcount

    def all(self) -> list[Any]:
        return list(self._rows)

    def first(self) -> Any:
        return self._rows[0] if self._rows else None

    def one(self) -> Any:
        if len(self._rows) != 1:
            raise ValueError(f"expected one row, got {len(self._rows)}")
        return self._rows[0]

    def one_or_none(self) -> Any:
        return self.one() if self._rows else None

    def scalar(self) -> Any:
        return self._rows[0][0] if self._rows else None

    def scalar_one(self) -> Any:
        return self.one()[0]

    def scalars(self) -> list[Any]:
        return [r[0] for r in self._rows]


class _ThreadedConnection:
    def __init__(self, db: SqliteDatabase, conn: Connection) -> None:
        self._db, self._conn = db, conn

    async def execute(self, statement: Any, parameters: Any = None) -> Buffered:
        def work() -> Buffered:
            result = self._conn.execute(statement, parameters)
            rows = list(result.all()) if result.returns_rows else []
            return Buffered(rows, result.rowcount)

        return await self._db._in_thread(work)


@asynccontextmanager
async def writing(db: Database) -> AsyncIterator[Any]:
    """A write transaction whose ``execute`` is awaited statement by statement."""
    if isinstance(db, PostgresDatabase):
        async with db.engine.begin() as aconn:
            yield aconn
        return
    assert isinstance(db, SqliteDatabase)
    conn = await db._in_thread(db.engine.connect)
    try:
        await db._in_thread(lambda: conn.exec_driver_sql("BEGIN IMMEDIATE"))
        try:
            yield _ThreadedConnection(db, conn)
        except BaseException:
            await db._in_thread(conn.rollback)
            raise
        await db._in_thread(conn.commit)
    finally:
        await db._in_thread(conn.close)


@asynccontextmanager
async def reading(db: Database) -> AsyncIterator[Any]:
    """A connection for reads, awaited statement by statement."""
    if isinstance(db, PostgresDatabase):
        async with db.engine.connect() as aconn:
            yield aconn
        return
    assert isinstance(db, SqliteDatabase)
    conn = await db._in_thread(db.engine.connect)
    try:
        yield _ThreadedConnection(db, conn)
    finally:
        await db._in_thread(conn.close)
