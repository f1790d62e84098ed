"""Thread leases name the agent their run runs (so any replica can answer for the active run),
and are found by run id (signals routed by ``run_id`` to another replica's run).

Revision ID: 0003_thread_leases
Revises: 0002_signals
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003_thread_leases"
down_revision = "0002_signals"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("thread_leases") as batch:
        batch.add_column(sa.Column("agent_id", sa.String(255), nullable=False, server_default=""))
    op.create_index("ix_thread_leases_run", "thread_leases", ["run_id"])


def downgrade() -> None:
    op.drop_index("ix_thread_leases_run", "thread_leases")
    with op.batch_alter_table("thread_leases") as batch:
        batch.drop_column("agent_id")
