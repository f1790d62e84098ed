"""Signals: signals waiting for a run, state channels, the notification inbox, thread leases.

Revision ID: 0002_signals
Revises: 0001_memory
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002_signals"
down_revision = "0001_memory"
branch_labels = None
depends_on = None

ID = sa.String(255)


def upgrade() -> None:
    op.create_table(
        "pending_signals",
        sa.Column("seq", sa.BigInteger().with_variant(sa.Integer, "sqlite"), primary_key=True,
                  autoincrement=True),
        sa.Column("id", ID, nullable=False, unique=True),
        sa.Column("resource_id", ID, nullable=False),
        sa.Column("thread_id", ID, nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("agent_id", ID, nullable=False),
        sa.Column("type", sa.String(255), nullable=False),
        sa.Column("content", sa.Text, nullable=False),
        sa.Column("options", sa.Text, nullable=True),
        sa.Column("created_at", sa.BigInteger, nullable=False),
    )
    op.create_index("ix_pending_signals_thread", "pending_signals", ["resource_id", "thread_id", "seq"])
    op.create_table(
        "state_channels",
        sa.Column("resource_id", ID, primary_key=True),
        sa.Column("thread_id", ID, primary_key=True),
        sa.Column("channel", ID, primary_key=True),
        sa.Column("cache_key", sa.Text, nullable=False),
        sa.Column("mode", sa.String(16), nullable=False),
        sa.Column("version", sa.BigInteger, nullable=False),
        sa.Column("last_signal_id", ID, nullable=False),
    )
    op.create_table(
        "notifications",
        sa.Column("id", ID, primary_key=True),
        sa.Column("resource_id", ID, nullable=False),
        sa.Column("thread_id", ID, nullable=False),
        sa.Column("agent_id", ID, nullable=False),
        sa.Column("source", ID, nullable=False),
        sa.Column("kind", ID, nullable=False),
        sa.Column("priority", sa.String(16), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("summary", sa.Text, nullable=False),
        sa.Column("payload", sa.Text, nullable=True),
        sa.Column("dedupe_key", sa.Text, nullable=False),
        sa.Column("coalesce_key", sa.Text, nullable=False),
        sa.Column("coalesced_count", sa.Integer, nullable=False),
        sa.Column("deliver_at", sa.BigInteger, nullable=True),
        sa.Column("summary_at", sa.BigInteger, nullable=True),
        sa.Column("deliver_when_idle", sa.Boolean, nullable=False),
        sa.Column("delivery_attempts", sa.Integer, nullable=False),
        sa.Column("delivered_signal_id", ID, nullable=False),
        sa.Column("summary_signal_id", ID, nullable=False),
        sa.Column("attributes", sa.Text, nullable=False),
        sa.Column("metadata", sa.Text, nullable=True),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.Column("updated_at", sa.BigInteger, nullable=False),
    )
    op.create_index("ix_notifications_thread", "notifications", ["resource_id", "thread_id", "status"])
    op.create_index("ix_notifications_status", "notifications", ["status"])
    op.create_table(
        "thread_leases",
        sa.Column("resource_id", ID, primary_key=True),
        sa.Column("thread_id", ID, primary_key=True),
        sa.Column("owner", ID, nullable=False),
        sa.Column("run_id", ID, nullable=False),
        sa.Column("expires_at", sa.BigInteger, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("thread_leases")
    op.drop_table("notifications")
    op.drop_table("state_channels")
    op.drop_table("pending_signals")
