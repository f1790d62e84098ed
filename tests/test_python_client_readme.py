"""The examples of ``clients/python/README.md``, run the way a user runs them (a whole program,
``python example.py`` with ``TREADLE_TARGET`` set) against served agents; mypy over the
agent-calling ones: it accepts them, and it rejects the mistakes the dataclass types exist to
catch. (The processor, text-gate and tool examples are run in-process by test_python_sdk.py and
test_hold_release.py.)
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import StartApp
from tests.support import OpenAIServer, Turn
from tests.support.otlp import OtlpReceiver, otlp  # noqa: F401
from treadle.agents import Agent, ProcessorRef
from treadle.tools import Tool
from treadle_client import AgentClient

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "clients" / "python" / "README.md"
DOC_BLOCKS = {
    ("clients/python/README.md", "python", 0): "test_the_plain_call_example",
    ("clients/python/README.md", "python", 1): "test_the_dataclass_call_example",
    ("clients/python/README.md", "yaml", 0): "test_the_agent_file_example_names_the_processor",
    ("clients/python/README.md", "python", 4): "test_the_attach_example_attaches_to_every_server_given",
    ("clients/python/README.md", "python", 6): "test_the_tracing_example_exports_the_processor_spans",
}


def block(name: str) -> str:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    [code] = [b for b in blocks if b.startswith(f"# example: {name}\n")]
    return code


async def run_example(name: str, tmp_path: Path, start_app: StartApp,
                      openai_server: Callable[..., OpenAIServer]) -> str:
    model = openai_server([Turn.call("get_weather", {"city": "Oslo"}), Turn.say(["Clear ", "skies."]),
                           Turn.say("Rain.")])

    def setup(app: object) -> None:
        app.add_tool(Tool("get_weather", lambda args, ctx: {"city": args["city"], "sky": "clear"}))  # type: ignore[attr-defined]
        app.add_agent(Agent(id="assistant", model="openai/gpt-4o-mini", base_url=model.base_url,  # type: ignore[attr-defined]
                            tools=["get_weather"]))

    running = await start_app(setup=setup)
    script = tmp_path / "example.py"
    script.write_text(block(name))
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(script), cwd=str(tmp_path), env={**os.environ, "TREADLE_TARGET": running.target},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=60)
    assert proc.returncode == 0, err.decode()
    assert len(model.recorded) == 3
    return out.decode()


async def test_the_plain_call_example(tmp_path: Path, start_app: StartApp,
                                      openai_server: Callable[..., OpenAIServer]) -> None:
    out = await run_example("call", tmp_path, start_app, openai_server)
    assert re.fullmatch(r"\[get_weather\] Clear skies\.\nRain\. \(\d+ tokens\)\n", out), out


async def test_the_dataclass_call_example(tmp_path: Path, start_app: StartApp,
                                          openai_server: Callable[..., OpenAIServer]) -> None:
    out = await run_example("call with dataclasses", tmp_path, start_app, openai_server)
    assert re.fullmatch(r"\[get_weather \{'city': 'Oslo'\}\] Clear skies\.\(stop\)\nRain\. \(\d+ tokens\)\n",
                        out), out


def mypy(tmp_path: Path, files: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """mypy with the project's settings over ``files`` (module name -> code)."""
    paths = []
    for name, code in files.items():
        paths.append(tmp_path / f"{name}.py")
        paths[-1].write_text(code)
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
         "--cache-dir", str(tmp_path / ".mypy_cache"), *map(str, paths)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )


EVERY_CASE = '''
from typing import assert_never

from treadle_client.typed import ChunkPayload, {names}


def kind(payload: ChunkPayload | None) -> str:
    match payload:
{cases}
        case None:
            return "unknown"
        case _:
            assert_never(payload)
'''


def every_case(leave_out: str = "") -> str:
    from treadle_client.typed import ChunkPayload
    from typing import get_args

    names = sorted(c.__name__ for c in get_args(ChunkPayload) if c.__name__ != leave_out)
    cases = "".join(f"        case {n}():\n            return {n!r}\n" for n in names)
    return EVERY_CASE.format(names=", ".join(names), cases=cases)


def test_mypy_accepts_the_examples_and_checks_the_dataclass_types(tmp_path: Path) -> None:
    typed = block("call with dataclasses")
    plain = block("call")
    done = mypy(tmp_path, {"typed_example": typed, "plain_example": plain, "every_case": every_case()})
    assert done.returncode == 0, done.stdout + done.stderr

    wrong = {
        "a typo in a field name": (typed.replace("TextDeltaChunk(text=text)", "TextDeltaChunk(txt=text)"),
                                   'has no attribute "txt"'),
        "a str used as an int": (typed.replace("print(text, end", "print(text + 1, end"),
                                 'Unsupported operand types for + ("str" and "int")'),
        "a misspelled enum attribute": (typed.replace("reason.name.lower()", "reason.nme"),
                                        'has no attribute "nme"'),
        "a missing case": (every_case(leave_out="ToolErrorChunk"),
                           'Argument 1 to "assert_never" has incompatible type "ToolErrorChunk"'),
    }
    assert all(code not in (typed, every_case()) for code, _ in wrong.values())
    done = mypy(tmp_path, {f"wrong{i}": code for i, (code, _) in enumerate(wrong.values())})
    assert done.returncode == 1, done.stdout + done.stderr
    for i, (what, (_, error)) in enumerate(wrong.items()):
        lines = [line for line in done.stdout.splitlines() if f"wrong{i}.py:" in line]
        assert any(error in line for line in lines), f"{what}: {lines}"


# --- the processor examples run as programs ---------------------------------------------------


def write_with_processor(tmp_path: Path, name: str) -> Path:
    """The example ``name`` as ``example.py``, beside the processor example as ``content_filter.py``."""
    (tmp_path / "content_filter.py").write_text(block("processor"))
    script = tmp_path / "example.py"
    script.write_text(block(name))
    return script


async def test_the_attach_example_attaches_to_every_server_given(tmp_path: Path, start_app: StartApp) -> None:
    first, second = await start_app(), await start_app()
    script = write_with_processor(tmp_path, "attach")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(script), first.target, second.target, cwd=str(tmp_path),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        line = await asyncio.wait_for(proc.stdout.readline(), 30)
        assert line == b"attached to 2 servers\n"
        for running in (first, second):
            assert running.app.processors.declaration("content-filter") is not None
    finally:
        proc.terminate()
        await proc.wait()


async def test_the_tracing_example_exports_the_processor_spans(
    tmp_path: Path, start_app: StartApp, openai_server: Callable[..., OpenAIServer], otlp: OtlpReceiver,
) -> None:
    model = openai_server([Turn.say(["Hello ", "there"])])
    running = await start_app(setup=lambda app: app.add_agent(Agent(  # type: ignore[attr-defined]
        id="guarded", model="openai/gpt-4o-mini", base_url=model.base_url,
        output_processors=[ProcessorRef("content-filter")])))
    script = write_with_processor(tmp_path, "tracing")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(script), cwd=str(tmp_path),
        env={**os.environ, "TREADLE_TARGET": running.target, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": otlp.endpoint},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert await running.app.processors.wait_attached("content-filter", 30)
        async with AgentClient(running.target) as client:
            response = await client.generate("guarded", "hi")
        assert response.text == "Hello there"
    finally:
        proc.send_signal(signal.SIGTERM)  # run_processors detaches; the provider flushes at exit
        _, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 0, err.decode()
    names = {span.name for span in otlp.spans()}
    assert "processOutputStream content-filter" in names, names


async def test_the_agent_file_example_names_the_processor(tmp_path: Path, start_app: StartApp) -> None:
    [yaml_block] = re.findall(r"```yaml\n(.*?)```", README.read_text(), re.S)
    path = tmp_path / "agents.yaml"
    path.write_text(yaml_block)
    running = await start_app(config_file=path, env={"OPENAI_API_KEY": "sk-test"})
    agent = running.app.registry.get_agent("guarded")
    assert [(r.id, r.failure_policy) for r in agent.input_processors] == [("content-filter", "fail_closed")]
    assert [(r.id, r.failure_policy) for r in agent.output_processors] == [("content-filter", "fail_open")]


def test_every_block_of_the_readme_is_run() -> None:
    text = README.read_text()
    names = [b.split("\n", 1)[0] for b in re.findall(r"```python\n(.*?)```", text, re.S)]
    assert names == [f"# example: {n}" for n in (
        "call", "call with dataclasses", "processor", "text gate", "attach", "tool", "tracing")]
    fences = re.findall(r"^```(\w*)$", text, re.M)
    assert fences[1::2] == [""] * (len(fences) // 2), "a block without its language"
    assert fences[::2] == ["python"] * 3 + ["yaml"] + ["python"] * 4
