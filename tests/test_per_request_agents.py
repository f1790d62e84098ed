"""Per-request agents (the framework's function-valued fields): variants with rules, resolved
once per call, recorded on the run and its span; a remote ``resolveAgent`` in Go; Python
callables; bad input refused with nothing stored.

The served tests run ``treadle serve`` processes with a config file and the wire-level OpenAI
fake, so the model each call resolved is the one the provider saw."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.harness import Harness, harness_factory  # noqa: F401
from tests.support import OpenAIServer, Turn
from tests.support.databases import Database
from tests.java_build import java_build  # noqa: F401
from tests.support.go import go_build  # noqa: F401
from tests.test_cli import READY_TIMEOUT, ServeProcess, clean_env
from tests.test_memory_serve import curl, ok
from treadle.agents import Agent, CallOptions, ProcessorRef, RunRequest
from treadle.api.convert import agent_from_dict
from treadle.core.errors import InvalidArgumentError
from treadle.core.messages import Message, SystemMessage
from treadle.loop.resolve import resolve_for_call
from treadle.registry import Registry
from treadle.rules import Rule, matches
from treadle.variants import Variant

TS_CLIENT = Path(__file__).resolve().parents[1] / "clients" / "typescript"

TIERED = """\
agents:
  - id: tiered
    instructions: You are terse.
    model:
      - value: openai/gpt-4o
        rules: {operator: AND, conditions: [{field: tier, operator: equals, value: pro}]}
      - value: openai/gpt-4o-mini
"""


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Any]:
    procs: list[ServeProcess] = []

    def start(config: str, server: OpenAIServer, *args: str, **env: str) -> ServeProcess:
        path = tmp_path / "agents.yaml"
        path.write_text(config)
        proc = ServeProcess("--config", str(path), *args, env=clean_env(
            OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-test", **env))
        procs.append(proc)
        proc.wait_ready()
        return proc

    yield start
    for proc in procs:
        proc.close()


def stream(target: str, agent_id: str, context: dict[str, Any], thread: str) -> list[dict[str, Any]]:
    return ok(target, "AgentService/Stream", {
        "agentId": agent_id, "prompt": "Hello",
        "options": {"requestContext": context, "memory": {"resource": "u1", "threadId": thread}},
    })


def runs(target: str, thread: str) -> list[dict[str, Any]]:
    [listed] = ok(target, "ThreadService/ListRuns", {"resourceId": "u1", "threadId": thread})
    return list(listed["runs"])


def test_model_variants_pick_the_model_the_provider_sees_and_list_runs_shows_it(
    served: Any, openai_server: Any, database: Database,
) -> None:
    server: OpenAIServer = openai_server([Turn.say("pro answer"), Turn.say("free answer"), Turn.say("anon")])
    proc = served(TIERED, server, *database.serve_args)
    stream(proc.target, "tiered", {"tier": "pro"}, "t-pro")
    stream(proc.target, "tiered", {"tier": "free"}, "t-free")
    stream(proc.target, "tiered", {}, "t-none")
    assert [r["model"] for r in server.requests] == ["gpt-4o", "gpt-4o-mini", "gpt-4o-mini"]

    [pro] = runs(proc.target, "t-pro")
    [free] = runs(proc.target, "t-free")
    assert pro["resolvedModel"] == "openai/gpt-4o"
    assert pro["matchedVariants"] == [{"field": "model"}]  # index 0 is omitted in proto JSON
    assert free["resolvedModel"] == "openai/gpt-4o-mini"
    assert free["matchedVariants"] == [{"field": "model", "index": 1}]

    import subprocess

    from tests.test_cli import TREADLE

    shown = subprocess.run([*TREADLE, "runs", "show", "u1", "t-free", free["id"], "--target", proc.target],
                           capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines()[2] == "  model:    openai/gpt-4o-mini (variants model[1])"

    [agents] = ok(proc.target, "AgentService/GetAgent", {"id": "tiered"})
    variants = agents["agent"]["modelVariants"]
    assert [v["value"] for v in variants] == ["openai/gpt-4o", "openai/gpt-4o-mini"]
    assert variants[0]["rules"] == {"operator": "AND", "conditions": [
        {"field": "tier", "operator": "equals", "value": "pro"}]}


def test_the_cli_prints_an_agents_variants(served: Any, openai_server: Any) -> None:
    import subprocess

    from tests.test_cli import TREADLE

    proc = served(TIERED, openai_server([]))
    shown = subprocess.run([*TREADLE, "agents", "show", "tiered", "--target", proc.target],
                           capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert "model variants:" in shown.stdout
    assert '[0] openai/gpt-4o  when tier equals "pro"' in shown.stdout
    assert "[1] openai/gpt-4o-mini  always" in shown.stdout


BAD_RULES = [
    ({"operator": "XOR", "conditions": [{"field": "tier", "operator": "equals", "value": "pro"}]},
     "agent.model_variants[0].rules.operator 'XOR' is not a group operator"),
    ({"operator": "AND", "conditions": [{"field": "tier", "operator": "equal", "value": "pro"}]},
     "agent.model_variants[0].rules.conditions[0].operator 'equal' is unknown"),
    ({"operator": "AND", "conditions": [{"operator": "OR", "conditions": [{"operator": "AND", "conditions": [
        {"operator": "OR", "conditions": [{"field": "a", "operator": "exists"}]}]}]}]},
     "agent.model_variants[0].rules.conditions[0].conditions[0].conditions[0]: rule groups nest at most 3 deep"),
    ({"operator": "AND", "conditions": [{"field": "tier", "operator": "in", "value": "pro"}]},
     "agent.model_variants[0].rules.conditions[0].value must be a list for 'in'"),
]


@pytest.mark.parametrize(("rules", "says"), BAD_RULES)
def test_create_agent_refuses_bad_rules_naming_the_field_and_stores_nothing(
    served: Any, openai_server: Any, rules: dict[str, Any], says: str,
) -> None:
    proc = served("agents: []\n", openai_server([]))
    agent = {"id": "bad", "modelVariants": [{"value": "openai/gpt-4o", "rules": rules}]}
    code, _, err = curl(proc.target, "AgentService/CreateAgent", {"agent": agent})
    assert code != 0 and "invalid_argument" in err.lower() and says in err, err
    [listed] = ok(proc.target, "AgentService/ListAgents", {})
    assert "bad" not in [a["id"] for a in listed.get("agents", [])]
    # An update of an existing agent with bad rules changes nothing either.
    ok(proc.target, "AgentService/CreateAgent", {"agent": {"id": "good", "model": "openai/gpt-4o-mini"}})
    code, _, err = curl(proc.target, "AgentService/UpdateAgent", {"agent": {**agent, "id": "good"}})
    assert code != 0 and says.replace("agent.", "agent.", 1) in err, err
    [got] = ok(proc.target, "AgentService/GetAgent", {"id": "good"})
    assert got["agent"]["model"] == "openai/gpt-4o-mini" and "modelVariants" not in got["agent"]


def test_a_config_file_with_a_bad_rule_says_where(tmp_path: Path) -> None:
    import subprocess

    from tests.test_cli import TREADLE, free_port

    path = tmp_path / "agents.yaml"
    path.write_text(TIERED.replace("operator: equals", "operator: is"))
    result = subprocess.run([*TREADLE, "serve", "--listen", f"127.0.0.1:{free_port()}", "--config", str(path)],
                            capture_output=True, text=True, timeout=READY_TIMEOUT, env=clean_env())
    assert result.returncode != 0
    assert "model_variants[0].rules.conditions[0].operator 'is' is unknown" in result.stderr, result.stderr


def test_no_matching_model_is_refused_naming_the_field_before_anything_is_stored(
    served: Any, openai_server: Any,
) -> None:
    config = """\
agents:
  - id: pro-only
    instructions: You are terse.
    model:
      - value: openai/gpt-4o
        rules: {operator: AND, conditions: [{field: tier, operator: equals, value: pro}]}
"""
    server: OpenAIServer = openai_server([])
    proc = served(config, server)
    code, _, err = curl(proc.target, "AgentService/Stream", {
        "agentId": "pro-only", "prompt": "Hi",
        "options": {"requestContext": {"tier": "free"}, "memory": {"resource": "u1", "threadId": "t1"}}})
    assert code != 0 and "invalid_argument" in err.lower()
    assert "agent 'pro-only': model: no variant matched the request context" in err
    assert server.requests == []
    [threads] = ok(proc.target, "ThreadService/ListThreads", {"resourceId": "u1"})
    assert threads.get("threads", []) == []


def test_the_request_context_is_validated_before_variants_resolve(served: Any, openai_server: Any) -> None:
    config = TIERED.replace("    instructions: You are terse.\n", """\
    instructions: You are terse.
    requestContextSchema: {type: object, properties: {tier: {enum: [free, pro]}}}
""")
    server: OpenAIServer = openai_server([])
    proc = served(config, server)
    code, _, err = curl(proc.target, "AgentService/Generate", {
        "agentId": "tiered", "prompt": "Hi", "options": {"requestContext": {"tier": "gold"}}})
    assert code != 0 and "request_context is invalid at tier" in err, err
    assert server.requests == []


# --- a remote resolver (Go, Java) ------------------------------------------------------------------------

RESOLVED = """\
agents:
  - id: routed
    instructions: You are terse.
    model: openai/gpt-4o-mini
    resolver: {id: tenant-router, timeout: 1s}
  - id: routed-open
    instructions: You are terse.
    model: openai/gpt-4o-mini
    resolver: {id: tenant-router, timeout: 1s, failurePolicy: FAILURE_POLICY_FAIL_OPEN}
"""


@pytest.fixture
async def resolver_process(request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    """``await resolver_process("go" | "typescript" | "java", target)``: that SDK's tenant-router
    (same behaviour in each) attached to ``target``."""
    started: list[asyncio.subprocess.Process] = []

    async def start(language: str, target: str) -> None:
        cwd = None
        if language == "go":
            command = [str(request.getfixturevalue("go_build")("tierresolver")), target]
        elif language == "typescript":
            cwd = TS_CLIENT
            command = [str(TS_CLIENT / "node_modules" / ".bin" / "tsx"),
                       str(TS_CLIENT.parents[1] / "tests" / "remote" / "ts" / "tenant_router.ts"), target]
        else:
            from tests.java_build import java_command

            request.getfixturevalue("java_build")
            command = java_command("dev.treadle.interop.TenantRouter", target)
        # A session of its own: tsx runs node as a child, and both are stopped together.
        proc = await asyncio.create_subprocess_exec(*command, stdout=asyncio.subprocess.PIPE,
                                                    stderr=asyncio.subprocess.DEVNULL, cwd=cwd,
                                                    start_new_session=True)
        started.append(proc)
        assert proc.stdout is not None
        line = await asyncio.wait_for(proc.stdout.readline(), 120)
        assert line.decode().strip() == "ready"

    yield start
    for proc in started:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        await proc.wait()


@pytest.mark.parametrize("language", ["go", "typescript", "java"])
async def test_a_remote_resolver_overrides_model_and_instructions_once_per_call(
    served: Any, openai_server: Any, resolver_process: Any, language: str,
) -> None:
    server: OpenAIServer = openai_server([Turn.say("for acme"), Turn.say("for others"), Turn.say("open")])
    proc = served(RESOLVED, server, TREADLE_PROCESSOR_ATTACH_WAIT="30")
    await resolver_process(language, proc.target)
    await asyncio.to_thread(stream, proc.target, "routed", {"tenant": "acme"}, "t-acme")
    await asyncio.to_thread(stream, proc.target, "routed", {"tenant": "globex"}, "t-globex")
    acme, globex = server.requests[:2]
    assert acme["model"] == "gpt-4.1" and globex["model"] == "gpt-4o-mini"
    assert acme["messages"][0] == {"role": "system",
                                   "content": "You answer for Acme. The agent was openai/gpt-4o-mini."}
    assert globex["messages"][0] == {"role": "system", "content": "You are terse."}
    [run] = await asyncio.to_thread(runs, proc.target, "t-acme")
    assert run["resolvedModel"] == "openai/gpt-4.1"
    assert run["resolverOverrides"] == ["model", "instructions"]
    [other] = await asyncio.to_thread(runs, proc.target, "t-globex")
    assert other["resolvedModel"] == "openai/gpt-4o-mini" and "resolverOverrides" not in other

    # Past its 1 s timeout: fail_closed refuses the call naming the processor; fail_open goes on
    # with the declarative resolution.
    code, _, err = await asyncio.to_thread(curl, proc.target, "AgentService/Generate", {
        "agentId": "routed", "prompt": "Hi", "options": {"requestContext": {"tenant": "acme", "slow": True}}})
    assert code != 0 and "tenant-router" in err and "resolveAgent" in err, err
    await asyncio.to_thread(stream, proc.target, "routed-open", {"tenant": "acme", "slow": True}, "t-open")
    assert server.requests[2]["model"] == "gpt-4o-mini"
    [opened] = await asyncio.to_thread(runs, proc.target, "t-open")
    assert opened["resolvedModel"] == "openai/gpt-4o-mini"


# --- in process: rules, list and object fields, callables, the span --------------------------------


def test_operators() -> None:
    ctx = {"tier": "pro", "seats": 12, "tags": ["beta", "eu"], "org": {"plan": "team"}, "none": None}

    def holds(field: str, op: str, value: Any = None) -> bool:
        return matches(Rule(field=field, operator=op, value=value), ctx)

    assert holds("tier", "equals", "pro") and not holds("tier", "equals", "free")
    assert holds("tier", "not_equals", "free") and holds("missing", "not_equals", "x")
    assert holds("tags", "contains", "eu") and holds("tier", "contains", "r")
    assert holds("tags", "not_contains", "us") and not holds("tags", "not_contains", "eu")
    assert holds("seats", "greater_than", 10) and not holds("seats", "greater_than", 12)
    assert holds("seats", "greater_than_or_equal", 12.0) and holds("seats", "less_than", 20)
    assert holds("seats", "less_than_or_equal", 12) and not holds("missing", "less_than", 3)
    assert holds("tier", "in", ["pro", "team"]) and holds("tier", "not_in", ["free"])
    assert holds("org.plan", "equals", "team") and holds("org", "exists")
    assert holds("none", "not_exists") and holds("missing", "not_exists") and not holds("tier", "not_exists")
    either = Rule(operator="OR", conditions=(Rule("tier", "equals", "free"), Rule(operator="AND", conditions=(
        Rule("seats", "greater_than", 10), Rule("tags", "contains", "beta")))))
    assert matches(either, ctx) and not matches(Rule(operator="AND", conditions=(
        Rule("tier", "equals", "free"), Rule("seats", "greater_than", 10))), ctx)


def _agent(**fields: Any) -> Agent:
    return agent_from_dict({"id": "a", "instructions": "Base.", "model": "openai/gpt-4o-mini", **fields},
                           source="api")


async def test_lists_concatenate_objects_merge_and_scalars_take_the_first_match() -> None:
    agent = _agent(
        instructions=[{"value": "Pro rules.", "rules": {"operator": "AND", "conditions": [
            {"field": "tier", "operator": "equals", "value": "pro"}]}}, {"value": "Everyone else."}],
        tools=["search", {"value": ["billing"], "rules": {"operator": "OR", "conditions": [
            {"field": "role", "operator": "in", "value": ["admin", "owner"]}]}}, {"value": ["search", "help"]}],
        defaultOptions=[{"value": {"maxSteps": 2, "modelSettings": {"temperature": 0.1}}},
                        {"value": {"maxSteps": 7}, "rules": {"operator": "AND", "conditions": [
                            {"field": "tier", "operator": "equals", "value": "pro"}]}}],
    )
    registry = Registry()

    async def resolved(ctx: dict[str, Any]) -> Agent:
        return await resolve_for_call(registry, agent, RunRequest([Message.user("x")], CallOptions(request_context=ctx)))

    pro = await resolved({"tier": "pro", "role": "owner"})
    assert [m.content for m in pro.instructions] == ["Pro rules."]
    assert pro.tools == ["search", "billing", "help"]  # concatenated; a name twice is offered once
    assert pro.default_options.max_steps == 7 and pro.default_options.model_settings.temperature == 0.1
    assert pro.resolution.matched == (("instructions", 0), ("tools", 0), ("tools", 1),
                                      ("default_options", 0), ("default_options", 1))
    other = await resolved({})
    assert [m.content for m in other.instructions] == ["Everyone else."]
    assert other.tools == ["search", "help"] and other.default_options.max_steps == 2
    assert agent.variants and agent.resolution is None  # the definition is untouched


async def test_python_callables_and_an_in_process_resolver() -> None:
    seen: list[dict[str, Any]] = []

    async def model(ctx: dict[str, Any]) -> str:
        seen.append(ctx)
        return "openai/gpt-4o" if ctx.get("tier") == "pro" else "openai/gpt-4o-mini"

    def resolver(args: Any) -> dict[str, Any] | None:
        if args.request_context.get("locale") == "fr":
            return {"instructions": f"Réponds en français ({args.agent.model})."}
        return None

    agent = Agent(id="code", model=model, instructions=lambda ctx: f"You serve {ctx.get('user', 'someone')}.",
                  resolver=resolver)
    agent.validate()
    registry = Registry()
    request = RunRequest([Message.user("x")], CallOptions(request_context={"tier": "pro", "user": "Ada", "locale": "fr"}))
    snap = await resolve_for_call(registry, agent, request)
    assert snap.model == "openai/gpt-4o" and len(seen) == 1
    assert [m.content for m in snap.instructions] == ["Réponds en français (openai/gpt-4o)."]
    assert snap.resolution.overrides == ("model", "instructions", "instructions")
    assert snap.resolution.resolver == "resolver" and snap.resolution.seconds > 0
    plain = await resolve_for_call(registry, agent, RunRequest([Message.user("x")], CallOptions(request_context={})))
    assert plain.model == "openai/gpt-4o-mini" and [m.content for m in plain.instructions] == ["You serve someone."]


async def test_a_callable_returning_no_model_is_an_error_naming_the_field() -> None:
    agent = Agent(id="code", model=lambda ctx: "", instructions=[SystemMessage("x")])
    with pytest.raises(InvalidArgumentError, match="agent 'code': model: no variant matched"):
        await resolve_for_call(Registry(), agent, RunRequest([Message.user("x")]))
    tools = Agent(id="tools", model="openai/gpt-4o-mini", variants={"tools": [
        Variant(["admin"], Rule("role", "equals", "admin"))]})
    with pytest.raises(InvalidArgumentError, match="agent 'tools': tools: the call requires a tool"):
        await resolve_for_call(Registry(), tools, RunRequest([Message.user("x")], CallOptions(tool_choice="required")))


async def test_the_run_span_records_the_resolution(harness_factory: Any) -> None:
    h: Harness = harness_factory([Turn.say("ok"), Turn.say("ok")])
    pro = Rule(operator="AND", conditions=(Rule("tier", "equals", "pro"),))
    agent = h.agent(model="", variants={"model": [Variant("openai/gpt-4o", pro), Variant("openai/gpt-4o-mini")]})
    await h.generate(agent, "hi", request_context={"tier": "pro"})
    await h.generate(agent, "hi", request_context={"tier": "free"})
    first, second = [s for s in h.spans() if s.name.startswith("invoke_agent")]
    assert first.attributes["treadle.agent.resolved_model"] == "openai/gpt-4o"
    assert list(first.attributes["treadle.agent.matched_variants"]) == ["model[0]"]
    assert first.attributes["treadle.agent.resolve_seconds"] > 0
    assert second.attributes["treadle.agent.resolved_model"] == "openai/gpt-4o-mini"
    assert list(second.attributes["treadle.agent.matched_variants"]) == ["model[1]"]
    assert [b["model"] for b in h.bodies()] == ["gpt-4o", "gpt-4o-mini"]


async def test_a_processor_variant_adds_a_remote_processor_for_some_callers() -> None:
    agent = _agent(inputProcessors=[{"value": [{"id": "audit"}], "rules": {"operator": "AND", "conditions": [
        {"field": "regulated", "operator": "equals", "value": True}]}}])
    registry = Registry()
    snap = await resolve_for_call(registry, agent, RunRequest([Message.user("x")], CallOptions(
        request_context={"regulated": True})))
    assert snap.input_processors == [ProcessorRef("audit")]
    snap = await resolve_for_call(registry, agent, RunRequest([Message.user("x")]))
    assert snap.input_processors == []
    assert json.loads(json.dumps(snap.resolution.detail())) == {"model": "openai/gpt-4o-mini", "matched": [],
                                                                "overrides": []}


# --- a resolver that answers badly (Python SDK process) ----------------------------------------------

BAD_RESOLVER = """\
import sys

from treadle_client import run_processors


class Careless:
    id = "careless"

    def resolve_agent(self, args):
        how = args.request_context.get("how")
        if how == "no-provider":
            return {"model": "gpt-4o"}
        if how == "unknown-key":
            return {"temperature": 0.2}
        if how == "abort":
            args.abort("tenant suspended")
        return None


print("ready", flush=True)
run_processors([Careless()], sys.argv[1])
"""


async def test_a_resolver_that_answers_badly_is_refused_naming_it(
    served: Any, openai_server: Any, tmp_path: Path,
) -> None:
    config = """\
agents:
  - id: careless
    instructions: You are terse.
    model: openai/gpt-4o-mini
    resolver: {id: careless, timeout: 5s}
  - id: careless-open
    instructions: You are terse.
    model: openai/gpt-4o-mini
    resolver: {id: careless, timeout: 5s, failurePolicy: FAILURE_POLICY_FAIL_OPEN}
"""
    server: OpenAIServer = openai_server([Turn.say("fine"), Turn.say("went on")])
    proc = served(config, server, TREADLE_PROCESSOR_ATTACH_WAIT="30")
    script = tmp_path / "careless.py"
    script.write_text(BAD_RESOLVER)
    child = await asyncio.create_subprocess_exec(
        str(Path(__file__).resolve().parents[1] / ".venv" / "bin" / "python"), str(script), proc.target,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    try:
        assert child.stdout is not None
        assert (await asyncio.wait_for(child.stdout.readline(), 60)).decode().strip() == "ready"

        def call(agent_id: str, how: str) -> tuple[int, str]:
            code, _, err = curl(proc.target, "AgentService/Generate", {
                "agentId": agent_id, "prompt": "Hi", "options": {"requestContext": {"how": how}}})
            return code, err

        code, err = await asyncio.to_thread(call, "careless", "fine")  # waits for it to attach
        assert code == 0, err
        code, err = await asyncio.to_thread(call, "careless", "no-provider")
        assert code != 0 and "unavailable" in err.lower(), err
        assert "careless" in err and "malformed answer" in err and "'gpt-4o' must be 'provider/model'" in err
        code, err = await asyncio.to_thread(call, "careless", "unknown-key")
        assert code != 0 and "failed_precondition" in err.lower(), err
        assert "unknown override 'temperature'" in err
        code, err = await asyncio.to_thread(call, "careless", "abort")
        assert code != 0 and "resolver 'careless' refused the call: tenant suspended" in err, err
        # fail_open: the malformed answer is skipped, the call goes on with the agent as it is
        code, err = await asyncio.to_thread(call, "careless-open", "no-provider")
        assert code == 0, err
        assert [r["model"] for r in server.requests] == ["gpt-4o-mini", "gpt-4o-mini"]
    finally:
        child.kill()
        await child.wait()


def test_update_agent_adds_variants_and_they_survive_a_restart(
    served: Any, openai_server: Any, database: Database,
) -> None:
    server: OpenAIServer = openai_server([Turn.say("pro"), Turn.say("free")])
    proc = served("agents: []\n", server, *database.serve_args)
    ok(proc.target, "AgentService/CreateAgent", {"agent": {"id": "api", "model": "openai/gpt-4o-mini"}})
    variants = [{"value": "openai/gpt-4o", "rules": {"operator": "AND", "conditions": [
        {"field": "tier", "operator": "equals", "value": "pro"}]}}]
    ok(proc.target, "AgentService/UpdateAgent", {"agent": {"id": "api", "model": "openai/gpt-4o-mini",
                                                           "modelVariants": variants}})
    proc.close()
    again = served("agents: []\n", server, *database.serve_args)
    [got] = ok(again.target, "AgentService/GetAgent", {"id": "api"})
    assert got["agent"]["model"] == "openai/gpt-4o-mini" and got["agent"]["modelVariants"] == variants
    stream(again.target, "api", {"tier": "pro"}, "t1")
    stream(again.target, "api", {"tier": "free"}, "t2")
    assert [r["model"] for r in server.requests] == ["gpt-4o", "gpt-4o-mini"]
