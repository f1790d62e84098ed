"""The Go SDK's tool server and agent client against a real server, in one Go process.

``clients/go/internal/toolsclient`` (built once per session with ``go build``) serves the
``go-weather`` tool with ``treadle.ServeTools``, then streams and generates with ``treadle.Dial``;
the model is the wire-level OpenAI fake. The processor SDK is exercised by
``tests/test_go_processor.py``; its protocol details by ``go test ./...`` in ``clients/go``.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.support import OpenAIServer, Turn
from tests.support.go import GoBuild
from treadle.agents import Agent
from treadle.app import TreadleApp
from treadle.config import Settings


@pytest.fixture(scope="session")
def toolsclient(go_build: GoBuild) -> Path:
    return go_build("toolsclient")


async def test_go_tool_and_go_client_in_one_run(toolsclient: Path) -> None:
    model = OpenAIServer([Turn.call("go-weather", {"city": "Oslo"}), Turn.say("Clear in Oslo."),
                          Turn.say("Still clear.")])
    app = TreadleApp(Settings(listen="127.0.0.1:0", example_agent=False), env={})
    port = await app.start()
    try:
        app.add_agent(Agent(id="weather", name="Weather", model="openai/test-model",
                            base_url=model.base_url, tools=["go-weather"]))
        proc = await asyncio.create_subprocess_exec(
            str(toolsclient), f"127.0.0.1:{port}", "weather", stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        stdout, stderr = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 0, stderr.decode()
        out = json.loads(stdout)
        assert out["tool_results"] == [{"city": "Oslo", "sky": "clear"}]
        assert out["progress"] == [{"city": "Oslo"}]
        assert out["stream_text"] == "Clear in Oslo."
        assert out["generate_text"] == "Still clear."
        # The model received the Go tool's result as the tool message.
        tool_message = [m for m in model.requests[1]["messages"] if m["role"] == "tool"][0]
        assert json.loads(tool_message["content"]) == {"city": "Oslo", "sky": "clear"}
    finally:
        model.close()
        await app.stop(0)


def test_each_readme_go_block_is_compiled_by_the_example_test() -> None:
    """Every ``go`` block of ``clients/go/README.md`` marked as compiled by ``example_test.go`` is
    there, paragraph by paragraph (spacing and comments aside), and that file compiles."""
    go_dir = Path(__file__).resolve().parent.parent / "clients" / "go"

    def norm(code: str) -> str:
        return re.sub(r"\s+", "", re.sub(r"//[^\n]*", "", code))

    readme = (go_dir / "README.md").read_text()
    example = norm((go_dir / "treadle" / "example_test.go").read_text())
    blocks = re.findall(r"<!-- compiled by clients/go/treadle/example_test.go[^\n]*\n```go\n(.*?)```", readme, re.S)
    assert len(blocks) == len(re.findall(r"```go\n", readme)) - 1  # all but the install example
    for block in blocks:
        for paragraph in re.split(r"\n\s*\n", block):
            assert norm(paragraph) in example, paragraph
    done = subprocess.run(["go", "vet", "./treadle"], cwd=go_dir, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
