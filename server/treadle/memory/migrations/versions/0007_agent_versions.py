"""Agent versions: the stored overrides of an agent's instructions, tools and tool descriptions
(draft, published, archived), with their change message and author. At most one published and
one draft version per agent (partial unique indexes).

Revision ID: 0007_agent_versions
Revises: 0006_run_detail
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007_agent_versions"
down_revision = "0006_run_detail"
branch_labels = None
depends_on = None

ID = sa.String(255)


def upgrade() -> None:
    op.create_table(
        "agent_versions",
        sa.Column("id", ID, primary_key=True),
        sa.Column("agent_id", ID, nullable=False),
        sa.Column("number", sa.Integer, nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("override", sa.Text, nullable=False),
        sa.Column("message", sa.Text, nullable=False),
        sa.Column("author", ID, nullable=False),
        sa.Column("restored_from", ID, nullable=False),
        sa.Column("definition", sa.Text, nullable=True),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.Column("published_at", sa.BigInteger, nullable=True),
        sa.UniqueConstraint("agent_id", "number", name="uq_agent_versions_number"),
    )
    for state in ("published", "draft"):
        where = sa.text(f"state = '{state}'")
        op.create_index(f"ix_agent_versions_one_{state}", "agent_versions", ["agent_id"], unique=True,
                        sqlite_where=where, postgresql_where=where)


def downgrade() -> None:
    op.drop_table("agent_versions")
