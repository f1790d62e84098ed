"""Every fenced block of ``docs/``, ``examples/`` and ``clients/*/README.md`` is run by a test, the
way a user runs it; this module runs the ones no other module does.

Claims: see ``tests/doc_blocks.py`` (each test module lists the blocks it runs in ``DOC_BLOCKS``).
Python blocks are saved to the file name the text gives and started with ``.venv/bin/python``;
shell blocks run in bash from the repository's root; servers listen on a free port
(``TREADLE_LISTEN``), the command-line tools and examples find them through ``TREADLE_TARGET``,
and ``127.0.0.1:50051`` in a program becomes that port. Models are the OpenAI wire fake.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import secrets
from pathlib import Path
from typing import Any

import grpc
import pytest
import yaml
from google.protobuf import json_format

from tests.doc_blocks import DEFAULT_ADDRESS, ROOT, block, blocks, claims, documents
from tests.support import Turn
from tests.support.certs import TestCA
from tests.support.terminal import Terminal
from treadle.api.convert import agent_from_dict
from treadle.v1 import processor_service_pb2, processor_service_pb2_grpc

TSX = ROOT / "clients" / "typescript" / "node_modules" / ".bin" / "tsx"
BLOCKED = "✋ blocked by no-secrets: prompts must not contain passwords"
EXIT_TRIPWIRE = 3

SECURITY, PROCESSORS, PROTOCOL = "docs/security.md", "docs/processors.md", "docs/protocol.md"
GO_README = "clients/go/README.md"
DOC_BLOCKS = {
    (SECURITY, "sh", 0): "test_security_token_recipe_prints_a_digest",
    (SECURITY, "sh", 1): "test_security_tls_server_and_client",
    (SECURITY, "python", 0): "test_security_tls_server_and_client",
    (PROCESSORS, "python", 0): "test_processors_python_example_serves_and_blocks",
    (PROCESSORS, "sh", 0): "test_processors_builtin_served_remotely",
    (PROCESSORS, "yaml", 9): "test_processors_builtin_served_remotely",
    (PROTOCOL, "json", 0): "test_protocol_handshake_is_welcomed",
    (PROTOCOL, "sh", 0): "test_protocol_trying_it",
    ("docs/remote-processors.md", "yaml", 0): "test_remote_processors_parallel_group_loads",
    ("examples/README.md", "sh", 0): "test_examples_readme_commands",
    # go blocks #0 (a whole program) and #1 (its body) and the install commands: tests/test_sdk_install.py
    **{(GO_README, "go", i): "test_go_readme_fragments_are_compiled_examples" for i in range(2, 7)},
}


def test_every_block_is_run_by_a_test() -> None:
    claimed = claims()
    found = {b.key for f in documents() for b in blocks(f)}
    unclaimed = sorted(found - set(claimed))
    assert not unclaimed, "blocks run by no test (claim them in a test module's DOC_BLOCKS):\n" + "\n".join(
        f"  {file} {lang} block #{index}" for file, lang, index in unclaimed)
    stale = sorted(set(claimed) - found)
    assert not stale, "claims of blocks that do not exist:\n" + "\n".join(
        f"  {key} by {', '.join(claimed[key])}" for key in stale)


def program(tmp_path: Path, name: str, file: str, lang: str, index: int, target: str) -> Path:
    """The block saved as ``tmp_path/name``, pointed at ``target``."""
    path = tmp_path / name
    path.write_text(block(file, lang, index).replace(DEFAULT_ADDRESS, target))
    return path


def commands(text: str) -> list[str]:
    """A shell block's commands, one per line (continuations joined, comments kept)."""
    return [line for line in text.replace("\\\n", " ").splitlines() if line.strip()]


def chat(terminal: Terminal, *words: str) -> tuple[int, str, str]:
    done = terminal.run([".venv/bin/treadle", "chat", *words])
    return done.returncode, done.stdout, done.stderr


# --- docs/security.md ----------------------------------------------------------------------------


def test_security_token_recipe_prints_a_digest(terminal: Terminal) -> None:
    done = terminal.run(block(SECURITY, "sh", 0) + 'echo "$token"\n')
    assert done.returncode == 0, done.stderr
    digest, token = done.stdout.splitlines()
    assert digest == f"{hashlib.sha256(token.encode()).hexdigest()}  -"


def test_security_tls_server_and_client(terminal: Terminal, openai_server: Any, tmp_path: Path) -> None:
    fake = openai_server([Turn.say("hello over mutual TLS")])
    tokens = {name: secrets.token_urlsafe(16) for name in ("web-app", "guard-team", "ops")}
    config = block(SECURITY, "yaml", 0)
    for token in tokens.values():
        config = config.replace('"<hex>"', f'"{hashlib.sha256(token.encode()).hexdigest()}"', 1)
    (tmp_path / "server.yaml").write_text(config + "agents:\n  - {id: echo, model: openai/gpt-4o-mini}\n")
    ca = TestCA(tmp_path)
    server_pair, client_pair = ca.issue("server", server=True), ca.issue("client")
    for source, name in ((ca.cert, "ca.pem"), (ca.cert, "clients-ca.pem"), (client_pair.cert, "client.pem"),
                         (client_pair.key, "client.key"), (server_pair.key, "server.key")):
        (tmp_path / name).write_bytes(source.read_bytes())
    [serve] = commands(block(SECURITY, "sh", 1))
    assert serve.startswith(".venv/bin/treadle serve --listen 0.0.0.0:50051 ")
    serve = serve.replace(".venv/bin/treadle", str(ROOT / ".venv" / "bin" / "treadle"))
    serve = serve.replace("0.0.0.0:50051", f"0.0.0.0:{terminal.port}")
    server = terminal.start(serve, cwd=tmp_path, OPENAI_BASE_URL=fake.base_url)
    server.wait_for(f"Treadle listening on 0.0.0.0:{terminal.port}", stream="stdout")

    client = program(tmp_path, "tls_client.py", SECURITY, "python", 0, terminal.target)
    client.write_text(client.read_text().replace("treadle.internal:50051", f"localhost:{terminal.port}"))
    python = str(ROOT / ".venv" / "bin" / "python")
    done = terminal.run([python, "tls_client.py"], cwd=tmp_path, TREADLE_TOKEN=tokens["web-app"])
    assert (done.returncode, done.stdout) == (0, "hello over mutual TLS\n"), done.stderr
    done = terminal.run([python, "tls_client.py"], cwd=tmp_path)  # no token
    assert done.returncode == 1 and "UNAUTHENTICATED" in done.stderr, done.stderr
    assert server.interrupt() == 0


# --- docs/processors.md ----------------------------------------------------------------------------


def test_processors_python_example_serves_and_blocks(terminal: Terminal, openai_server: Any,
                                                      tmp_path: Path) -> None:
    fake = openai_server([Turn.say("Hello!")])
    script = program(tmp_path, "careful.py", PROCESSORS, "python", 0, terminal.target)
    server = terminal.serve([".venv/bin/python", str(script)], OPENAI_BASE_URL=fake.base_url)
    code, out, err = chat(terminal, "careful", "mail me at ada@example.com")
    assert (code, out.strip()) == (EXIT_TRIPWIRE, "✋ blocked by pii: PII detected in the input: email"), err
    code, out, err = chat(terminal, "careful", "hello")
    assert (code, out.strip()) == (0, "Hello!"), err
    assert server.interrupt() == 0


def test_processors_builtin_served_remotely(terminal: Terminal, openai_server: Any, tmp_path: Path) -> None:
    lane = yaml.safe_load(block(PROCESSORS, "yaml", 9))
    agent = {"id": "guarded", "model": "openai/gpt-4o-mini", **lane}
    (tmp_path / "agents.yaml").write_text(yaml.safe_dump({"agents": [agent]}))
    fake = openai_server([])
    server = terminal.serve([".venv/bin/treadle", "serve", "--config", str(tmp_path / "agents.yaml")],
                            OPENAI_BASE_URL=fake.base_url)
    [serve] = commands(block(PROCESSORS, "sh", 0))
    guard = terminal.start(serve.replace(DEFAULT_ADDRESS, terminal.target))
    guard.wait_for(f"serving pii (PII) on {terminal.target}")
    code, out, err = chat(terminal, "guarded", "mail me at ada@example.com")
    assert (code, out.strip()) == (EXIT_TRIPWIRE, "✋ blocked by pii: PII detected in the input: email"), err
    assert guard.interrupt() == 0
    assert server.interrupt() == 0


# --- docs/protocol.md and docs/remote-processors.md ------------------------------------------------


async def test_protocol_handshake_is_welcomed(start_app: Any) -> None:
    running = await start_app()
    request = json_format.Parse(block(PROTOCOL, "json", 0), processor_service_pb2.ProcessorServiceAttachRequest())
    async with grpc.aio.insecure_channel(running.target) as channel:
        call = processor_service_pb2_grpc.ProcessorServiceStub(channel).Attach()
        await call.write(request)
        reply = await asyncio.wait_for(call.read(), 10)
        call.cancel()
    assert reply.WhichOneof("message") == "welcome", reply
    assert reply.welcome.protocol_version == 1
    assert running.app.processors.declaration("no-secrets") is not None


def test_protocol_trying_it(terminal: Terminal) -> None:
    if not TSX.exists():
        pytest.fail("clients/typescript/node_modules is missing: run `npm ci --prefix clients/typescript`")
    serve, guard, ask = commands(block(PROTOCOL, "sh", 0))
    server = terminal.start(serve)
    server.wait_for(f"Treadle listening on {terminal.target}", stream="stdout")
    terminal.start(guard).wait_for(f"processor no-secrets attached to {terminal.target}")
    done = terminal.run(ask)
    assert (done.returncode, done.stdout.strip()) == (EXIT_TRIPWIRE, BLOCKED), done.stderr
    assert server.interrupt() == 0


def test_remote_processors_parallel_group_loads() -> None:
    lane = yaml.safe_load(block("docs/remote-processors.md", "yaml", 0))
    agent = agent_from_dict({"id": "a", "model": "openai/gpt-4o-mini", **lane}, source="config")
    refs = agent.input_processors
    assert [(r.id, r.parallel_group, r.with_model) for r in refs] == [
        ("pii-check", "guards", True), ("jailbreak-check", "guards", False), ("topic-check", "guards", False)]


# --- examples/README.md --------------------------------------------------------------------------


def test_examples_readme_commands(terminal: Terminal) -> None:
    serve, guard, blocked, answered = commands(block("examples/README.md", "sh", 0))
    server = terminal.start(serve)
    server.wait_for(f"Treadle listening on {terminal.target}", stream="stdout")
    terminal.start(guard).wait_for(f"processor no-secrets attached to {terminal.target}")
    done = terminal.run(blocked)
    assert (done.returncode, done.stdout.strip()) == (EXIT_TRIPWIRE, BLOCKED), done.stderr
    done = terminal.run(answered)
    assert done.returncode == 0 and done.stdout.strip(), done.stderr  # the embedded model answered
    assert server.interrupt() == 0


# --- the other SDKs' READMEs -----------------------------------------------------------------------


def _code(text: str) -> str:
    """Go code without comments and whitespace, so that a README fragment written on fewer lines
    matches the gofmt-ed example it was taken from."""
    return re.sub(r"\s+", "", re.sub(r"//[^\n]*", "", text))


def test_go_readme_fragments_are_compiled_examples() -> None:
    """Every line of the Go fragments is in ``clients/go/treadle/example_test.go``, which ``go vet``
    and ``go test`` (tests/run.sh) compile against the SDK (the examples check errors some
    fragments leave out, and may declare things in another order)."""
    examples = _code((ROOT / "clients" / "go" / "treadle" / "example_test.go").read_text())
    for b in blocks(GO_README):
        if b.lang != "go" or b.index == 0:  # the install section's whole program and commands
            continue
        for line in b.text.splitlines():
            assert _code(line) in examples, f"{GO_README} go block #{b.index}: {line!r} is not in example_test.go"


def test_java_dependency_is_the_built_artifact() -> None:
    """The README's pom.xml (run by tests/test_sdk_install.py) names the artifact the SDK builds."""
    pom_block = block("clients/java/README.md", "xml", 0)  # a whole project's pom.xml
    dependency = pom_block[pom_block.index("<dependency>"):pom_block.index("</dependency>")]
    pom = (ROOT / "clients" / "java" / "pom.xml").read_text()
    project = pom[:pom.index("<dependencies>")] if "<dependencies>" in pom else pom
    for tag in ("groupId", "artifactId", "version"):
        [value] = re.findall(rf"<{tag}>(.*?)</{tag}>", dependency)
        assert f"<{tag}>{value}</{tag}>" in project, (tag, value)
