"""Tool payload transforms (the Agent's ``hooks.transform``): declarative rules that project tool
payloads for ``display`` (Stream, Generate, SubscribeToThread) and ``transcript`` (ListMessages),
while the model, the tool and the store keep the raw payload; the ``rawToolPayloads`` scope; fail
closed; argument deltas suppressed; errors scrubbed.

The acceptance test runs ``treadle serve`` with docs/tool-transforms.md's agent, the page's tool
program as its own process, and the OpenAI SDK against the wire-level fake."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

import grpc
import pytest
import yaml
from google.protobuf import json_format

from tests.doc_blocks import DEFAULT_ADDRESS, block
from tests.harness import Harness
from tests.java_build import java, java_build  # noqa: F401 - fixtures of the Java transform test
from tests.support import Turn
from tests.support.terminal import Terminal
from treadle.api.convert import agent_from_dict
from treadle.config import load_agent_file
from treadle.config.auth import parse_auth
from treadle.core.chunks import Chunk
from treadle.core.errors import InvalidArgumentError
from treadle.core.tool_payload import ToolPayloadRule
from treadle.loop.payload_view import display_of
from treadle.tools import tool
from treadle_client import AgentClient

DOC = "docs/tool-transforms.md"
DOC_BLOCKS = {
    (DOC, "yaml", 0): "test_acceptance_the_ssn_reaches_the_model_and_only_raw_credentials",
    (DOC, "python", 0): "test_acceptance_the_ssn_reaches_the_model_and_only_raw_credentials",
    (DOC, "python", 1): "test_the_doc_client_prints_the_masked_stream_and_the_history_without_the_ssn",
    (DOC, "text", 0): "test_the_doc_client_prints_the_masked_stream_and_the_history_without_the_ssn",
    (DOC, "yaml", 1): "test_the_doc_remote_transform_shows_the_last_four_digits",
    (DOC, "python", 2): "test_the_doc_remote_transform_shows_the_last_four_digits",
    (DOC, "yaml", 2): "test_the_doc_credentials_parse_and_only_one_sees_raw_payloads",
}
SSN = "078-05-1120"
RECORD = {"id": "c-42", "name": "Ada Lovelace", "plan": "pro", "ssn": SSN}
MASKED = {**RECORD, "ssn": "***"}
DROPPED = {k: v for k, v in RECORD.items() if k != "ssn"}
TOKENS = {"tools": "tool-token", "app": "app-token", "raw": "raw-token"}


def _script(runs: int) -> list[Any]:
    turn = [Turn.call("lookup_customer", {"id": "c-42"}, chunks=3), Turn.say("Ada Lovelace is on the pro plan.")]
    return turn * runs


def _config(tmp_path: Path, *, auth: bool) -> Path:
    config = yaml.safe_load(block(DOC, "yaml", 0))
    if auth:
        def cred(name: str, **scopes: Any) -> dict[str, Any]:
            return {"id": name, "tokenSha256": hashlib.sha256(TOKENS[name].encode()).hexdigest(), **scopes}
        config["auth"] = {"credentials": [
            cred("tools", tools=["lookup_customer"]),
            cred("app", agents=["support"], resources=["staff-*"]),
            cred("raw", agents=["support"], resources=["staff-*"], rawToolPayloads=True),
        ]}
    path = tmp_path / "agents.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def _serve(terminal: Terminal, tmp_path: Path, fake: Any, *, auth: bool, config: Path | None = None) -> Any:
    config = config or _config(tmp_path, auth=auth)
    server = terminal.serve([".venv/bin/treadle", "serve", "--config", str(config)], OPENAI_BASE_URL=fake.base_url)
    program = tmp_path / "lookup_customer.py"
    program.write_text(block(DOC, "python", 0))
    env = {"TREADLE_TOKEN": TOKENS["tools"]} if auth else {}
    tool_process = terminal.start([".venv/bin/python", str(program), terminal.target], **env)
    tool_process.wait_for(f"tool lookup_customer attached to {terminal.target}")
    return server


def _dicts(messages: Any) -> list[dict[str, Any]]:
    return [json_format.MessageToDict(m) for m in messages]


def _tool_results(chunks: list[Any]) -> list[Any]:
    return [json_format.MessageToDict(c.tool_result.result) for c in chunks if c.HasField("tool_result")]


def _history_results(messages: list[Any]) -> list[Any]:
    return [json_format.MessageToDict(p.tool_invocation.result) for m in messages for p in m.content.parts
            if p.HasField("tool_invocation") and p.tool_invocation.HasField("result")]


async def test_acceptance_the_ssn_reaches_the_model_and_only_raw_credentials(
    terminal: Terminal, openai_server: Any, tmp_path: Path
) -> None:
    fake = openai_server(_script(4))
    server = _serve(terminal, tmp_path, fake, auth=True)
    memory = {"memory": {"resource": "staff-1", "threadId": "case-7"}}
    async with AgentClient(terminal.target, token=TOKENS["app"]) as app, \
            AgentClient(terminal.target, token=TOKENS["raw"]) as raw:
        # A subscriber of the thread and the caller's own stream, during the same run.
        watcher = await app.subscribe_to_thread("staff-1", "case-7")
        watched: list[Any] = []

        async def watch() -> None:
            async for chunk in watcher:
                watched.append(chunk)
                if chunk.HasField("finish"):
                    return

        watching = asyncio.create_task(watch())
        streamed = [c async for c in app.stream("support", "Which plan is c-42 on?", options=memory)]
        await asyncio.wait_for(watching, 30)
        watcher.unsubscribe()

        # The model's next request holds the raw record, SSN included.
        tool_message = fake.requests[1]["messages"][-1]
        assert tool_message["role"] == "tool" and json.loads(tool_message["content"]) == RECORD

        # The client's stream and the thread's subscriber see the mask, nowhere the SSN; the raw
        # argument deltas of a tool with a transform are not streamed, its complete call is.
        for chunks in (streamed, watched):
            assert _tool_results(chunks) == [MASKED]
            assert SSN not in str(chunks)
            assert not [c for c in chunks if c.HasField("tool_call_delta")]
            assert [json_format.MessageToDict(c.tool_call.args) for c in chunks if c.HasField("tool_call")] == [
                {"id": "c-42"}]

        # Generate: its steps and messages show the mask too.
        generated = await app.generate("support", "And c-42's plan again?", options=memory)
        assert SSN not in str(generated)
        assert [json_format.MessageToDict(r.result) for s in generated.steps for r in s.tool_results] == [MASKED]
        assert _history_results(generated.messages) == [MASKED]
        assert json.loads(fake.requests[3]["messages"][-1]["content"]) == RECORD

        # ListMessages holds no SSN (the transcript drops it), for either run.
        history = await app.list_messages("staff-1", "case-7")
        assert SSN not in str(_dicts(history))
        assert _history_results(history) == [DROPPED, DROPPED]

        # A credential with rawToolPayloads sees the raw payloads on every egress.
        raw_stream = [c async for c in raw.stream("support", "c-42?", options=memory)]
        assert _tool_results(raw_stream) == [RECORD]
        assert "".join(c.tool_call_delta.args_text_delta for c in raw_stream if c.HasField("tool_call_delta")) \
            == json.dumps({"id": "c-42"})
        raw_generated = await raw.generate("support", "c-42 once more?", options=memory)
        assert [json_format.MessageToDict(r.result) for s in raw_generated.steps for r in s.tool_results] == [RECORD]
        assert _history_results(await raw.list_messages("staff-1", "case-7")) == [RECORD] * 4
        assert _history_results(await app.list_messages("staff-1", "case-7")) == [DROPPED] * 4

        # And the history the model reads on the next turn is the raw one.
        assert [json.loads(m["content"]) for m in fake.requests[7]["messages"] if m["role"] == "tool"] == [RECORD] * 4
    assert server.interrupt() == 0


def test_the_doc_client_prints_the_masked_stream_and_the_history_without_the_ssn(
    terminal: Terminal, openai_server: Any, tmp_path: Path
) -> None:
    fake = openai_server(_script(1))
    server = _serve(terminal, tmp_path, fake, auth=False)
    client = tmp_path / "client.py"
    client.write_text(block(DOC, "python", 1).replace(DEFAULT_ADDRESS, terminal.target))
    done = terminal.run([".venv/bin/python", str(client)])
    assert done.returncode == 0, done.stderr
    assert done.stdout == block(DOC, "text", 0)
    assert json.loads(fake.requests[1]["messages"][-1]["content"]) == RECORD
    assert server.interrupt() == 0


async def test_the_doc_remote_transform_shows_the_last_four_digits(
    terminal: Terminal, openai_server: Any, tmp_path: Path
) -> None:
    fake = openai_server(_script(1))
    config = tmp_path / "agents.yaml"
    config.write_text(block(DOC, "yaml", 1))
    server = _serve(terminal, tmp_path, fake, auth=False, config=config)
    program = tmp_path / "last_four.py"
    program.write_text(block(DOC, "python", 2))
    processor = terminal.start([".venv/bin/python", str(program), terminal.target])
    processor.wait_for(f"processor last-four attached to {terminal.target}")
    memory = {"memory": {"resource": "staff-1", "threadId": "case-8"}}
    async with AgentClient(terminal.target) as client:
        streamed = [c async for c in client.stream("support", "Which plan is c-42 on?", options=memory)]
        assert _tool_results(streamed) == [{**RECORD, "ssn": "***-**-1120"}]
        assert _history_results(await client.list_messages("staff-1", "case-8")) == [DROPPED]
    assert json.loads(fake.requests[1]["messages"][-1]["content"]) == RECORD
    assert server.interrupt() == 0


def test_the_doc_credentials_parse_and_only_one_sees_raw_payloads() -> None:
    config = parse_auth(yaml.safe_load(block(DOC, "yaml", 2))["auth"])
    assert {c.id: c.raw_tool_payloads for c in config.credentials} == {"support-app": False, "fraud-review": True}
    assert config.find("password") is not None and config.find("123") is not None


# --- rules, validation, fail closed, scrubbing ---------------------------------------------------


@pytest.mark.parametrize(("rule", "message"), [
    ({"phase": "outptu", "mask": ["/ssn"]}, "agent.tool_payload_rules[0].phase: 'outptu' is not a phase"),
    ({"phase": "output", "mask": ["ssn"]}, "agent.tool_payload_rules[0].mask[0]: 'ssn' is not a JSON pointer"),
    ({"phase": "output", "drop": ["/a~2b"]}, "agent.tool_payload_rules[0].drop[0]: '/a~2b' is not a JSON pointer"),
    ({"phase": "output", "drop": [""]}, "agent.tool_payload_rules[0].drop[0]: the pointer \"\" names the whole"),
    ({"phase": "output", "targets": ["screen"], "suppress": True}, "agent.tool_payload_rules[0].targets[0]"),
    ({"phase": "output"}, "agent.tool_payload_rules[0]: the rule does nothing"),
    ({"phase": "output", "suppress": True, "mask": ["/a"]}, "they cannot combine"),
    ({"phase": "input-delta", "mask": ["/a"]}, "agent.tool_payload_rules[0].mask: JSON pointers do not apply"),
    ({"phase": "error", "drop": ["/a"]}, "agent.tool_payload_rules[0].drop: JSON pointers do not apply"),
])
def test_a_malformed_rule_is_refused_naming_the_field(rule: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidArgumentError, match=".*") as e:
        agent_from_dict({"id": "a", "model": "openai/gpt-4o-mini", "toolPayloadRules": [rule]}, source="api")
    assert message in str(e.value)


async def test_create_and_update_agent_refuse_a_bad_rule_and_store_nothing(start_app: Any) -> None:
    running = await start_app()
    bad = {"phase": "output", "mask": ["ssn"]}
    good = {"id": "support", "model": "openai/gpt-4o-mini", "toolPayloadRules": [{"phase": "output", "mask": ["/ssn"]}]}
    async with AgentClient(running.target) as client:
        with pytest.raises(grpc.aio.AioRpcError) as e:
            await client.create_agent({**good, "toolPayloadRules": [good["toolPayloadRules"][0], bad]})
        assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "agent.tool_payload_rules[1].mask[0]: 'ssn' is not a JSON pointer" in (e.value.details() or "")
        with pytest.raises(grpc.aio.AioRpcError) as e:
            await client.get_agent("support")
        assert e.value.code() == grpc.StatusCode.NOT_FOUND
        created = await client.create_agent(good)
        assert json_format.MessageToDict(created)["toolPayloadRules"] == good["toolPayloadRules"]
        with pytest.raises(grpc.aio.AioRpcError) as e:
            await client.update_agent({**good, "toolPayloadRules": [{"phase": "sometimes", "suppress": True}]})
        assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "agent.tool_payload_rules[0].phase: 'sometimes' is not a phase" in (e.value.details() or "")
        kept = json_format.MessageToDict(await client.get_agent("support"))
        assert kept["toolPayloadRules"] == good["toolPayloadRules"]


def test_the_config_file_form_loads_the_rules(tmp_path: Path) -> None:
    path = tmp_path / "agents.yaml"
    path.write_text(block(DOC, "yaml", 0))
    [agent] = [agent_from_dict(d, source="config") for d in load_agent_file(path)]
    assert agent.tool_payload_rules == [
        ToolPayloadRule("output", tools=("lookup_customer",), targets=("display",), mask=("/ssn",)),
        ToolPayloadRule("output", tools=("lookup_customer",), targets=("transcript",), drop=("/ssn",)),
    ]


@tool("charge_card", "Charges a card")
async def charge_card(args: Any, ctx: Any) -> Any:
    raise ValueError(f"card {args['card']} declined for {json.dumps(args)}")


@tool("lookup_customer", "A customer's record")
async def lookup_customer(args: Any, ctx: Any) -> Any:
    return dict(RECORD)


def _shown(chunks: list[Chunk]) -> list[Chunk]:
    return [s for c in chunks if (s := display_of(c)) is not None]


async def test_a_transform_that_cannot_apply_fails_closed(openai_server: Any) -> None:
    # The model sends arguments that are not JSON: a JSON pointer rule cannot apply to them, so
    # the display shows the placeholder, never the raw text (which holds the secret).
    raw_args = '{"id": "c-42", "ssn": "078-05-1120"'
    h = Harness(openai_server([Turn.call("lookup_customer", raw_args), Turn.say("done")]))
    agent = h.agent(tools=[lookup_customer], tool_payload_rules=[
        ToolPayloadRule("input", tools=("lookup_customer",), mask=("/ssn",))])
    chunks = await h.stream(agent, "look")
    shown = _shown(chunks)
    [call] = [c for c in shown if c.type == "tool-call"]
    assert call.payload.args == {"message": "Tool input payload unavailable"}
    [result] = [c for c in shown if c.type == "tool-result"]
    assert result.payload.args == {"message": "Tool input payload unavailable"}
    assert result.payload.result == RECORD  # no output rule: the output passes
    assert SSN not in str([c.payload for c in shown if c.type in ("tool-call", "tool-call-delta", "step-finish")])
    # The run itself had the raw arguments.
    [raw_call] = [c for c in chunks if c.type == "tool-call"]
    assert raw_call.payload.args == raw_args


async def test_errors_are_scrubbed_of_raw_arguments(openai_server: Any) -> None:
    card = "4111111111111111"
    h = Harness(openai_server([Turn.call("charge_card", {"card": card, "amount": 1250}), Turn.say("declined")] * 2))
    agent = h.agent(tools=[charge_card], tool_payload_rules=[
        ToolPayloadRule("input", tools=("charge_*",), targets=("display",), mask=("/card",))])
    result = await h.generate(agent, "charge it")
    chunks = await h.stream(agent, "charge it")
    [error] = [c for c in _shown(chunks) if c.type == "tool-error"]
    assert error.payload.error == "card [redacted] declined for [redacted]"
    assert error.payload.args == {"card": "***", "amount": 1250}
    shown = await result.displayed()
    [step_result] = [r for s in shown.steps for r in s.tool_results]
    assert card not in json.dumps(step_result.result) and step_result.is_error
    # The model was told the real error (it needs it to answer).
    [raw_error] = [c for c in chunks if c.type == "tool-error"]
    assert card in raw_error.payload.error


async def test_deltas_stream_only_through_a_delta_rule(openai_server: Any) -> None:
    script = [Turn.call("lookup_customer", {"id": "c-42"}, chunks=4), Turn.say("ok")]
    h = Harness(openai_server(script * 3))
    no_rule = h.agent(tools=[lookup_customer])
    raw = [c for c in _shown(await h.stream(no_rule, "x")) if c.type == "tool-call-delta"]
    assert "".join(c.payload.args_text_delta for c in raw) == '{"id": "c-42"}'
    masked = h.agent(tools=[lookup_customer], tool_payload_rules=[ToolPayloadRule("output", mask=("/ssn",))])
    assert not [c for c in _shown(await h.stream(masked, "x")) if c.type == "tool-call-delta"]
    replaced = h.agent(tools=[lookup_customer], tool_payload_rules=[
        ToolPayloadRule("output", mask=("/ssn",)), ToolPayloadRule("input-delta", replace=".")])
    deltas = [c.payload.args_text_delta for c in _shown(await h.stream(replaced, "x")) if c.type == "tool-call-delta"]
    assert deltas and set(deltas) == {"."}


async def test_suppress_and_replace_for_display(openai_server: Any) -> None:
    h = Harness(openai_server([Turn.call("lookup_customer", {"id": "c-42"}), Turn.say("ok")]))
    agent = h.agent(tools=[lookup_customer], tool_payload_rules=[
        ToolPayloadRule("output", targets=("display",), suppress=True),
        ToolPayloadRule("input", targets=("display",), replace={"id": "hidden"})])
    shown = _shown(await h.stream(agent, "x"))
    assert not [c for c in shown if c.type == "tool-result"]
    [call] = [c for c in shown if c.type == "tool-call"]
    assert call.payload.args == {"id": "hidden"}
    [finish] = [c for c in shown if c.type == "step-finish" and c.payload.tool_calls]
    assert finish.payload.tool_calls[0].args == {"id": "hidden"}


# --- the remote transform hook, served by TypeScript, Go and Java processes ----------------------

TS_TRANSFORM = Path(__file__).resolve().parent / "remote" / "ts" / "ssn_transform.ts"


@pytest.mark.parametrize("language", ["typescript", "go"])
async def test_a_remote_transform_projects_both_targets_and_fails_closed_when_gone(
    start_app: Any, openai_server: Any, language: str, request: pytest.FixtureRequest
) -> None:
    from tests.remote.procs import Child
    from tests.test_typescript_processor import TS_CLIENT, TSX

    async def start(target: str) -> tuple[Any, Any]:
        if language == "go":  # clients/go/internal/ssntransform, the same transform on the Go SDK
            command = [str(request.getfixturevalue("go_build")("ssntransform")), target]
        else:
            command = [str(TSX), str(TS_TRANSFORM), target]
        child = Child(await asyncio.create_subprocess_exec(
            *command, cwd=TS_CLIENT, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE))
        return child, child.close

    await _remote_transform(start_app, openai_server, start)


async def test_a_remote_java_transform_projects_both_targets_and_fails_closed_when_gone(
    start_app: Any, openai_server: Any, java: Any  # noqa: F811
) -> None:
    async def start(target: str) -> tuple[Any, Any]:
        # clients/java/src/test/java/dev/treadle/interop/SsnTransform.java, on the Java SDK
        child = await java("dev.treadle.interop.SsnTransform", target, target)
        return child, child.stop

    await _remote_transform(start_app, openai_server, start)


async def _remote_transform(start_app: Any, openai_server: Any, start: Any) -> None:
    from treadle.agents import Agent, ProcessorRef
    from treadle.core.messages import SystemMessage

    fake = openai_server(_script(3))
    running = await start_app()
    running.app.add_tool(lookup_customer)
    running.app.add_agent(Agent(
        id="support", model="openai/test-model", base_url=fake.base_url, instructions=[SystemMessage("terse")],
        tools=["lookup_customer"], tool_payload_processors=[ProcessorRef("ssn-transform")]))
    child, stop = await start(running.target)
    memory = {"memory": {"resource": "staff-1", "threadId": "case-9"}}
    try:
        await child.expect("ready")
        assert await running.app.processors.wait_attached("ssn-transform", 30)
        async with AgentClient(running.target) as client:
            streamed = [c async for c in client.stream("support", "c-42?", options=memory)]
            assert _tool_results(streamed) == [{**RECORD, "ssn": "***-**-1120"}]
            assert SSN not in str(streamed)
            assert not [c for c in streamed if c.HasField("tool_call_delta")]  # a transform, no delta rule
            assert json.loads(fake.requests[1]["messages"][-1]["content"]) == RECORD
            history = await client.list_messages("staff-1", "case-9")
            assert _history_results(history) == [DROPPED]
            generated = await client.generate("support", "again?", options=memory)
            assert [json_format.MessageToDict(r.result) for s in generated.steps for r in s.tool_results] == [
                {**RECORD, "ssn": "***-**-1120"}]
            # The processor goes away: the next run shows the placeholder, never the raw record.
            await stop()
            await _until(lambda: not running.app.processors.connections())
            streamed = [c async for c in client.stream("support", "once more?", options=memory)]
            assert _tool_results(streamed) == [{"message": "Tool output payload unavailable"}]
            [call] = [json_format.MessageToDict(c.tool_call.args) for c in streamed if c.HasField("tool_call")]
            assert call == {"message": "Tool input payload unavailable"}
            assert SSN not in str(streamed)
            assert SSN not in str(_dicts(await client.list_messages("staff-1", "case-9")))
            assert json.loads(fake.requests[5]["messages"][-1]["content"]) == RECORD
    finally:
        await stop()


async def _until(check: Any, timeout: float = 30) -> None:
    async with asyncio.timeout(timeout):
        while not check():
            await asyncio.sleep(0.05)


async def test_a_python_sdk_transform_and_an_in_process_one(start_app: Any, openai_server: Any) -> None:
    from treadle.agents import Agent, ProcessorRef
    from treadle.core.messages import SystemMessage
    from treadle_client import attach

    class LastFour:
        """Shows only the SSN's last four digits, in both targets."""

        id = "last-four"
        tool_names = ["lookup_customer"]

        def transform_tool_payload(self, args: Any) -> Any:
            if args.phase != "output":
                return args.payload
            return {**args.payload, "ssn": args.payload["ssn"][-4:], "seen": [args.target, args.tool_name]}

    class Upper:
        id = "upper"

        def transform_tool_payload(self, args: Any) -> Any:
            return {k: v.upper() if isinstance(v, str) else v for k, v in args.payload.items()}

    fake = openai_server(_script(1))
    running = await start_app()
    running.app.add_tool(lookup_customer)
    running.app.registry.add_processor(Upper())
    running.app.add_agent(Agent(
        id="support", model="openai/test-model", base_url=fake.base_url, instructions=[SystemMessage("terse")],
        tools=["lookup_customer"], tool_payload_rules=[ToolPayloadRule("output", drop=("/plan",))],
        tool_payload_processors=[ProcessorRef("last-four"), ProcessorRef("upper")]))
    attachment = await attach([LastFour()], running.target)
    try:
        await attachment.ready()
        async with AgentClient(running.target) as client:
            memory = {"memory": {"resource": "staff-1", "threadId": "case-3"}}
            streamed = [c async for c in client.stream("support", "c-42?", options=memory)]
            # The rules first (plan dropped), then each processor in order.
            assert _tool_results(streamed) == [{"id": "C-42", "name": "ADA LOVELACE", "ssn": "1120",
                                                "seen": ["display", "lookup_customer"]}]
            assert _history_results(await client.list_messages("staff-1", "case-3")) == [
                {"id": "C-42", "name": "ADA LOVELACE", "ssn": "1120", "seen": ["transcript", "lookup_customer"]}]
    finally:
        await attachment.close()


async def test_a_run_error_quoting_transformed_arguments_is_scrubbed(openai_server: Any) -> None:
    from treadle.tools import ToolHooks

    card = "4111111111111111"

    def refuse(ctx: Any) -> Any:
        raise RuntimeError(f"hook crashed on {ctx.input}")

    h = Harness(openai_server([Turn.call("charge_card", {"card": card})]))
    agent = h.agent(tools=[charge_card], tool_hooks=ToolHooks(before_tool_call=refuse), tool_payload_rules=[
        ToolPayloadRule("input", tools=("charge_card",), mask=("/card",))])
    chunks = await h.stream(agent, "charge it")
    [raw] = [c for c in chunks if c.type == "error"]
    assert card in raw.payload.message  # what the server logs and the run recorded
    [shown] = [c for c in _shown(chunks) if c.type == "error"]
    assert card not in shown.payload.message and "[redacted]" in shown.payload.message
    h.server.script.extend([Turn.call("charge_card", {"card": card})])
    result = await h.generate(agent, "charge it")
    assert result.error is not None and card in result.error.message
    displayed = await result.displayed()
    assert displayed.error is not None and card not in displayed.error.message


async def test_a_relayed_chunk_carries_its_display_projection_to_the_other_replicas() -> None:
    """Subscribers on another replica get the chunk and its projection, as local ones do."""
    from treadle.app import _decode_chunk, _encode_chunk
    from treadle.core.chunks import ToolCallDelta, ToolResultPayload
    from treadle.core.tool_payload import ToolPayloadPolicy
    from treadle.loop.payload_view import PayloadView
    from treadle.signals.relay import Relay, RemoteChunk

    class Channel:  # every replica's relay hears what any of them publishes, as over NOTIFY
        heard = True

        def __init__(self) -> None:
            self.listeners: list[Any] = []

        async def start(self, on_message: Any) -> None:
            self.listeners.append(on_message)

        async def publish(self, payloads: list[str]) -> None:
            for listener in self.listeners:
                for payload in payloads:
                    listener(payload)

    channel = Channel()
    received: list[Any] = []
    here = Relay(channel, "a", (_encode_chunk, _decode_chunk), lambda m: None)  # type: ignore[arg-type]
    there = Relay(channel, "b", (_encode_chunk, _decode_chunk), received.append)  # type: ignore[arg-type]
    await channel.start(here._received)
    await channel.start(there._received)
    view = PayloadView(ToolPayloadPolicy([ToolPayloadRule("output", mask=("/ssn",)),
                                          ToolPayloadRule("input", suppress=True)]))
    masked = Chunk.of(ToolResultPayload("c1", "lookup_customer", dict(RECORD), args={"id": "c-42"}), run_id="r")
    hidden = Chunk.of(ToolCallDelta("c1", '{"id": "c-42"}', "lookup_customer"), run_id="r")
    plain = Chunk.of(ToolResultPayload("c2", "other", {"x": 1}), run_id="r")
    await view.mark(masked)
    view.mark_delta(hidden)
    for chunk in (masked, hidden, plain):
        here.chunk(("staff-1", "case-1"), chunk)
    await here.flush()
    chunks = [m.chunk for m in received if isinstance(m, RemoteChunk)]
    assert [c.type for c in chunks] == ["tool-result", "tool-call-delta", "tool-result"]
    assert chunks[0].payload.result == RECORD  # raw, for credentials with rawToolPayloads
    shown = [display_of(c) for c in chunks]
    assert shown[0] is not None and shown[0].payload.result == MASKED and shown[0].payload.args is None
    assert shown[1] is None  # a suppressed delta stays suppressed
    assert shown[2] is chunks[2]  # no transform: the chunk itself


def test_pointers_reach_nested_fields_and_array_items_and_mask_with_sets_the_text() -> None:
    from treadle.core.tool_payload import ToolPayloadPolicy

    policy = ToolPayloadPolicy([
        ToolPayloadRule("output", mask=("/card/number", "/items/0/secret", "/absent"), mask_with="[hidden]"),
        ToolPayloadRule("output", tools=("pay*",), drop=("/a~1b", "/t~0x")),
    ])
    raw = {"card": {"number": "4111", "exp": "12/30"}, "items": [{"secret": "s"}, {"secret": "t"}],
           "a/b": 1, "t~x": 2, "keep": 3}
    assert policy.project("display", "output", "pay", raw) == {
        "card": {"number": "[hidden]", "exp": "12/30"}, "items": [{"secret": "[hidden]"}, {"secret": "t"}], "keep": 3}
    assert policy.project("transcript", "output", "other", raw)["a/b"] == 1  # the second rule is pay* only
    assert raw["card"]["number"] == "4111"  # the raw payload is never touched


async def test_transform_processors_are_checked_and_must_be_mutate(start_app: Any) -> None:
    from treadle_client import AttachError, attach

    running = await start_app()
    async with AgentClient(running.target) as client:
        with pytest.raises(grpc.aio.AioRpcError) as e:
            await client.create_agent({"id": "a", "model": "openai/gpt-4o-mini",
                                       "toolPayloadProcessors": [{"id": "no spaces"}]})
        assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "agent.tool_payload_processors[0].id 'no spaces' could never attach" in (e.value.details() or "")

    class Watcher:
        id = "watcher"
        observe = ["transform_tool_payload"]

        def transform_tool_payload(self, args: Any) -> Any:
            return args.payload

    with pytest.raises(AttachError) as refused:
        attachment = await attach([Watcher()], running.target)
        try:
            await attachment.ready()
        finally:
            await attachment.close()
    assert refused.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert "transformToolPayload must be MUTATE" in refused.value.details


async def test_the_transcript_projection_is_stored_beside_the_raw_payload(database: Any) -> None:
    """On both engines: the raw payload and its projection round-trip; the listing shows the
    projection; the history the model reads is raw."""
    from treadle.core.messages import Message, MessageContent, ToolInvocationPart
    from treadle.loop.payload_view import transcript_message
    from treadle.memory import open_store

    part = ToolInvocationPart("c1", "lookup_customer", args={"id": "c-42"}, state="result", result=dict(RECORD),
                              transcript={"args": {"id": "c-42"}, "result": DROPPED})
    failed = ToolInvocationPart("c2", "charge_card", args={"card": "4111"}, state="output-error", is_error=True,
                                error_text="card 4111 declined",
                                transcript={"args": {"card": "***"}, "errorText": "card [redacted] declined",
                                            "suppressed": ["result"]})
    store = await open_store(database.url)
    try:
        await store.open_thread("staff-1", "t1")
        await store.save_messages("t1", "staff-1", [Message("m1", "assistant", MessageContent([part, failed]))])
        [loaded] = await store.load_history("t1", 10)
    finally:
        await store.close()
    assert loaded.content.parts == [part, failed]
    shown = transcript_message(loaded).content.parts
    assert [(p.args, p.result, p.error_text) for p in shown] == [  # type: ignore[union-attr]
        ({"id": "c-42"}, DROPPED, ""), ({"card": "***"}, None, "card [redacted] declined")]
