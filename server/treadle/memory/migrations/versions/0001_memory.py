"""Memory: stored agents, resources, threads, messages and runs.

Revision ID: 0001_memory
Revises:
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001_memory"
down_revision = None
branch_labels = None
depends_on = None

ID = sa.String(255)


def upgrade() -> None:
    op.create_table(
        "agents",
        sa.Column("id", ID, primary_key=True),
        sa.Column("definition", sa.Text, nullable=False),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.Column("updated_at", sa.BigInteger, nullable=False),
    )
    op.create_table(
        "resources",
        sa.Column("id", ID, primary_key=True),
        sa.Column("created_at", sa.BigInteger, nullable=False),
    )
    op.create_table(
        "threads",
        sa.Column("id", ID, primary_key=True),
        sa.Column("resource_id", ID, sa.ForeignKey("resources.id"), nullable=False),
        sa.Column("title", sa.Text, nullable=False),
        sa.Column("metadata", sa.Text, nullable=False),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.Column("updated_at", sa.BigInteger, nullable=False),
    )
    op.create_index("ix_threads_resource_updated", "threads", ["resource_id", "updated_at", "id"])
    op.create_table(
        "messages",
        sa.Column("seq", sa.BigInteger().with_variant(sa.Integer, "sqlite"), primary_key=True,
                  autoincrement=True),
        sa.Column("thread_id", ID, sa.ForeignKey("threads.id", ondelete="CASCADE"), nullable=False),
        sa.Column("id", ID, nullable=False),
        sa.Column("resource_id", ID, nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("type", sa.String(255), nullable=False),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.Column("content", sa.Text, nullable=False),
        sa.UniqueConstraint("thread_id", "id", name="uq_messages_thread_id"),
    )
    op.create_index("ix_messages_thread_seq", "messages", ["thread_id", "seq"])
    op.create_table(
        "runs",
        sa.Column("id", ID, primary_key=True),
        sa.Column("agent_id", ID, nullable=False),
        sa.Column("thread_id", ID, sa.ForeignKey("threads.id", ondelete="CASCADE"), nullable=False),
        sa.Column("resource_id", ID, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("finish_reason", sa.String(32), nullable=False),
        sa.Column("usage", sa.Text, nullable=False),
        sa.Column("started_at", sa.BigInteger, nullable=False),
        sa.Column("ended_at", sa.BigInteger, nullable=True),
    )
    op.create_index("ix_runs_thread_started", "runs", ["thread_id", "started_at", "id"])


def downgrade() -> None:
    op.drop_table("runs")
    op.drop_table("messages")
    op.drop_table("threads")
    op.drop_table("resources")
    op.drop_table("agents")
