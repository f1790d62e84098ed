"""Thread leases carry a fencing token: ``epoch``, which grows each time the lease is taken (a
released lease keeps its row and its epoch, so the token never goes back).

Revision ID: 0004_lease_epoch
Revises: 0003_thread_leases
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004_lease_epoch"
down_revision = "0003_thread_leases"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("thread_leases") as batch:
        batch.add_column(sa.Column("epoch", sa.BigInteger, nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("thread_leases") as batch:
        batch.drop_column("epoch")
