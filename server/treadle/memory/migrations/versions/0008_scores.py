"""Scores of finished runs: one row per scorer, run and source, queued ``pending`` when the run
finishes, claimed by one replica at a time (``claimed_by`` / ``claimed_until``), then
``succeeded`` with its score or ``failed`` after its last attempt. The unique key is what makes
a retry or a second enqueue never duplicate a score.

Revision ID: 0008_scores
Revises: 0006_run_detail
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008_scores"
down_revision = "0007_agent_versions"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "scores",
        sa.Column("id", sa.String(255), primary_key=True),
        sa.Column("run_id", sa.String(255), nullable=False),
        sa.Column("scorer_id", sa.String(255), nullable=False),
        sa.Column("source", sa.String(8), nullable=False),
        sa.Column("agent_id", sa.String(255), nullable=False),
        sa.Column("agent_version", sa.String(255), nullable=False),
        sa.Column("thread_id", sa.String(255), nullable=False),
        sa.Column("resource_id", sa.String(255), nullable=False),
        sa.Column("trace_id", sa.String(32), nullable=False),
        sa.Column("span_id", sa.String(16), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", sa.BigInteger(), nullable=False),
        sa.Column("claimed_by", sa.String(255), nullable=False),
        sa.Column("claimed_until", sa.BigInteger(), nullable=False),
        sa.Column("scorer", sa.Text(), nullable=False),
        sa.Column("payload", sa.Text(), nullable=False),
        sa.Column("score", sa.Float(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("details", sa.Text(), nullable=False),
        sa.Column("error", sa.Text(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("scored_at", sa.BigInteger(), nullable=True),
        sa.UniqueConstraint("run_id", "scorer_id", "source", name="uq_scores_run_scorer_source"),
    )
    op.create_index("ix_scores_due", "scores", ["status", "next_attempt_at"])
    op.create_index("ix_scores_agent", "scores", ["agent_id", "scored_at"])


def downgrade() -> None:
    op.drop_index("ix_scores_agent", "scores")
    op.drop_index("ix_scores_due", "scores")
    op.drop_table("scores")
