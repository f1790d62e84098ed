"""The ``treadle`` command: ``serve`` runs the server, ``chat`` talks to an agent, ``agents`` lists
and shows them, ``threads`` and ``runs`` show what memory stored, ``processors serve`` runs a
built-in remotely, ``health`` answers probes, ``migrate`` and ``backup`` look after the store,
``speak`` and ``listen`` use an agent's voice.

Each subcommand module adds its parser with ``add_parser(sub)`` and sets ``run`` (a function of
the parsed arguments returning the exit status); registering one is one line in ``_parser``.
Plain ``argparse``: a handful of subcommands need no framework, and the client commands start
without importing the server.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from importlib import metadata
from pathlib import Path

from . import cli_agents, cli_chat, cli_health, cli_processors, cli_runs, cli_security, cli_store, cli_threads, cli_voice
from .config import Settings
from .config.settings import DEFAULT_LISTEN


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args, extra = parser.parse_known_args(argv)
    if extra and getattr(args, "command", None) == "chat" and not any(w.startswith("-") for w in extra):
        args.message += extra  # `chat AGENT --thread t hello`: words after an option are the message too
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    for stream in (sys.stdout, sys.stderr):  # arrows and emoji must not crash a C-locale terminal
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="replace")
    try:
        status: int = args.run(args)
    except KeyboardInterrupt:  # Ctrl-C in a client command: its work is abandoned, no traceback
        print(file=sys.stderr)
        return 130
    return status


def version() -> str:
    try:
        return metadata.version("treadle")
    except metadata.PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="treadle", description="Treadle: an agent runtime served over gRPC.")
    parser.add_argument("--version", action="version", version=f"treadle {version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_serve(sub)
    cli_chat.add_parser(sub)
    cli_agents.add_parser(sub)
    cli_threads.add_parser(sub)
    cli_runs.add_parser(sub)
    cli_processors.add_parser(sub)
    cli_health.add_parser(sub)
    cli_store.add_parsers(sub)
    cli_voice.add_parser(sub)
    return parser


# --- serve -------------------------------------------------------------------------------------


def _add_serve(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    serve = sub.add_parser(
        "serve", help="run the server until SIGTERM or Ctrl-C",
        description="Run the server until SIGTERM or Ctrl-C. Each option also has a TREADLE_* variable.",
    )
    serve.add_argument("--listen", metavar="HOST:PORT",
                       help=f"address to listen on (TREADLE_LISTEN; default {DEFAULT_LISTEN})")
    serve.add_argument("--config", metavar="FILE", type=Path,
                       help="YAML or JSON file of agents, in the proto's JSON form (TREADLE_CONFIG)")
    serve.add_argument("--grace", metavar="SECONDS", type=float,
                       help="time in-flight runs get on shutdown (TREADLE_GRACE; default 30)")
    serve.add_argument("--data-dir", metavar="DIR", type=Path,
                       help="where the SQLite store lives (TREADLE_DATA_DIR; default ./.treadle)")
    serve.add_argument("--database", metavar="URL",
                       help="store in PostgreSQL instead: postgresql://USER@HOST/DB (TREADLE_DATABASE_URL)")
    serve.add_argument("--thread-lease-ttl", metavar="SECONDS", type=float,
                       help="how long a replica's lease on a running thread lasts unless renewed; "
                            "another replica takes a dead replica's threads over after it "
                            "(TREADLE_THREAD_LEASE_TTL; default 30)")
    serve.add_argument("--log-level", metavar="LEVEL", choices=("DEBUG", "INFO", "WARNING", "ERROR"),
                       type=str.upper, help="DEBUG, INFO, WARNING or ERROR (TREADLE_LOG_LEVEL; default INFO)")
    serve.add_argument("--log-format", metavar="FORMAT", choices=("text", "json"), type=str.lower,
                       help="text, or json: one object per line (TREADLE_LOG_FORMAT; default text)")
    serve.add_argument("--console", metavar="HOST:PORT",
                       help="the web console's address, or 'off' (TREADLE_CONSOLE; default: on a loopback "
                            "--listen, the same host and the next port; off on other addresses)")
    cli_security.add_serve_arguments(serve)
    serve.set_defaults(run=_serve)


def _serve(args: argparse.Namespace) -> int:
    from .app import TreadleApp  # here, so that the client commands start fast
    from .config import logs

    try:
        logs.setup(args.log_level, args.log_format)
        settings = Settings.from_env(listen=args.listen, config_file=args.config, grace=args.grace,
                                     data_dir=args.data_dir, database=args.database,
                                     thread_lease_ttl=args.thread_lease_ttl, console=args.console,
                                     **cli_security.serve_overrides(args))
    except ValueError as e:
        print(f"treadle serve: {e}", file=sys.stderr)
        return 2
    # serve() prints the start lines, or why the server cannot start (and exits with 2).
    asyncio.run(TreadleApp(settings).serve())
    return 0


if __name__ == "__main__":
    sys.exit(main())
