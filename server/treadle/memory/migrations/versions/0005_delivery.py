"""Delivery without loss or duplicates: pending signals found by id (the durable inbox consumes
them with the message that holds them), a version on notification records (changed by
compare-and-set), and the request ids of mutating thread calls (idempotent retries).

Revision ID: 0005_delivery
Revises: 0004_lease_epoch
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005_delivery"
down_revision = "0004_lease_epoch"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_pending_signals_id", "pending_signals", ["thread_id", "id"])
    with op.batch_alter_table("notifications") as batch:
        batch.add_column(sa.Column("version", sa.BigInteger(), nullable=False, server_default="0"))
    op.create_table(
        "request_ids",
        sa.Column("id", sa.String(255), primary_key=True),
        sa.Column("method", sa.String(64), primary_key=True),
        sa.Column("caller", sa.String(255), primary_key=True),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("response", sa.LargeBinary(), nullable=True),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
    )
    op.create_index("ix_request_ids_created", "request_ids", ["created_at"])


def downgrade() -> None:
    op.drop_index("ix_request_ids_created", "request_ids")
    op.drop_table("request_ids")
    with op.batch_alter_table("notifications") as batch:
        batch.drop_column("version")
    op.drop_index("ix_pending_signals_id", "pending_signals")
