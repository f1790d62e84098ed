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

from treadle_client import DEFAULT_TARGET, AgentClient
from treadle.v1 import message_pb2

_ROLES = {message_pb2.MESSAGE_ROLE_USER: "user", message_pb2.MESSAGE_ROLE_ASSISTANT: "assistant",
          message_pb2.MESSAGE_ROLE_SYSTEM: "system", message_pb2.MESSAGE_ROLE_SIGNAL: "signal"}


def add_parser(sub: Any) -> None:
    threads = sub.add_parser("threads", help="list a resource's memory threads, or show one")
    verbs = threads.add_subparsers(dest="threads_command", required=True)
    listing = verbs.add_parser("list", help="the resource's threads, most recently updated first")
    listing.add_argument("resource", metavar="RESOURCE")
    show = verbs.add_parser("show", help="a thread's messages, oldest first")
    show.add_argument("resource", metavar="RESOURCE")
    show.add_argument("thread", metavar="THREAD")
    for parser in (listing, show):
        parser.add_argument("--target", metavar="HOST:PORT", default=DEFAULT_TARGET, help="server address")


def main(args: argparse.Namespace) -> int:
    return asyncio.run(_run(args, sys.stdout))


async def _run(args: argparse.Namespace, out: TextIO) -> int:
    async with AgentClient(args.target) as client:
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
        except grpc.aio.AioRpcError as e:
            hint = " (is `treadle serve` running there?)" if e.code() == grpc.StatusCode.UNAVAILABLE else ""
            print(f"treadle threads: {e.code().name}: {e.details()}{hint}", file=sys.stderr)
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
