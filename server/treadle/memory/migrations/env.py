"""Alembic's environment: migrations always run on a connection the server hands in.

``treadle.memory.migrate.upgrade`` opens that connection (holding the migration lock) and puts it
in ``config.attributes["connection"]``; there is no ``alembic.ini`` and no URL here. To add a
migration, drop a module in ``versions/`` whose ``down_revision`` is the current head.
"""

from __future__ import annotations

from alembic import context

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=None, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
