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
    (GO, "go", 0): "test_go_installs_with_a_replace_line",
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


async def test_typescript_installs_from_a_packed_tarball(server: Any, clone: Path, tmp_path: Path) -> None:
    s: Server = await server()
    s.agent("assistant", [Turn.say(["Hello", " there"])], input_processors=[SecretFilter()])
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


async def test_go_installs_with_a_replace_line(server: Any, clone: Path, tmp_path: Path) -> None:
    s: Server = await server()
    s.agent("support", [Turn.say("On its way."), Turn.say(["Once ", "upon ", "a time."])])
    project = tmp_path / "app"
    project.mkdir()
    (project / "main.go").write_text(block(GO, "go", 0))
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
