"""The server's log: a level and a format (``text`` for a terminal, ``json`` for a collector),
from ``--log-level``/``--log-format`` or ``TREADLE_LOG_LEVEL``/``TREADLE_LOG_FORMAT``.

Every line goes to standard error. In JSON each line is one object: ``time`` (UTC, ISO 8601),
``level``, ``logger``, ``message``, and the structured fields a line carries (a finished run's
``run_id``, ``agent_id``, ``thread_id``, ``status``, ``finish_reason``, ``duration_ms``,
``input_tokens``, ``output_tokens``), so a collector need not parse the message.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import sys
from typing import Any

TEXT_FORMAT = "%(levelname)s %(name)s: %(message)s"
LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
FORMATS = ("text", "json")
FIELDS = "fields"
"""The ``extra`` key under which a log call passes its structured fields (a dict)."""

_QUIET = ("alembic",)
"""Libraries whose INFO lines say nothing an operator needs (the migrations that ran): shown at
DEBUG only."""


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": dt.datetime.fromtimestamp(record.created, dt.timezone.utc).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        fields = getattr(record, FIELDS, None)
        if isinstance(fields, dict):
            line.update(fields)
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False, default=str)


def resolve(level: str | None = None, fmt: str | None = None) -> tuple[str, str]:
    """The level and format to use: the arguments, else the environment, else INFO and text.
    A value that is neither raises ValueError naming the choices."""
    level = (level or os.environ.get("TREADLE_LOG_LEVEL") or "INFO").upper()
    fmt = (fmt or os.environ.get("TREADLE_LOG_FORMAT") or "text").lower()
    if level not in LEVELS:
        raise ValueError(f"log level {level!r} is not one of {', '.join(LEVELS)}")
    if fmt not in FORMATS:
        raise ValueError(f"log format {fmt!r} is not one of {', '.join(FORMATS)}")
    return level, fmt


def setup(level: str | None = None, fmt: str | None = None) -> None:
    """Configure the root logger once (a second call, or a program that configured logging
    itself, keeps what is there)."""
    root = logging.getLogger()
    if root.handlers:
        return
    level, fmt = resolve(level, fmt)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else logging.Formatter(TEXT_FORMAT))
    root.addHandler(handler)
    root.setLevel(level)
    if level != "DEBUG":
        for name in _QUIET:
            logging.getLogger(name).setLevel(logging.WARNING)
