"""``treadle serve`` and ``treadle chat`` as real processes, and the acceptance contract via buf curl.

Readiness is the health service answering SERVING; the drain test holds the model's answer
with an event the test sets, so nothing here depends on timing.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from tests.conftest import StartApp
from tests.support import OpenAIServer, Turn
from treadle.agents import Agent
from treadle.core.messages import SystemMessage
from treadle.cli_chat import ChunkPrinter
from treadle.tools import Tool
from treadle.v1 import chunk_pb2, signal_pb2
from treadle_client import AgentClient

ROOT = Path(__file__).resolve().parent.parent
BUF = ROOT / ".ci" / "tools" / "node_modules" / ".bin" / "buf"
_SCRIPT = Path(sys.executable).parent / "treadle"
TREADLE = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "treadle.cli"]
READY_TIMEOUT = 60.0


def clean_env(**extra: str) -> dict[str, str]:
    """This environment without provider, tracing or Treadle settings, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "OTEL_", "TREADLE_"))}
    env["PYTHONUNBUFFERED"] = "1"
    return env | extra


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ServeProcess:
    """``treadle serve`` in a subprocess; its output lines are collected as they come."""

    def __init__(self, *args: str, env: dict[str, str]) -> None:
        self.port = free_port()
        self.target = f"127.0.0.1:{self.port}"
        env = {"TREADLE_DATA_DIR": tempfile.mkdtemp(prefix="treadle-data-")} | env  # a store of its own
        self.proc = subprocess.Popen(
            [*TREADLE, "serve", "--listen", self.target, *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, encoding="utf-8", env=env, cwd=ROOT,
        )
        self.stdout: list[str] = []
        self.stderr: list[str] = []
        self._changed = threading.Condition()
        for stream, lines in ((self.proc.stdout, self.stdout), (self.proc.stderr, self.stderr)):
            threading.Thread(target=self._read, args=(stream, lines), daemon=True).start()

    def _read(self, stream: Any, lines: list[str]) -> None:
        for line in stream:
            with self._changed:
                lines.append(line.rstrip("\n"))
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def wait_for_line(self, lines: list[str], needle: str, timeout: float = READY_TIMEOUT) -> str:
        with self._changed:
            found = self._changed.wait_for(
                lambda: any(needle in line for line in lines) or self.proc.poll() is not None, timeout
            )
            match = next((line for line in lines if needle in line), None)
        assert found and match is not None, f"no line with {needle!r}; stdout={self.stdout} stderr={self.stderr}"
        return match

    def health(self, service: str = "") -> int:
        with grpc.insecure_channel(self.target) as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            return int(stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=5).status)

    def wait_ready(self) -> None:
        """Poll health until SERVING; wait_for_ready makes each poll wait for the listener."""
        with grpc.insecure_channel(self.target) as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            for _ in range(int(READY_TIMEOUT)):
                assert self.proc.poll() is None, f"server exited: {self.stderr}"
                try:
                    response = stub.Check(health_pb2.HealthCheckRequest(), timeout=1, wait_for_ready=True)
                except grpc.RpcError:
                    continue
                if response.status == health_pb2.HealthCheckResponse.SERVING:
                    return
        pytest.fail(f"server never became ready; stderr={self.stderr}")

    def terminate(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=READY_TIMEOUT)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def serve() -> Iterator[Any]:
    procs: list[ServeProcess] = []

    def start(*args: str, env: dict[str, str]) -> ServeProcess:
        proc = ServeProcess(*args, env=env)
        procs.append(proc)
        proc.wait_ready()
        return proc

    yield start
    for proc in procs:
        proc.close()


def buf_curl(target: str, method: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    """Call through server reflection, as any client without our protos would."""
    if not BUF.exists():
        pytest.fail(f"buf is missing at {BUF.relative_to(ROOT)}: run `npm ci --prefix .ci/tools`")
    result = subprocess.run(
        [str(BUF), "curl", "--protocol", "grpc", "--http2-prior-knowledge", "--data", json.dumps(body),
         f"http://{target}/treadle.v1.AgentService/{method}"],
        capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 0, result.stderr
    decoder, text, out = json.JSONDecoder(), result.stdout.strip(), []
    while text:  # a server stream prints one JSON object per response
        obj, end = decoder.raw_decode(text)
        out.append(obj)
        text = text[end:].strip()
    return out


# --- serve -------------------------------------------------------------------------------------


def test_acceptance_contract_through_reflection(serve: Any, openai_server: Any) -> None:
    server: OpenAIServer = openai_server([Turn.say(["Hel", "lo", "!"]), Turn.say("Hi there.")])
    proc = serve(env=clean_env(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-test"))
    assert proc.stdout[0] == f"Treadle listening on {proc.target}"

    agent = {"id": "echo", "name": "Echo", "instructions": "You are terse.", "model": "openai/gpt-4o-mini"}
    [created] = buf_curl(proc.target, "CreateAgent", {"agent": agent})
    assert created["agent"]["id"] == "echo" and created["agent"]["source"] == "AGENT_SOURCE_API"

    responses = buf_curl(proc.target, "Stream", {"agentId": "echo", "prompt": "hello"})
    chunks = [c for r in responses for c in r["chunks"]]
    assert "".join(c["textDelta"]["text"] for c in chunks if "textDelta" in c) == "Hello!"
    assert [next(k for k in c if k not in ("runId", "from")) for c in chunks] == [
        "start", "stepStart", "responseMetadata", "textStart", *["textDelta"] * 3, "textEnd", "stepFinish", "finish",
    ]
    assert chunks[-1]["finish"]["reason"] == "FINISH_REASON_STOP"

    [generated] = buf_curl(proc.target, "Generate", {"agentId": "echo", "prompt": "hello"})
    assert generated["text"] == "Hi there."
    assert generated["finishReason"] == "FINISH_REASON_STOP"
    assert int(generated["usage"]["inputTokens"]) == 10
    assert generated["steps"][0]["text"] == "Hi there."
    assert server.requests[0]["model"] == "gpt-4o-mini"
    assert proc.terminate() == 0


def test_serve_without_keys_runs_the_assistant_on_the_local_model_and_says_how_to_switch(serve: Any) -> None:
    proc = serve(env=clean_env())
    assert proc.stdout[0] == f"Treadle listening on {proc.target}"
    assert "  assistant: local/smollm2-135m-instruct (config)" in proc.stdout
    switch = proc.wait_for_line(proc.stdout, "embedded model")
    assert "export OPENAI_API_KEY" in switch
    assert not any("OPENAI_API_KEY" in line for line in proc.stderr)
    assert proc.health("treadle.v1.AgentService") == health_pb2.HealthCheckResponse.SERVING
    assert proc.terminate() == 0


async def test_sigterm_lets_the_in_flight_stream_finish_then_exits_0(serve: Any, openai_server: Any) -> None:
    entered, release = threading.Event(), threading.Event()

    def held(body: dict[str, Any]) -> Turn:
        entered.set()
        release.wait(READY_TIMEOUT)
        return Turn.say(["finished ", "after SIGTERM"])

    server = openai_server([held])
    proc = serve("--grace", "60", env=clean_env(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-test"))
    try:
        async with AgentClient(proc.target) as client:
            await client.create_agent({"id": "echo", "model": "openai/gpt-4o-mini"})
            chunks = client.stream("echo", "hello")
            first = await chunks.__anext__()
            assert first.HasField("start")
            assert await asyncio.to_thread(entered.wait, READY_TIMEOUT)

            proc.proc.send_signal(signal.SIGTERM)
            await asyncio.to_thread(proc.wait_for_line, proc.stderr, "SIGTERM received")
            # Draining: health says NOT_SERVING and new runs are refused, the old one goes on.
            assert proc.health() == health_pb2.HealthCheckResponse.NOT_SERVING
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await client.generate("echo", "late")
            assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
            assert proc.proc.poll() is None

            release.set()
            rest = [c async for c in chunks]
    finally:
        release.set()
    assert "".join(c.text_delta.text for c in rest if c.HasField("text_delta")) == "finished after SIGTERM"
    assert rest[-1].finish.reason == chunk_pb2.FINISH_REASON_STOP
    assert await asyncio.to_thread(proc.proc.wait, READY_TIMEOUT) == 0


def test_serve_with_a_bad_config_file_names_it_and_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "agents.yaml"
    path.write_text("agents:\n  - id: ok\n    model: openai/x\n  - id: broken\n    model: ''\n")
    result = subprocess.run(
        [*TREADLE, "serve", "--listen", f"127.0.0.1:{free_port()}", "--config", str(path)],
        capture_output=True, text=True, env=clean_env(), timeout=READY_TIMEOUT,
    )
    assert result.returncode == 2
    assert f"{path}: agents[1] ('broken')" in result.stderr and "model is required" in result.stderr


# --- chat --------------------------------------------------------------------------------------


async def run_chat(target: str, agent_id: str, message: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        *TREADLE, "chat", agent_id, message, "--target", target,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=clean_env(),
    )
    out, err = await asyncio.wait_for(proc.communicate(), READY_TIMEOUT)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_chat_prints_streamed_text_and_tool_calls(start_app: StartApp, openai_server: Any) -> None:
    server = openai_server([Turn.call("get_weather", {"city": "Paris"}), Turn.say(["Sunny ", "in Paris."])])

    def setup(app: Any) -> None:
        app.add_tool(Tool("get_weather", lambda args, ctx: {"sky": "sunny", "degrees": 21}))
        app.add_agent(Agent(id="weather", model="openai/test", base_url=server.base_url, tools=["get_weather"]))

    running = await start_app(setup=setup)
    code, out, err = await run_chat(running.target, "weather", "Weather in Paris?")
    assert code == 0, err
    assert out.splitlines() == [
        '→ tool get_weather({"city": "Paris"})',
        '← get_weather: {"degrees": 21, "sky": "sunny"}',
        "Sunny in Paris.",
    ]


class _Blocker:
    id = "guard"

    def process_input(self, args: Any) -> None:
        args.abort("no weather talk")


async def test_chat_shows_tripwires_plainly_and_errors_on_stderr(start_app: StartApp, openai_server: Any) -> None:
    server = openai_server([Turn.fail(400, "context too long")])

    def setup(app: Any) -> None:
        app.add_processor(_Blocker())
        app.add_agent(Agent(id="guarded", model="openai/test", base_url=server.base_url, input_processors=["guard"]))
        app.add_agent(Agent(id="broken", model="openai/test", base_url=server.base_url))

    running = await start_app(setup=setup)
    code, out, err = await run_chat(running.target, "guarded", "weather?")
    assert (code, out) == (3, "✋ blocked by guard: no weather talk\n"), err  # a tripwire exits 3

    code, out, err = await run_chat(running.target, "broken", "hi")
    assert code == 1 and "context too long" in err

    code, out, err = await run_chat(running.target, "ghost", "hi")
    assert code == 1 and "NOT_FOUND" in err and "'ghost'" in err


def test_chunk_printer_renders_reasoning_and_tool_errors() -> None:
    out, err = io.StringIO(), io.StringIO()
    printer = ChunkPrinter(out, err)
    chunks = [
        chunk_pb2.Chunk(reasoning_start=chunk_pb2.ReasoningStartChunk(id="r")),
        chunk_pb2.Chunk(reasoning_delta=chunk_pb2.ReasoningDeltaChunk(id="r", text="hmm")),
        chunk_pb2.Chunk(reasoning_end=chunk_pb2.ReasoningEndChunk(id="r")),
        chunk_pb2.Chunk(text_delta=chunk_pb2.TextDeltaChunk(id="t", text="Hi")),
        chunk_pb2.Chunk(tool_error=chunk_pb2.ToolErrorChunk(tool_name="rm", error="denied")),
        chunk_pb2.Chunk(finish=chunk_pb2.FinishChunk(reason=chunk_pb2.FINISH_REASON_STOP)),
    ]
    for chunk in chunks:
        printer.show(chunk)
    assert out.getvalue() == "thinking: hmm\nHi\n← rm: error: denied\n"
    assert not printer.failed and err.getvalue() == ""


def test_chunk_printer_shows_signals_taken_into_the_run_as_dim_lines() -> None:
    from google.protobuf import json_format, struct_pb2

    def data(name: str, value: dict[str, Any]) -> chunk_pb2.Chunk:
        return chunk_pb2.Chunk(data=chunk_pb2.DataChunk(name=name, data=json_format.ParseDict(value, struct_pb2.Value())))

    out, err = io.StringIO(), io.StringIO()
    printer = ChunkPrinter(out, err)
    for chunk in [
        chunk_pb2.Chunk(text_delta=chunk_pb2.TextDeltaChunk(id="t", text="Working")),
        data("data-user-message", {"type": "user", "contents": "Can we\nsimplify?",
                                   "attributes": {"name": "Devin", "from": "slack"}}),
        data("data-user-message", {"type": "user", "contents": "and tests"}),
        data("data-signal", {"type": "notification", "tagName": "notification", "contents": "CI failed",
                             "attributes": {"source": "github", "priority": "high"}}),
        data("data-signal", {"type": "state", "tagName": "state", "contents": "tab open"}),
        chunk_pb2.Chunk(text_delta=chunk_pb2.TextDeltaChunk(id="t", text="Done.")),
    ]:
        printer.show(chunk)
    assert out.getvalue().splitlines() == [
        "Working", "↳ Devin (slack): Can we simplify?", "↳ user: and tests",
        "↳ notification (github, high): CI failed", "↳ state: tab open", "Done.",
    ]
    colored = io.StringIO()
    ChunkPrinter(colored, err, color=True).show(data("data-user-message", {"type": "user", "contents": "hi"}))
    assert colored.getvalue() == "\x1b[2m↳ user: hi\x1b[0m\n"


async def test_chat_shows_a_message_sent_into_its_run(start_app: StartApp, openai_server: Any, tmp_path: Path) -> None:
    entered, release = threading.Event(), threading.Event()

    def held(_: Any) -> Turn:
        entered.set()
        assert release.wait(READY_TIMEOUT)
        return Turn.say("Looking.")

    server = openai_server([held, Turn.say("Noted, Devin.")])
    running = await start_app(setup=lambda app: app.add_agent(
        Agent(id="helper", model="openai/test", base_url=server.base_url)), data_dir=tmp_path / "data")
    proc = await asyncio.create_subprocess_exec(
        *TREADLE, "chat", "helper", "--target", running.target, "--thread", "t1", "--resource", "u1",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env=clean_env(),
    )
    assert proc.stdin is not None
    proc.stdin.write(b"check the build\n")
    await proc.stdin.drain()
    try:
        assert await asyncio.to_thread(entered.wait, READY_TIMEOUT)
        async with AgentClient(running.target) as client:
            sent = await client.send_message("helper", "also the docs", resource_id="u1", thread_id="t1",
                                             attributes={"name": "Devin", "from": "slack"})
        assert sent.accepted.action == signal_pb2.SIGNAL_ACTION_DELIVER  # into the chat's run
    finally:
        release.set()
    proc.stdin.close()
    out, err = await asyncio.wait_for(proc.communicate(), READY_TIMEOUT)
    assert proc.returncode == 0, err
    assert out.decode().splitlines() == ["Looking.", "↳ Devin (slack): also the docs", "Noted, Devin."]


def test_openai_base_url_alone_is_enough(serve: Any, openai_server: Any) -> None:
    """A local OpenAI-compatible server needs no key: OPENAI_BASE_URL alone must work."""
    server = openai_server([Turn.say("local answer")])
    proc = serve(env=clean_env(OPENAI_BASE_URL=server.base_url))
    [generated] = buf_curl(proc.target, "Generate", {"agentId": "assistant", "prompt": "hello"})
    assert generated.get("text") == "local answer", generated
    assert not any("OPENAI_API_KEY" in line for line in proc.stderr)
    assert proc.terminate() == 0


# --- the first hour: version, agents, words, data chunks, conversations, ports ----------------


def run_cli(*args: str, stdin: str | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*TREADLE, *args], input=stdin, capture_output=True, text=True,
                          env=clean_env(**env), timeout=READY_TIMEOUT * 4)


def test_version() -> None:
    from importlib import metadata

    done = run_cli("--version")
    assert (done.returncode, done.stdout.strip()) == (0, f"treadle {metadata.version('treadle')}")


def test_help_names_the_default_target_and_treadle_target_changes_it() -> None:
    def help_text(*args: str, **env: str) -> str:
        return " ".join(run_cli(*args, "--help", **env).stdout.split())  # argparse wraps lines

    assert "(default: 127.0.0.1:50051; set TREADLE_TARGET to change it)" in help_text("chat")
    assert "(default: 127.0.0.1:9; set TREADLE_TARGET" in help_text("chat", TREADLE_TARGET="127.0.0.1:9")
    assert "(default: 127.0.0.1:50051; set TREADLE_TARGET" in help_text("agents")
    assert "(TREADLE_LISTEN; default 127.0.0.1:50051)" in help_text("serve")


async def test_agents_lists_and_shows_in_yaml(start_app: StartApp) -> None:
    import yaml

    def setup(app: Any) -> None:
        app.add_agent(Agent(id="weather", name="Weather", model="openai/gpt-4o-mini", tools=["get_weather"],
                            instructions=[SystemMessage("You tell the weather.")]))
        app.add_agent(Agent(id="tiny", model="local/smollm2-135m-instruct"))

    running = await start_app(setup=setup)
    done = await asyncio.to_thread(run_cli, "agents", "--target", running.target)
    assert done.returncode == 0, done.stderr
    rows = [line.split() for line in done.stdout.splitlines()]
    assert rows == [["ID", "MODEL", "SOURCE", "NAME"], ["tiny", "local/smollm2-135m-instruct", "code"],
                    ["weather", "openai/gpt-4o-mini", "code", "Weather"]]
    done = await asyncio.to_thread(run_cli, "agents", "show", "weather", TREADLE_TARGET=running.target)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("# source: code; created ")
    shown = yaml.safe_load(done.stdout)
    assert shown == {"id": "weather", "name": "Weather", "instructions": "You tell the weather.",
                     "model": "openai/gpt-4o-mini", "tools": ["get_weather"]}
    done = await asyncio.to_thread(run_cli, "agents", "show", "ghost", "--target", running.target)
    assert done.returncode == 1 and "NOT_FOUND" in done.stderr and "'ghost'" in done.stderr


class _Recorder:
    """Records each run's prompt and memory thread, and writes a data chunk."""

    id = "recorder"

    def __init__(self) -> None:
        self.runs: list[tuple[str, str, str]] = []

    async def process_input(self, args: Any) -> Any:
        self.runs.append((args.messages[-1].text, args.run.thread_id, args.run.resource_id))
        await args.writer.custom({"type": "data-progress", "data": {"stage": "input", "n": len(self.runs)}})
        return args.messages


async def test_chat_joins_unquoted_words_and_shows_data_chunks(start_app: StartApp, openai_server: Any) -> None:
    server = openai_server([Turn.say("Sunny.")])
    recorder = _Recorder()

    def setup(app: Any) -> None:
        app.add_processor(recorder)
        app.add_agent(Agent(id="weather", model="openai/test", base_url=server.base_url, input_processors=["recorder"]))

    running = await start_app(setup=setup)
    done = await asyncio.to_thread(run_cli, "chat", "weather", "Weather", "in", "Paris?", TREADLE_TARGET=running.target)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ['◆ data-progress {"n": 1, "stage": "input"}', "Sunny."]
    assert recorder.runs == [("Weather in Paris?", "", "")]  # one message: no thread unless asked


async def test_chat_without_a_message_is_a_conversation_on_one_thread(start_app: StartApp, openai_server: Any) -> None:
    server = openai_server([Turn.say("Hello!"), Turn.say("Still here.")])
    recorder = _Recorder()

    def setup(app: Any) -> None:
        app.add_processor(recorder)
        app.add_agent(Agent(id="pal", model="openai/test", base_url=server.base_url, input_processors=["recorder"]))

    running = await start_app(setup=setup)
    done = await asyncio.to_thread(run_cli, "chat", "pal", "--resource", "ada", stdin="hi there\n\nare you there?\n",
                                   TREADLE_TARGET=running.target)
    assert done.returncode == 0, done.stderr
    assert [line for line in done.stdout.splitlines() if not line.startswith("◆")] == ["Hello!", "Still here."]
    [(first, thread, resource), (second, thread2, resource2)] = recorder.runs
    assert (first, second) == ("hi there", "are you there?")
    assert thread == thread2 and thread.startswith("chat-") and resource == resource2 == "ada"
    assert f"on thread {thread} (resource ada)" in done.stderr and f"--thread {thread}" in done.stderr

    done = await asyncio.to_thread(run_cli, "chat", "pal", "--thread", "t1", stdin="/quit\n",
                                   TREADLE_TARGET=running.target)
    assert done.returncode == 0 and "on thread t1 (resource " in done.stderr


def test_a_second_server_on_a_taken_port_exits_2_naming_the_port(serve: Any) -> None:
    first = serve(env=clean_env())
    second = subprocess.run([*TREADLE, "serve", "--listen", first.target], capture_output=True, text=True,
                            env=clean_env(), timeout=READY_TIMEOUT * 4)
    assert second.returncode == 2, second.stderr
    assert f"port {first.port} is already in use ({first.target})" in second.stderr
    assert "Treadle listening" not in second.stdout
    # A server built in code refuses the same way (TREADLE_LISTEN, as `treadle serve` reads it).
    script = ROOT / "examples" / "server_with_processor.py"
    in_code = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                             env=clean_env(TREADLE_LISTEN=first.target), timeout=READY_TIMEOUT * 4)
    assert in_code.returncode == 2 and f"port {first.port} is already in use" in in_code.stderr
    assert first.health() == health_pb2.HealthCheckResponse.SERVING  # the first one is untouched
    assert first.terminate() == 0


async def test_a_failed_run_leaves_one_line_in_the_server_log(serve: Any, openai_server: Any) -> None:
    server = openai_server([Turn.fail(400, "context too long")])
    proc = serve(env=clean_env(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-test"))
    code, out, err = await run_chat(proc.target, "assistant", "hi")
    assert code == 1 and "context too long" in err
    line = proc.wait_for_line(proc.stderr, "failed:")
    assert "of agent 'assistant' failed:" in line and "context too long" in line and "run_" in line
    assert proc.terminate() == 0
