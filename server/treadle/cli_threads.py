"""``treadle threads list RESOURCE`` and ``treadle threads show RESOURCE THREAD``: a resource's
memory threads, and one thread's messages, printed for a person."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any, TextIO

import grpc
from google.protobuf import json_format

from treadle_client import AgentClient, default_target
from treadle.v1 import chunk_pb2, message_pb2, thread_service_pb2

from . import cli_security

_ROLES = {message_pb2.MESSAGE_ROLE_USER: "user", message_pb2.MESSAGE_ROLE_ASSISTANT: "assistant",
          message_pb2.MESSAGE_ROLE_SYSTEM: "system", message_pb2.MESSAGE_ROLE_SIGNAL: "signal"}


def add_parser(sub: Any) -> None:
    threads = sub.add_parser("threads", help="list a resource's memory threads, or show one")
    threads.set_defaults(run=main)
    verbs = threads.add_subparsers(dest="threads_command", required=True)
    listing = verbs.add_parser("list", help="the resource's threads, most recently updated first")
    listing.add_argument("resource", metavar="RESOURCE")
    show = verbs.add_parser("show", help="a thread's messages, oldest first, then its runs")
    show.add_argument("resource", metavar="RESOURCE")
    show.add_argument("thread", metavar="THREAD")
    for parser in (listing, show):
        parser.add_argument("--target", metavar="HOST:PORT", default=None,
                            help=f"server address (default: {default_target()}; set TREADLE_TARGET to change it)")
        cli_security.add_client_arguments(parser)


def main(args: argparse.Namespace) -> int:
    return asyncio.run(_run(args, sys.stdout))


async def _run(args: argparse.Namespace, out: TextIO) -> int:
    target = args.target or default_target()
    async with AgentClient(target, **cli_security.client_options(args)) as client:
        try:
            if args.threads_command == "list":
                threads = await client.list_threads(args.resource)
                if not threads:
                    print(f"no threads for resource {args.resource!r}", file=out)
                for t in threads:
                    when = t.update_time.ToDatetime().strftime("%Y-%m-%d %H:%M:%S")
                    title = f"  {t.title}" if t.title else ""
                    print(f"{t.id}{title}  (updated {when} UTC){_metadata(t.metadata)}", file=out)
            else:
                thread = await client.get_thread(args.resource, args.thread)
                print(f"thread {thread.id}" + (f": {thread.title}" if thread.title else ""), file=out)
                for message in await client.list_messages(args.resource, args.thread):
                    print_message(message, out)
                runs = await client.list_runs(args.resource, args.thread)
                print(f"runs ({len(runs)}, newest first; `treadle runs show {args.resource} {args.thread} RUN`"
                      " shows one):" if runs else "runs: none", file=out)
                for run in runs:
                    print(f"  {run_line(run)}", file=out)
        except grpc.aio.AioRpcError as e:
            print(cli_security.rpc_error("threads", e, target, args), file=sys.stderr)
            return 1
    return 0


def print_message(message: message_pb2.Message, out: TextIO) -> None:
    """One message: its role, then its parts (text, reasoning, tool calls and results, data)."""
    role = _ROLES.get(message.role, "?")
    lines: list[str] = []
    for part in message.content.parts:
        kind = part.WhichOneof("part")
        if kind == "text":
            lines.append(part.text.text)
        elif kind == "reasoning":
            lines.append(f"(thinking) {part.reasoning.text}")
        elif kind == "tool_invocation":
            inv = part.tool_invocation
            lines.append(f"→ tool {inv.tool_name}({_json(inv.args)})")
            if inv.is_error:
                lines.append(f"← {inv.tool_name}: error: {inv.error_text or _json(inv.result)}")
            elif inv.HasField("result"):
                lines.append(f"← {inv.tool_name}: {_json(inv.result)}")
        elif kind == "data":
            lines.append(f"[{part.data.name}] {_json(part.data.data)}")
        elif kind == "file":
            lines.append(f"[file {part.file.filename or part.file.mime_type}]")
        elif kind == "source":
            lines.append(f"[source {part.source.title or part.source.url}]")
        elif kind == "error":
            lines.append(f"[error {part.error.name}: {part.error.message}]")
    text = "\n".join(line for line in lines if line)
    indent = " " * (len(role) + 2)
    print(f"{role}: " + text.replace("\n", "\n" + indent), file=out)


def _json(value: Any) -> str:
    return json.dumps(json_format.MessageToDict(value), ensure_ascii=False, sort_keys=True)


def _metadata(metadata: Any) -> str:
    data = json_format.MessageToDict(metadata)
    return f"  {json.dumps(data, ensure_ascii=False, sort_keys=True)}" if data else ""


STATUS = {thread_service_pb2.RUN_STATUS_RUNNING: "running", thread_service_pb2.RUN_STATUS_FINISHED: "finished",
          thread_service_pb2.RUN_STATUS_FAILED: "failed", thread_service_pb2.RUN_STATUS_ABORTED: "aborted"}


def run_line(run: thread_service_pb2.Run) -> str:
    """``run_… assistant finished (stop) 2026-01-01 10:00:00 UTC, 1.20 s, tokens 12 in / 30 out``."""
    started = run.start_time.ToDatetime().strftime("%Y-%m-%d %H:%M:%S")
    took = f", {seconds(run):.2f} s" if run.HasField("end_time") else ""
    why = finish_reason_name(run)
    return (f"{run.id}  {run.agent_id}  {STATUS.get(run.status, '?')}{f' ({why})' if why else ''}  "
            f"{started} UTC{took}, tokens {run.usage.input_tokens} in / {run.usage.output_tokens} out")


def seconds(run: thread_service_pb2.Run) -> float:
    return (run.end_time.ToNanoseconds() - run.start_time.ToNanoseconds()) / 1e9


def finish_reason_name(run: thread_service_pb2.Run) -> str:
    if not run.finish_reason:
        return ""
    name = chunk_pb2.FinishReason.Name(run.finish_reason)
    return name.removeprefix("FINISH_REASON_").lower().replace("_", "-")
