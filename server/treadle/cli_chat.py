"""``treadle chat AGENT [MESSAGE...]``: one answer streamed to the terminal, or, with no message,
a conversation on a memory thread, one line per turn.

Exit status (one message): 0 when the run finished, 1 on an error (the server's or the run's),
3 when a processor blocked the run (a tripwire), 130 when Ctrl-C stopped the answer.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import sys
import time
from typing import Any, TextIO

import grpc
from google.protobuf import struct_pb2

from treadle_client import AgentClient, default_target
from treadle.v1 import agent_pb2, chunk_pb2

from . import cli_security

EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_TRIPWIRE = 3
EXIT_INTERRUPTED = 130
"""What a shell reports for a command ended by Ctrl-C (128 + SIGINT)."""

_DIM, _RESET = "\x1b[2m", "\x1b[0m"
_QUIT = frozenset({"/quit", "/exit"})


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    chat = sub.add_parser(
        "chat", help="talk to an agent: one message, or a conversation when none is given",
        description=(
            "Stream an agent's answer to MESSAGE (the words are joined, so quotes are optional). "
            "Without MESSAGE, open a conversation on a memory thread: each line you type is one turn. "
            f"Exit status: 0 finished, {EXIT_ERROR} error, {EXIT_TRIPWIRE} blocked by a processor, "
            f"{EXIT_INTERRUPTED} stopped with Ctrl-C."
        ),
    )
    chat.add_argument("agent_id", nargs="?", metavar="AGENT", help="the agent to talk to (`treadle agents` lists them)")
    chat.add_argument("message", nargs="*", metavar="MESSAGE", help="the message (omit it to converse)")
    chat.add_argument("--target", metavar="HOST:PORT", default=default_target(),
                      help=f"server address (default: {default_target()}; set TREADLE_TARGET to change it)")
    chat.add_argument("--thread", metavar="ID",
                      help="memory thread to talk on (default for a conversation: a new one, chat-TIME)")
    chat.add_argument("--resource", metavar="ID",
                      help="owner of the thread (default: your user name)")
    cli_security.add_client_arguments(chat)
    chat.set_defaults(run=_chat)


def _chat(args: argparse.Namespace) -> int:
    """Ctrl-C while an answer streams ends that answer (the server cancels the run) and, in a
    conversation, returns to the prompt; at the prompt it clears the line. Neither ends the
    conversation: Ctrl-D or /quit does."""
    if not args.agent_id:
        print("treadle chat: name the agent to talk to: treadle chat AGENT [MESSAGE...] "
              "(`treadle agents` lists the server's agents)", file=sys.stderr)
        return EXIT_USAGE
    printer = ChunkPrinter(sys.stdout, sys.stderr, color=sys.stdout.isatty())
    message = " ".join(args.message).strip()
    # One event loop for the whole conversation (the channel lives on it), run one turn at a
    # time: between turns the prompt reads in the main thread, where Ctrl-C is an ordinary
    # KeyboardInterrupt; during a turn the Runner turns Ctrl-C into cancelling the turn.
    with asyncio.Runner() as runner:
        client = runner.run(_open(args))
        try:
            if message:
                memory = _memory(args.thread, args.resource) if args.thread or args.resource else None
                try:
                    return runner.run(_turn(client, printer, args, message, memory))
                except KeyboardInterrupt:
                    printer.end_line()
                    print("interrupted", file=sys.stderr)
                    return EXIT_INTERRUPTED
            return _converse(runner, client, printer, args)
        finally:
            runner.run(client.close())


async def _open(args: argparse.Namespace) -> AgentClient:
    return AgentClient(args.target, **cli_security.client_options(args))


def _converse(runner: asyncio.Runner, client: AgentClient, printer: ChunkPrinter, args: argparse.Namespace) -> int:
    """One turn per line of standard input, all on one thread, until end of input or /quit."""
    thread = args.thread or time.strftime("chat-%Y%m%d-%H%M%S")
    resource = args.resource or _user()
    interactive = sys.stdin.isatty()
    print(f"Chatting with {args.agent_id} at {args.target} on thread {thread} (resource {resource}).",
          file=sys.stderr)
    print(f"Continue it later with --thread {thread}. End with Ctrl-D or /quit; "
          "Ctrl-C stops an answer.", file=sys.stderr, flush=True)
    memory = _memory(thread, resource)
    while True:
        try:
            line = _read_line("you> " if interactive else "")
        except KeyboardInterrupt:  # at the prompt: drop the line, as a shell does
            print(file=sys.stderr, flush=True)
            continue
        if line is None or line.strip() in _QUIT:
            return 0
        if not line.strip():
            continue
        try:
            status = runner.run(_turn(client, printer, args, line.strip(), memory))
        except KeyboardInterrupt:
            printer.end_line()
            print("(answer stopped)", file=sys.stderr, flush=True)
            continue
        if status == EXIT_ERROR and printer.connection_lost:
            return status


async def _turn(
    client: AgentClient, printer: ChunkPrinter, args: argparse.Namespace, message: str,
    memory: agent_pb2.MemoryOptions | None,
) -> int:
    printer.reset()
    options = agent_pb2.CallOptions(memory=memory) if memory is not None else None
    try:
        async for chunk in client.stream(args.agent_id, message, options=options):
            printer.show(chunk)
    except grpc.aio.AioRpcError as e:
        printer.end_line()
        unavailable = e.code() == grpc.StatusCode.UNAVAILABLE
        printer.connection_lost = unavailable
        print(cli_security.rpc_error("chat", e, args.target, args), file=sys.stderr, flush=True)
        return EXIT_ERROR
    printer.end_line()
    if printer.failed:
        return EXIT_ERROR
    return EXIT_TRIPWIRE if printer.blocked else 0


def _memory(thread: str | None, resource: str | None) -> agent_pb2.MemoryOptions:
    return agent_pb2.MemoryOptions(resource=resource or _user(), thread_id=thread or "")


def _user() -> str:
    try:
        return getpass.getuser()
    except Exception:  # noqa: BLE001 - no user name in this environment (a container, say)
        return "cli"


def _read_line(prompt: str) -> str | None:
    try:
        return input(prompt)
    except EOFError:
        return None


class ChunkPrinter:
    """Renders chunks for a person: text as it arrives; tools, tripwires and ``data-*`` chunks on
    their own lines."""

    def __init__(self, out: TextIO, err: TextIO, *, color: bool = False) -> None:
        self.out, self.err, self.color = out, err, color
        self.failed = False
        self.blocked = False
        self.connection_lost = False
        self._at_line_start = True
        self._speaker: tuple[str, ...] = ()
        """The sub-agent path whose text is being written (empty: the agent's own)."""

    def reset(self) -> None:
        """Before the next turn of a conversation."""
        self.failed = self.blocked = self.connection_lost = False

    def show(self, chunk: chunk_pb2.Chunk) -> None:
        kind = chunk.WhichOneof("chunk")
        if kind == "tool_output":  # a sub-agent's chunk: its text and tools, indented under its name
            self._nested(tuple(chunk.tool_output.path), chunk.tool_output.output)
            return
        if self._speaker and kind != "data":
            self._speaker = ()
            self.end_line()
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
        elif kind == "data" and chunk.data.name in _SIGNAL_CHUNKS:
            self._line(self._dim(_signal_line(_py(chunk.data.data))))
        elif kind == "data":
            self._line(self._dim(f"◆ {chunk.data.name} {_short(_json(chunk.data.data))}"))
        elif kind == "tripwire":
            t = chunk.tripwire
            self.blocked = True
            self._line(f"✋ blocked by {t.processor_id or 'a processor'}: {t.reason}")
        elif kind == "abort":
            self._line(f"aborted: {chunk.abort.reason}")
        elif kind == "error":
            self.end_line()
            self.failed = True
            print(f"error: {chunk.error.message}", file=self.err, flush=True)
        elif kind == "finish":
            self.end_line()

    def _nested(self, path: tuple[str, ...], inner: chunk_pb2.Chunk) -> None:
        while inner.WhichOneof("chunk") == "tool_output":
            inner = inner.tool_output.output
        who = " › ".join(p.removeprefix("agent-") for p in path)
        kind = inner.WhichOneof("chunk")
        if kind == "text_delta":
            if self._speaker != path:
                self._speaker = path
                self.end_line()
                self._write(self._dim(f"  {who}: "))
            self._write(inner.text_delta.text)
        elif kind in ("tool_call", "tool_result", "tool_error", "tripwire"):
            self._speaker = ()
            line = {
                "tool_call": lambda: f"→ tool {inner.tool_call.tool_name}({_json(inner.tool_call.args)})",
                "tool_result": lambda: f"← {inner.tool_result.tool_name}: {_short(_json(inner.tool_result.result))}",
                "tool_error": lambda: f"← {inner.tool_error.tool_name}: error: {inner.tool_error.error}",
                "tripwire": lambda: f"✋ blocked by {inner.tripwire.processor_id or 'a processor'}: {inner.tripwire.reason}",
            }[kind]()
            self._line(self._dim(f"  {who}: {line}"))

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


_SHORT = 120
_SIGNAL_CHUNKS = frozenset({"data-user-message", "data-signal"})


def _signal_line(signal: Any) -> str:
    """A signal taken into the run, as a person reads it: ``↳ Devin (slack): text`` for a user
    message, ``↳ notification (github, high): text`` for the others."""
    signal = signal if isinstance(signal, dict) else {}
    attributes = signal.get("attributes") if isinstance(signal.get("attributes"), dict) else {}
    contents = " ".join(str(signal.get("contents") or "").split())
    if signal.get("type", "user") == "user":
        who = str(attributes.get("name") or "user")
        where = attributes.get("from") or attributes.get("source")
    else:
        who = str(signal.get("tagName") or signal.get("type") or "signal")
        where = ", ".join(str(attributes[k]) for k in ("source", "priority") if attributes.get(k))
    return f"↳ {who}{f' ({where})' if where else ''}: {_short(contents)}"


def _short(text: str) -> str:
    """A data payload on one line: long ones are cut, with their full length said."""
    return text if len(text) <= _SHORT else f"{text[:_SHORT]}… ({len(text)} chars)"


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


__all__ = ["ChunkPrinter", "add_parser"]
