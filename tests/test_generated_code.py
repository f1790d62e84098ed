"""The generated code (clients/python/treadle/v1/, clients/python/treadle_client/typed/_gen/,
clients/typescript/src/gen/, clients/go/gen/) is current, and the API's JSON contracts hold.

Regenerating needs buf and protoc-gen-es from `.ci/tools/node_modules` (CI runs
`npm ci --prefix .ci/tools` first), grpcio-tools and betterproto2-compiler (with its ruff) beside
the Python running the tests, and the Go plugins in .ci/tools/bin (.ci/go-tools).
"""

import difflib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from google.protobuf import json_format

from treadle.v1 import agent_service_pb2, chunk_pb2

ROOT = Path(__file__).resolve().parent.parent
BUF = ROOT / ".ci" / "tools" / "node_modules" / ".bin" / "buf"
# Every directory buf.gen.yaml writes, relative to the repository (and to `buf generate -o`).
GENERATED_DIRS = ["clients/python/treadle/v1", "clients/python/treadle_client/typed/_gen",
                  "clients/typescript/src/gen"]
# Go has its own template (managed mode) and plugins, installed by .ci/go-tools.
GO_TEMPLATE = ".ci/buf.gen.go.yaml"
GO_PLUGINS = [ROOT / ".ci" / "tools" / "bin" / n for n in ("protoc-gen-go", "protoc-gen-go-grpc")]
GENERATED_DIRS.append("clients/go/gen")


def _files(base: Path) -> dict[str, Path]:
    return {
        p.relative_to(base).as_posix(): p
        for p in sorted(base.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh `buf generate` of the whole buf.gen.yaml into a temporary directory."""
    tmp_path = tmp_path_factory.mktemp("generated")
    if not BUF.exists():
        pytest.fail(
            f"buf is not installed at {BUF.relative_to(ROOT)}; "
            "run `npm ci --prefix .ci/tools` (or .ci/gen) first"
        )
    env = dict(os.environ)
    # The plugin shim runs as `python` from PATH: make it this interpreter (it has grpcio-tools);
    # protoc-gen-python_betterproto2 and ruff are installed beside it.
    env["PATH"] = os.pathsep.join(
        [str(Path(sys.executable).parent), str(BUF.parent), env.get("PATH", "")]
    )
    proc = subprocess.run(
        [str(BUF), "generate", "-o", str(tmp_path)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, f"buf generate failed:\n{proc.stdout}{proc.stderr}"
    missing = [str(p.relative_to(ROOT)) for p in GO_PLUGINS if not p.exists()]
    if missing:
        pytest.fail(f"{', '.join(missing)} not installed; run .ci/go-tools (or .ci/gen) first")
    proc = subprocess.run(
        [str(BUF), "generate", "--template", GO_TEMPLATE, "-o", str(tmp_path)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, f"buf generate (Go) failed:\n{proc.stdout}{proc.stderr}"
    return tmp_path


@pytest.mark.parametrize("out", GENERATED_DIRS)
def test_generated_code_is_current(regenerated: Path, out: str) -> None:
    fresh = _files(regenerated / out)
    committed = _files(ROOT / out) if (ROOT / out).is_dir() else {}
    assert fresh, f"buf generate produced no files under {out}"
    problems = []
    for name in sorted(fresh.keys() - committed.keys()):
        problems.append(f"missing from {out}: {name}")
    for name in sorted(committed.keys() - fresh.keys()):
        problems.append(f"not generated (stale or handwritten): {out}/{name}")
    for name in sorted(fresh.keys() & committed.keys()):
        want = fresh[name].read_text(encoding="utf-8").splitlines(keepends=True)
        have = committed[name].read_text(encoding="utf-8").splitlines(keepends=True)
        if want != have:
            problems.append(
                "".join(
                    difflib.unified_diff(
                        have, want, f"committed/{name}", f"generated/{name}"
                    )
                )
            )
    assert not problems, (
        f"{out} differs from what proto/ generates; run .ci/gen\n\n"
        + "\n".join(problems)
    )


def test_create_agent_json_contract() -> None:
    request = json_format.Parse(
        '{"agent":{"id":"echo","name":"Echo","instructions":"You are terse.",'
        '"model":"openai/gpt-4o-mini"}}',
        agent_service_pb2.CreateAgentRequest(),
    )
    assert request.agent.id == "echo"
    assert request.agent.name == "Echo"
    assert request.agent.WhichOneof("instructions_kind") == "instructions"
    assert request.agent.instructions == "You are terse."
    assert request.agent.model == "openai/gpt-4o-mini"


def test_stream_request_json_contract() -> None:
    for cls in (agent_service_pb2.StreamRequest, agent_service_pb2.GenerateRequest):
        request = json_format.Parse('{"agentId":"echo","prompt":"hello"}', cls())
        assert request.agent_id == "echo"
        assert request.prompt == "hello"


def test_generate_and_stream_requests_match() -> None:
    def shape(cls):
        return [
            (f.name, f.number, f.type, f.message_type and f.message_type.full_name)
            for f in cls.DESCRIPTOR.fields
        ]

    assert shape(agent_service_pb2.GenerateRequest) == shape(agent_service_pb2.StreamRequest)


def test_chunk_oneof_names() -> None:
    oneof = chunk_pb2.Chunk.DESCRIPTOR.oneofs_by_name["chunk"]
    names = {f.name: f.json_name for f in oneof.fields}
    expected = [
        "start", "step_start", "text_start", "text_delta", "text_end", "reasoning_start",
        "reasoning_delta", "reasoning_end", "tool_call_input_streaming_start", "tool_call_delta",
        "tool_call_input_streaming_end", "tool_call", "tool_result", "tool_error", "source",
        "file", "response_metadata", "step_finish", "finish", "error", "abort", "tripwire",
        "data", "tool_output",
    ]  # fmt: skip
    assert sorted(names) == sorted(expected)
    contract = {
        "textDelta", "toolCall", "toolResult", "tripwire", "stepStart", "stepFinish", "finish",
        "error", "data",
    }  # fmt: skip
    assert contract <= set(names.values())


def test_chunk_envelope_json() -> None:
    chunk = json_format.Parse(
        '{"runId":"r1","from":"CHUNK_FROM_AGENT","textDelta":{"id":"t","text":"hi"}}',
        chunk_pb2.Chunk(),
    )
    assert getattr(chunk, "from") == chunk_pb2.CHUNK_FROM_AGENT
    assert chunk.WhichOneof("chunk") == "text_delta"
