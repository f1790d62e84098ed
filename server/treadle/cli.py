"""``treadle serve`` runs the server; ``treadle chat`` streams one answer to the terminal."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from pathlib import Path
from typing import Any, TextIO

import grpc
from google.protobuf import struct_pb2

from treadle_client import DEFAULT_TARGET, AgentClient
from treadle.v1 import chunk_pb2

from . import cli_processors, cli_threads
from .config import AgentFileError, Settings

_DIM, _RESET = "\x1b[2m", "\x1b[0m"


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    for stream in (sys.stdout, sys.stderr):  # arrows and emoji must not crash a C-locale terminal
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="replace")
    if args.command == "serve":
        return _serve(args)
    if args.command == "threads":
        return cli_threads.main(args)
    if args.command == "processors":
        return cli_processors.run(args)
    return asyncio.run(_chat(args))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="treadle", description="Treadle: an agent runtime served over gRPC.")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the server until SIGTERM or Ctrl-C")
    serve.add_argument("--listen", metavar="HOST:PORT", help="address to listen on (default 127.0.0.1:50051)")
    serve.add_argument("--config", metavar="FILE", type=Path, help="YAML or JSON file of agents (proto JSON form)")
    serve.add_argument("--grace", metavar="SECONDS", type=float, help="time in-flight runs get on shutdown (default 30)")
    serve.add_argument("--data-dir", metavar="DIR", type=Path, help="where the SQLite store lives (default ./.treadle)")
    serve.add_argument("--database", metavar="URL", help="store in PostgreSQL instead: postgresql://USER@HOST/DB")
    chat = sub.add_parser("chat", help="stream one answer from an agent")
    chat.add_argument("agent_id", metavar="AGENT_ID")
    chat.add_argument("message")
    chat.add_argument("--target", metavar="HOST:PORT", default=DEFAULT_TARGET, help="server address")
    cli_threads.add_parser(sub)
    cli_processors.add_parser(sub)
    return parser


# --- serve -------------------------------------------------------------------------------------


def _serve(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    try:
        settings = Settings.from_env(listen=args.listen, config_file=args.config, grace=args.grace,
                                     data_dir=args.data_dir, database=args.database)
    except ValueError as e:
        print(f"treadle serve: {e}", file=sys.stderr)
        return 2
    return asyncio.run(_run_server(settings))


async def _run_server(settings: Settings) -> int:
    from .app import TreadleApp  # here, so that `treadle chat` starts without the server's imports

    app = TreadleApp(settings)
    try:
        port = await app.start()
    except (AgentFileError, OSError) as e:
        print(f"treadle serve: {e}", file=sys.stderr)
        await app.stop(0)
        return 2
    host = settings.listen.rpartition(":")[0]
    print(f"Treadle listening on {host}:{port}")
    agents = app.registry.list_agents()
    print(f"Agents ({len(agents)}):")
    for agent in agents:
        print(f"  {agent.id}: {agent.model} ({agent.source})")
    if agents:
        print(f'Try: treadle chat {agents[0].id} "hello" --target {host}:{port}')
    sys.stdout.flush()
    await app.serve()
    return 0


# --- chat --------------------------------------------------------------------------------------


async def _chat(args: argparse.Namespace) -> int:
    printer = ChunkPrinter(sys.stdout, sys.stderr, color=sys.stdout.isatty())
    async with AgentClient(args.target) as client:
        try:
            async for chunk in client.stream(args.agent_id, args.message):
                printer.show(chunk)
        except grpc.aio.AioRpcError as e:
            printer.end_line()
            hint = " (is `treadle serve` running there?)" if e.code() == grpc.StatusCode.UNAVAILABLE else ""
            print(f"treadle chat: {e.code().name}: {e.details()}{hint}", file=sys.stderr)
            return 1
    printer.end_line()
    return 1 if printer.failed else 0


class ChunkPrinter:
    """Renders chunks for a person: text as it arrives, tools and tripwires on their own lines."""

    def __init__(self, out: TextIO, err: TextIO, *, color: bool = False) -> None:
        self.out, self.err, self.color = out, err, color
        self.failed = False
        self._at_line_start = True

    def show(self, chunk: chunk_pb2.Chunk) -> None:
        kind = chunk.WhichOneof("chunk")
        if kind == "text_delta":
            self._write(chunk.text_delta.text)
        elif kind == "reasoning_start":
            self.end_line()
            self._write(self._dim("thinking: "))
        elif kind == "reasoning_delta":
            self._write(self._dim(chunk.reasoning_delta.text))
        elif kind == "reasoning_end":
            self.end_line()
        elif kind == "tool_call":
            c = chunk.tool_call
            self._line(f"→ tool {c.tool_name}({_json(c.args)})")
        elif kind == "tool_result":
            r = chunk.tool_result
            self._line(f"← {r.tool_name}: {'error: ' if r.is_error else ''}{_json(r.result)}")
        elif kind == "tool_error":
            self._line(f"← {chunk.tool_error.tool_name}: error: {chunk.tool_error.error}")
        elif kind == "tripwire":
            t = chunk.tripwire
            self._line(f"✋ blocked by {t.processor_id or 'a processor'}: {t.reason}")
        elif kind == "abort":
            self._line(f"aborted: {chunk.abort.reason}")
        elif kind == "error":
            self.end_line()
            self.failed = True
            print(f"error: {chunk.error.message}", file=self.err, flush=True)
        elif kind == "finish":
            self.end_line()

    def end_line(self) -> None:
        if not self._at_line_start:
            self._write("\n")

    def _line(self, text: str) -> None:
        self.end_line()
        self._write(text + "\n")

    def _write(self, text: str) -> None:
        if not text:
            return
        self.out.write(text)
        self.out.flush()  # stream: show each delta as it arrives
        self._at_line_start = text.endswith("\n")

    def _dim(self, text: str) -> str:
        return f"{_DIM}{text}{_RESET}" if self.color and text else text


def _json(value: struct_pb2.Value) -> str:
    return json.dumps(_py(value), ensure_ascii=False, sort_keys=True)  # map order is not kept on the wire


def _py(value: struct_pb2.Value) -> Any:
    kind = value.WhichOneof("kind")
    if kind == "number_value":
        n = value.number_value
        return int(n) if n.is_integer() else n
    if kind == "struct_value":
        return {k: _py(v) for k, v in value.struct_value.fields.items()}
    if kind == "list_value":
        return [_py(v) for v in value.list_value.values]
    return getattr(value, kind) if kind and kind != "null_value" else None


if __name__ == "__main__":
    sys.exit(main())
