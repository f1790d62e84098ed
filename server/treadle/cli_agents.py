"""``treadle agents``: the server's agents, one per line; ``treadle agents show ID``: one agent in
YAML, in the proto's JSON form (what a config file or ``CreateAgent`` takes); ``treadle agents
versions ID``: its stored versions; ``treadle agents publish ID V``: publish one."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Coroutine
from typing import Any

import grpc
import yaml
from google.protobuf import json_format

from treadle_client import AgentClient, default_target
from treadle.v1 import agent_pb2, agent_version_service_pb2

from . import cli_security

_OUTPUT_ONLY = ("source", "createTime", "updateTime")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    # --target before or after `show`: SUPPRESS keeps the subcommand's default from hiding it.
    target = argparse.ArgumentParser(add_help=False)
    target.add_argument("--target", metavar="HOST:PORT", default=argparse.SUPPRESS,
                        help=f"server address (default: {default_target()}; set TREADLE_TARGET to change it)")
    cli_security.add_client_arguments(target, default=argparse.SUPPRESS)
    agents = sub.add_parser("agents", parents=[target], help="list the server's agents, or show one (agents show ID)",
                            description="List the server's agents, or show one in YAML.")
    agents.set_defaults(run=lambda args: asyncio.run(_call(args, _list(args))))
    verbs = agents.add_subparsers(dest="verb", metavar="VERB")
    show = verbs.add_parser("show", parents=[target], help="one agent in YAML (the proto's JSON form)")
    show.add_argument("agent_id", metavar="ID")
    show.set_defaults(run=lambda args: asyncio.run(_call(args, _show(args))))
    versions = verbs.add_parser("versions", parents=[target],
                                help="an agent's stored versions, newest first (admin credential)")
    versions.add_argument("agent_id", metavar="ID")
    versions.set_defaults(run=lambda args: asyncio.run(_call(args, _versions(args))))
    publish = verbs.add_parser("publish", parents=[target],
                               help="make version V the one calls run: a number, an id or 'draft' (admin credential)")
    publish.add_argument("agent_id", metavar="ID")
    publish.add_argument("version", metavar="V")
    publish.set_defaults(run=lambda args: asyncio.run(_call(args, _publish(args))))


async def _call(args: argparse.Namespace, work: Coroutine[Any, Any, int]) -> int:
    try:
        return await work
    except grpc.aio.AioRpcError as e:
        print(cli_security.rpc_error("agents", e, _target(args), args), file=sys.stderr)
        return 1


async def _list(args: argparse.Namespace) -> int:
    async with AgentClient(_target(args), **cli_security.client_options(args)) as client:
        agents = await client.list_agents()
    rows = [("ID", "MODEL", "SOURCE", "NAME")]
    rows += [(a.id, a.model or _variant_models(a), _source(a), a.name) for a in agents]
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[3])
    return 0


async def _show(args: argparse.Namespace) -> int:
    async with AgentClient(_target(args), **cli_security.client_options(args)) as client:
        agent = await client.get_agent(args.agent_id)
    data = json_format.MessageToDict(agent)
    for name in _OUTPUT_ONLY:  # what the server sets: shown as a comment, not as config
        data.pop(name, None)
    print(f"# source: {_source(agent)}; created {agent.create_time.ToJsonString()}")
    for line in variant_summary(agent):  # per-request variants, readably: a comment, like the source
        print(f"# {line}")
    print(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), end="")
    return 0


async def _versions(args: argparse.Namespace) -> int:
    async with AgentClient(_target(args), **cli_security.client_options(args)) as client:
        versions = await client.list_versions(args.agent_id)
    if not versions:
        print(f"agent {args.agent_id!r} has no versions: it runs as defined")
        return 0
    rows = [("VERSION", "STATE", "AUTHOR", "CREATED", "MESSAGE")]
    for v in versions:
        state = agent_version_service_pb2.AgentVersionState.Name(v.state).removeprefix("AGENT_VERSION_STATE_")
        created = v.create_time.ToDatetime().strftime("%Y-%m-%d %H:%M:%S")
        rows.append((f"v{v.number}", state.lower(), v.author, created, v.message.splitlines()[0] if v.message else ""))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[4])
    return 0


async def _publish(args: argparse.Namespace) -> int:
    async with AgentClient(_target(args), **cli_security.client_options(args)) as client:
        version = await client.publish_version(args.agent_id, args.version)
    print(f"agent {version.agent_id}: v{version.number} is published ({version.id})")
    return 0


def _target(args: argparse.Namespace) -> str:
    return str(getattr(args, "target", default_target()))


def _source(agent: agent_pb2.Agent) -> str:
    return agent_pb2.AgentSource.Name(agent.source).removeprefix("AGENT_SOURCE_").lower()


_VARIANT_FIELDS = ("model", "instructions", "tools", "input_processors", "output_processors",
                   "error_processors", "default_options")


def _variant_models(agent: agent_pb2.Agent) -> str:
    models = [v.value for v in agent.model_variants]
    return " | ".join(models) + " (per request)" if models else ""


def variant_summary(agent: agent_pb2.Agent) -> list[str]:
    """One line per variant: ``model variants:`` then ``  [0] openai/gpt-4o  when tier equals 'pro'``."""
    lines: list[str] = []
    for name in _VARIANT_FIELDS:
        variants = getattr(agent, f"{name}_variants")
        if not variants:
            continue
        lines.append(f"{name.replace('_', ' ')} variants:")
        for i, v in enumerate(variants):
            when = f"when {_rule_text(v.rules)}" if v.HasField("rules") else "always"
            lines.append(f"  [{i}] {_value_text(name, v)}  {when}")
    if agent.HasField("resolver"):
        lines.append(f"resolver: {agent.resolver.id} (resolveAgent, once per call)")
    return lines


def _value_text(name: str, variant: Any) -> str:
    if name == "model":
        return str(variant.value)
    if name == "instructions":
        text = variant.value or " / ".join(m.content for m in variant.messages)
        return repr(text if len(text) <= 60 else text[:57] + "...")
    if name == "tools":
        return "+ " + ", ".join(variant.value)
    if name == "default_options":
        return json_format.MessageToJson(variant.value, indent=None)
    return "+ " + ", ".join(r.id or r.builtin for r in variant.value)


def _whole(value: Any) -> Any:
    """JSON numbers arrive as floats: 50.0 is shown as 50."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_whole(v) for v in value]
    return value


def _rule_text(rule: Any) -> str:
    if rule.field:
        if rule.operator in ("exists", "not_exists"):
            return f"{rule.field} {rule.operator.replace('_', ' ')}"
        value = json_format.MessageToDict(rule.value) if rule.HasField("value") else None
        return f"{rule.field} {rule.operator.replace('_', ' ')} {json.dumps(_whole(value), ensure_ascii=False)}"
    joined = f" {rule.operator.upper()} ".join(_rule_text(c) for c in rule.conditions)
    return joined if len(rule.conditions) == 1 else f"({joined})"
