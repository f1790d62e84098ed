"""A run's steps and processor hook invocations, recorded when it ends: one JSON column on
``runs`` (steps with their times, finish reason, usage and model; hooks aggregated per step,
processor and hook). Runs that ended before this revision have none.

Revision ID: 0006_run_detail
Revises: 0005_delivery
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006_run_detail"
down_revision = "0005_delivery"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("detail", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("detail")
