"""The tables, as SQLAlchemy Core sees them for queries (migrations are the source of truth).

Times are integer microseconds since the epoch: identical on every engine, and page cursors
compare them exactly. JSON values are stored as text.
"""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, ForeignKey, Integer, MetaData, String, Table, Text

metadata = MetaData()

ID = String(255)
MICROS = BigInteger

agents = Table(
    "agents", metadata,
    Column("id", ID, primary_key=True),
    Column("definition", Text, nullable=False),
    Column("created_at", MICROS, nullable=False),
    Column("updated_at", MICROS, nullable=False),
)

resources = Table(
    "resources", metadata,
    Column("id", ID, primary_key=True),
    Column("created_at", MICROS, nullable=False),
)

threads = Table(
    "threads", metadata,
    Column("id", ID, primary_key=True),
    Column("resource_id", ID, ForeignKey("resources.id"), nullable=False),
    Column("title", Text, nullable=False),
    Column("metadata", Text, nullable=False),
    Column("created_at", MICROS, nullable=False),
    Column("updated_at", MICROS, nullable=False),
)

messages = Table(
    "messages", metadata,
    Column("seq", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True),
    Column("thread_id", ID, ForeignKey("threads.id", ondelete="CASCADE"), nullable=False),
    Column("id", ID, nullable=False),
    Column("resource_id", ID, nullable=False),
    Column("role", String(16), nullable=False),
    Column("type", String(255), nullable=False),
    Column("created_at", MICROS, nullable=False),
    Column("content", Text, nullable=False),
)

runs = Table(
    "runs", metadata,
    Column("id", ID, primary_key=True),
    Column("agent_id", ID, nullable=False),
    Column("thread_id", ID, ForeignKey("threads.id", ondelete="CASCADE"), nullable=False),
    Column("resource_id", ID, nullable=False),
    Column("status", String(16), nullable=False),
    Column("finish_reason", String(32), nullable=False),
    Column("usage", Text, nullable=False),
    Column("started_at", MICROS, nullable=False),
    Column("ended_at", MICROS, nullable=True),
    Column("detail", Text, nullable=True),
)

agent_versions = Table(
    "agent_versions", metadata,
    Column("id", ID, primary_key=True),
    Column("agent_id", ID, nullable=False),
    Column("number", Integer, nullable=False),
    Column("state", String(16), nullable=False),
    Column("override", Text, nullable=False),
    Column("message", Text, nullable=False),
    Column("author", ID, nullable=False),
    Column("restored_from", ID, nullable=False),
    Column("definition", Text, nullable=True),
    Column("created_at", MICROS, nullable=False),
    Column("published_at", MICROS, nullable=True),
)
