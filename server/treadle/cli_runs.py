"""``treadle runs list RESOURCE THREAD`` and ``treadle runs show RESOURCE THREAD RUN``: the runs
recorded on a memory thread, and one run with the messages it wrote, step by step.

A run record holds its agent, status, finish reason, token usage and start and end times, and,
from when it ended, its steps (times, finish reason, usage, model) and its processor hook
invocations counted per step, processor and hook. The messages are those the thread stored
between the run's start and end, split into steps at the step-start parts of its assistant
messages; each step line shows the stored step's duration and model, and the hooks under it.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any, TextIO

import grpc

from treadle_client import AgentClient, default_target
from treadle.v1 import message_pb2, thread_service_pb2

from . import cli_security
from .cli_threads import STATUS, finish_reason_name, print_message, run_line, seconds

def add_parser(sub: Any) -> None:
    runs = sub.add_parser("runs", help="the runs recorded on a memory thread, or one of them",
                          description="List the runs of a memory thread (newest first), or show one.")
    runs.set_defaults(run=main)
    verbs = runs.add_subparsers(dest="runs_command", required=True, metavar="VERB")
    listing = verbs.add_parser("list", help="the thread's runs, newest first")
    show = verbs.add_parser("show", help="one run: its record and the messages it wrote, step by step")
    for parser in (listing, show):
        parser.add_argument("resource", metavar="RESOURCE")
        parser.add_argument("thread", metavar="THREAD")
        parser.add_argument("--target", metavar="HOST:PORT", default=None,
                            help=f"server address (default: {default_target()}; set TREADLE_TARGET to change it)")
        cli_security.add_client_arguments(parser)
    show.add_argument("run_id", metavar="RUN")


def main(args: argparse.Namespace) -> int:
    return asyncio.run(_run(args, sys.stdout))


async def _run(args: argparse.Namespace, out: TextIO) -> int:
    target = args.target or default_target()
    async with AgentClient(target, **cli_security.client_options(args)) as client:
        try:
            runs = await client.list_runs(args.resource, args.thread)
            if args.runs_command == "list":
                if not runs:
                    print(f"no runs on thread {args.thread!r}", file=out)
                for r in runs:
                    print(run_line(r), file=out)
                return 0
            found = [r for r in runs if r.id == args.run_id]
            if not found:
                ids = ", ".join(r.id for r in runs[:5]) or "none"
                print(f"treadle runs: no run {args.run_id!r} on thread {args.thread!r} "
                      f"(newest: {ids}; `treadle runs list {args.resource} {args.thread}` lists them)",
                      file=sys.stderr)
                return 1
            messages = await client.list_messages(args.resource, args.thread)
            older = [r for r in runs if r.start_time.ToNanoseconds() < found[0].start_time.ToNanoseconds()]
            after = max((r.end_time.ToNanoseconds() for r in older if r.HasField("end_time")), default=0)
            show_run(found[0], [m for m in messages if _during(m, found[0], after)], out)
        except grpc.aio.AioRpcError as e:
            print(cli_security.rpc_error("runs", e, target, args), file=sys.stderr)
            return 1
    return 0


def show_run(run: thread_service_pb2.Run, mine: list[message_pb2.Message], out: TextIO) -> None:
    """The run's record, then ``mine`` (the messages it wrote), its assistant message by step."""
    print(f"run {run.id}", file=out)
    print(f"  agent:    {run.agent_id}", file=out)
    if run.agent_version_id:  # a stored version of the agent (docs/versions.md)
        print(f"  version:  v{run.agent_version_number} ({run.agent_version_selection}, {run.agent_version_id})",
              file=out)
    if run.matched_variants or run.resolver_overrides:  # a per-request agent: what this call resolved
        how = [f"variants {', '.join(f'{v.field}[{v.index}]' for v in run.matched_variants)}"] if run.matched_variants else []
        how += [f"resolver set {', '.join(run.resolver_overrides)}"] if run.resolver_overrides else []
        print(f"  model:    {run.resolved_model} ({'; '.join(how)})", file=out)
    print(f"  thread:   {run.thread_id} (resource {run.resource_id})", file=out)
    why = finish_reason_name(run)
    print(f"  status:   {STATUS.get(run.status, '?')}{f' ({why})' if why else ''}", file=out)
    print(f"  started:  {run.start_time.ToDatetime().isoformat(sep=' ', timespec='milliseconds')} UTC", file=out)
    if run.HasField("end_time"):
        print(f"  ended:    {run.end_time.ToDatetime().isoformat(sep=' ', timespec='milliseconds')} UTC "
              f"({seconds(run):.2f} s)", file=out)
    u = run.usage
    print(f"  tokens:   {u.input_tokens} in, {u.output_tokens} out"
          + (f", {u.reasoning_tokens} reasoning" if u.reasoning_tokens else "")
          + (f", {u.cached_input_tokens} cached" if u.cached_input_tokens else ""), file=out)
    assistant = [m for m in mine if m.role == message_pb2.MESSAGE_ROLE_ASSISTANT]
    # An assistant message holds one step, then a step-start part before each further one; the
    # answer after a signal taken in at a step boundary is a new message (its next step).
    steps = sum(1 + sum(p.WhichOneof("part") == "step_start" for p in m.content.parts) for m in assistant)
    print(f"  steps:    {max(steps, len(run.steps))}", file=out)
    outside = [h for h in run.hooks if h.step == 0]
    if outside:
        print("  hooks outside steps (processInput, processOutputResult):", file=out)
        for h in outside:
            print(hook_line(h), file=out)
    step = 0
    for message in mine:
        if message.role == message_pb2.MESSAGE_ROLE_ASSISTANT:
            step = _print_steps(run, message, step, out)
        else:
            print_message(message, out)
    for later in run.steps:  # steps that stored no message (a rejected or failed one)
        if later.number > step:
            _print_step_line(run, later.number, out)


def step_line(run: thread_service_pb2.Run, number: int) -> str:
    """``step N``, with the stored step's duration, model, finish reason and tokens."""
    found = [s for s in run.steps if s.number == number]
    if not found:
        return f"step {number}"
    s = found[0]
    took = (s.end_time.ToNanoseconds() - s.start_time.ToNanoseconds()) / 1e9
    model = f"  {s.model}" if s.model else ""
    return (f"step {number}  {took:.2f} s{model}  {s.finish_reason or '?'}, "
            f"tokens {s.usage.input_tokens} in / {s.usage.output_tokens} out")


def hook_line(h: thread_service_pb2.RunHookStats) -> str:
    """One processor hook's invocations in a step: count, time and outcomes."""
    ms = h.total_duration.ToNanoseconds() / 1e6
    outcomes = ", ".join(f"{k} {v}" for k, v in sorted(h.outcomes.items()))
    calls = "call" if h.count == 1 else "calls"
    return f"  · {h.processor_id} {h.hook}: {h.count} {calls}, {ms:.2f} ms ({outcomes})"


def _print_step_line(run: thread_service_pb2.Run, number: int, out: TextIO) -> None:
    print(step_line(run, number), file=out)
    for h in run.hooks:
        if h.step == number:
            print(hook_line(h), file=out)


def _print_steps(run: thread_service_pb2.Run, message: message_pb2.Message, step: int, out: TextIO) -> int:
    """An assistant message of the run, one step after ``step`` and one more at each step-start
    part; returns the last step's number."""
    step += 1
    _print_step_line(run, step, out)
    current = message_pb2.Message(role=message.role)
    for part in message.content.parts:
        if part.WhichOneof("part") == "step_start":
            if current.content.parts:
                print_message(current, out)
            step += 1
            _print_step_line(run, step, out)
            current = message_pb2.Message(role=message.role)
        else:
            current.content.parts.append(part)
    if current.content.parts:
        print_message(current, out)
    return step


def _during(message: message_pb2.Message, run: thread_service_pb2.Run, after: int) -> bool:
    """Whether the run wrote ``message``: made after the previous run ended (``after``, in ns; its
    input is made just before the run record) and before this one ended."""
    created = message.created_at.ToNanoseconds()
    end = run.end_time.ToNanoseconds() if run.HasField("end_time") else None
    return created > after and (end is None or created <= end)
