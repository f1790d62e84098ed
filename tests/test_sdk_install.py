"""Each SDK installs as its README says, into an empty project outside the repository, and runs
the README's first example against a served agent.

The blocks claimed below (``DOC_BLOCKS``, see tests/doc_blocks.py) run as written: shell blocks with ``bash -e`` in an empty temporary directory, ``TREADLE`` set to a fresh
copy of the clone (the SDK sources and ``proto/``, without anything built), the program blocks
saved where the README says. Only the server address changes: the README's ``127.0.0.1:50051``
becomes the test server's. Packages come from the registries (their caches, on a warm machine):
npm, the Go module proxy, Maven Central, PyPI.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.doc_blocks import DEFAULT_ADDRESS, ROOT, block
from tests.support import Turn
from tests.support.otlp import OtlpReceiver, otlp  # noqa: F401
from tests.test_remote_processes import Server, server  # noqa: F401
from treadle.agents import ProcessorRef
from treadle.core.messages import TextPart
from treadle_client import AgentClient

TS = "clients/typescript/README.md"
GO = "clients/go/README.md"
JAVA = "clients/java/README.md"
PY = "clients/python/README.md"
README_TARGET = DEFAULT_ADDRESS
DOC_BLOCKS = {
    (TS, "sh", 0): "test_typescript_installs_from_a_packed_tarball",
    (TS, "ts", 0): "test_typescript_installs_from_a_packed_tarball",
    (TS, "sh", 1): "test_typescript_installs_from_a_packed_tarball",
    (TS, "ts", 4): "test_typescript_installs_from_a_packed_tarball",
    (TS, "sh", 2): "test_typescript_sdk_builds_and_tests_in_a_clone",
    (GO, "go", 0): "test_go_installs_with_a_replace_line",
    (GO, "go", 1): "test_go_installs_with_a_replace_line",
    (GO, "sh", 0): "test_go_installs_with_a_replace_line",
    (JAVA, "xml", 0): "test_java_installs_into_the_local_maven_repository",
    (JAVA, "sh", 0): "test_java_installs_into_the_local_maven_repository",
    (JAVA, "java", 0): "test_java_installs_into_the_local_maven_repository",
    (PY, "sh", 0): "test_python_installs_with_pip",
    (PY, "python", 0): "test_python_installs_with_pip",
}


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What a fresh clone holds for the SDKs: their sources and the protos, nothing built."""
    dest = tmp_path_factory.mktemp("clone")
    built = shutil.ignore_patterns("node_modules", "dist", "target", "build", "*.egg-info", "__pycache__", "*.tgz")
    for sdk in ("typescript", "go", "java", "python"):
        shutil.copytree(ROOT / "clients" / sdk, dest / "clients" / sdk, ignore=built)
    shutil.copytree(ROOT / "proto", dest / "proto")
    return dest


def env_for(clone: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "VIRTUAL_ENV", "PYTHON"))}
    env["TREADLE"] = str(clone)
    return env


def sh(lines: list[str], cwd: Path, env: dict[str, str], timeout: float = 900) -> str:
    done = subprocess.run(["bash", "-e", "-c", "\n".join(lines)], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)
    assert done.returncode == 0, f"{lines}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def split_run(block: str, target: str) -> tuple[list[str], str]:
    """The setup lines of a shell block and its last line (the one that runs the example)."""
    lines = [line for line in block.strip().splitlines() if line.strip()]
    return lines[:-1], lines[-1].replace(README_TARGET, target)


class SecretFilter:
    """Blocks prompts that mention a secret (in-process, on the served agent)."""

    id = "secret-filter"

    def process_input(self, args: Any) -> Any:
        for m in args.messages:
            if any(isinstance(p, TextPart) and "secret" in p.text for p in m.content.parts):
                args.abort("no secrets")
        return args.messages


async def test_typescript_installs_from_a_packed_tarball(
    server: Any, clone: Path, tmp_path: Path, otlp: OtlpReceiver,
) -> None:
    s: Server = await server()
    s.agent("assistant", [Turn.say(["Hello", " there"])], input_processors=[SecretFilter()])
    s.agent("traced", [Turn.say(["traced ", "answer"])], output_processors=[ProcessorRef("traced-echo")])
    project = tmp_path / "app"
    project.mkdir()
    # The README's first example, as agent.ts.
    (project / "agent.ts").write_text(block(TS, "ts", 0))
    setup, run = split_run(block(TS, "sh", 0), s.target)
    env = env_for(clone)
    await asyncio.to_thread(sh, setup, project, env)
    assert (project / "node_modules" / "@treadle" / "client" / "dist" / "index.js").is_file()
    assert not (project / "node_modules" / "@treadle" / "client").is_symlink()  # a copy, not a link
    env["TREADLE_TARGET"] = s.target
    out = await asyncio.to_thread(sh, [run], project, env, 120)
    assert out == "Hello there\nblocked by secret-filter: no secrets\n"

    # The tracing example, in the same project, with the packages its block names.
    (project / "tracing.ts").write_text(block(TS, "ts", 4))
    setup, run = split_run(block(TS, "sh", 1), s.target)
    await asyncio.to_thread(sh, setup, project, env, 300)
    env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = otlp.endpoint
    log = (tmp_path / "tracing.log").open("wb")
    proc = await asyncio.create_subprocess_exec("bash", "-c", run, cwd=project, env=env, start_new_session=True,
                                                stdout=log, stderr=subprocess.STDOUT)
    try:
        assert await s.app.processors.wait_attached("traced-echo", 120), (tmp_path / "tracing.log").read_text()
        async with AgentClient(s.target) as client:
            traced = await client.generate("traced", "hi", timeout=30)
        assert traced.text == "traced answer"
        os.killpg(proc.pid, signal.SIGTERM)  # the example shuts its provider down: the spans leave
        for _ in range(200):
            if any(span.name == "processOutputStream traced-echo" for span in otlp.spans()):
                break
            await asyncio.sleep(0.1)
        assert {span.name for span in otlp.spans()} == {"processOutputStream traced-echo"}
    finally:
        await _stop(proc)
        log.close()

    # The linked alternative: the clone's `npm ci` built dist/ (the `prepare` script).
    linked = tmp_path / "linked"
    linked.mkdir()
    script = "import { AgentClient } from '@treadle/client'; console.log(typeof AgentClient);"
    out = await asyncio.to_thread(sh, [
        "npm init -y >/dev/null && npm pkg set type=module",
        'npm install --no-audit --no-fund "$TREADLE/clients/typescript" >/dev/null',
        f'node --input-type=module -e "{script}"',
    ], linked, env, 300)
    assert out == "function\n"


async def _stop(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            await asyncio.wait_for(proc.wait(), 20)
        except ProcessLookupError:
            await proc.wait()
        except TimeoutError:
            os.killpg(proc.pid, signal.SIGKILL)
            await proc.wait()


def test_typescript_sdk_builds_and_tests_in_a_clone(clone: Path) -> None:
    """The README's Developing commands, as written, in ``clients/typescript`` of a fresh clone."""
    lines = [line.split("#")[0].strip() for line in block(TS, "sh", 2).strip().splitlines()]
    assert lines == ["npm ci", "npm test"]
    out = sh(lines, clone / "clients" / "typescript", env_for(clone), 900)
    assert (clone / "clients" / "typescript" / "dist" / "index.js").is_file()
    assert re.search(r"^(#|ℹ) fail 0$", out, re.M) and re.search(r"^(#|ℹ) pass [1-9]\d*$", out, re.M), out[-2000:]


async def test_go_installs_with_a_replace_line(server: Any, clone: Path, tmp_path: Path) -> None:
    s: Server = await server()
    s.agent("support", [Turn.say("On its way."), Turn.say(["Once ", "upon ", "a time."])])
    project = tmp_path / "app"
    project.mkdir()
    program = block(GO, "go", 0)
    # The agent client fragment (go block #1) is this program's body; only its address differs.
    for line in block(GO, "go", 1).strip().splitlines():
        expected = line.replace('treadle.Dial("127.0.0.1:50051")', 'treadle.Dial(os.Getenv("TREADLE_TARGET"))')
        assert expected.strip() in program, line
    (project / "main.go").write_text(program)
    setup, run = split_run(block(GO, "sh", 0), s.target)
    env = env_for(clone)
    env.pop("GOFLAGS", None)
    await asyncio.to_thread(sh, setup, project, env)
    go_mod = (project / "go.mod").read_text()
    assert f"github.com/treadle-dev/treadle/clients/go => {clone}/clients/go" in go_mod
    assert "require github.com/treadle-dev/treadle/clients/go v0.0.0-" in go_mod
    out = await asyncio.to_thread(sh, [run], project, env)
    assert out == "Once upon a time."


async def test_java_installs_into_the_local_maven_repository(server: Any, clone: Path, tmp_path: Path) -> None:
    s: Server = await server()
    s.agent("guarded", [Turn.say("Hello.")], input_processors=[ProcessorRef("content-filter")])
    project = tmp_path / "app"
    project.mkdir()
    (project / "pom.xml").write_text(block(JAVA, "xml", 0))
    # The README's first example: the file it shows (its imports included, its package left out).
    example = ROOT / "clients" / "java" / "src" / "test" / "java" / "dev" / "treadle" / "examples" / "ProcessorExample.java"
    source = example.read_text()
    assert block(JAVA, "java", 0) in source
    (project / "ProcessorExample.java").write_text(re.sub(r"^package [\w.]+;\n", "", source))
    setup, run = split_run(block(JAVA, "sh", 0), s.target)
    env = env_for(clone)
    await asyncio.to_thread(sh, setup, project, env)
    proc = await asyncio.create_subprocess_exec("bash", "-c", run, cwd=project, env=env,
                                                stdout=asyncio.subprocess.PIPE, start_new_session=True)
    try:
        assert proc.stdout is not None
        line = await asyncio.wait_for(proc.stdout.readline(), 120)
        assert line.decode().strip() == "ready"
        async with AgentClient(s.target) as client:
            blocked = await client.generate("guarded", "tell me the secret", timeout=30)
            passed = await client.generate("guarded", "hello", timeout=30)
        assert (blocked.tripwire.processor_id, blocked.tripwire.reason) == (
            "content-filter", "Blocked content detected in input")
        assert passed.text == "Hello." and not passed.HasField("tripwire")
    finally:
        if proc.returncode is None:
            os.killpg(proc.pid, signal.SIGTERM)  # the shell and the java it started
            try:
                await asyncio.wait_for(proc.wait(), 20)
            except TimeoutError:
                os.killpg(proc.pid, signal.SIGKILL)
                await proc.wait()


async def test_python_installs_with_pip(server: Any, clone: Path, tmp_path: Path) -> None:
    s: Server = await server()
    s.agent("assistant", [Turn.say(["Sunny ", "in Oslo."]), Turn.say("Rain tomorrow.")])
    project = tmp_path / "app"
    project.mkdir()
    (project / "client.py").write_text(block(PY, "python", 0))
    setup, run = split_run(block(PY, "sh", 0), s.target)
    env = env_for(clone)
    await asyncio.to_thread(sh, setup, project, env)
    env["TREADLE_TARGET"] = s.target
    out = await asyncio.to_thread(sh, [run], project, env, 120)
    first, second = out.splitlines()
    assert first == "Sunny in Oslo."
    assert second.startswith("Rain tomorrow. (") and second.endswith(" tokens)")
