"""Every entry of ``examples/``, started with the command ``examples/README.md`` gives for it.

Servers get a free port through ``TREADLE_LISTEN`` and the CLI finds them through
``TREADLE_TARGET``; the remote examples get the address as their argument. Agents on the
embedded model answer for real (the model is tiny: the tests check that an answer streamed, not
what it says); the remote tool's agent runs on the OpenAI wire fake, which scripts the tool call.
"""

from __future__ import annotations

import json
import shutil
from typing import Any

import pytest

from tests.support import Turn
from tests.support.terminal import ROOT, Terminal

EXAMPLES = ROOT / "examples"
TSX = ROOT / "clients" / "typescript" / "node_modules" / ".bin" / "tsx"
BLOCKED = "✋ blocked by no-secrets: prompts must not contain passwords"
EXIT_TRIPWIRE = 3

GUARDS: dict[str, list[str]] = {
    "python": [".venv/bin/python", "examples/remote_guard.py"],
    "typescript": ["clients/typescript/node_modules/.bin/tsx", "examples/remote_guard.ts"],
    "go": ["go", "-C", "examples/remote_guard_go", "run", "."],
}


def chat(terminal: Terminal, *words: str) -> tuple[int, str, str]:
    done = terminal.run([".venv/bin/treadle", "chat", *words])
    return done.returncode, done.stdout, done.stderr


def test_server_with_processor(terminal: Terminal) -> None:
    server = terminal.serve([".venv/bin/python", "examples/server_with_processor.py"])
    assert "  careful: local/smollm2-135m-instruct (code)" in server.stdout
    code, out, err = chat(terminal, "careful", "my password is hunter2")
    assert (code, out.strip()) == (EXIT_TRIPWIRE, BLOCKED), err
    code, out, err = chat(terminal, "careful", "hello")
    assert code == 0 and out.strip(), err  # streamed by the embedded model
    assert server.interrupt() == 0


@pytest.mark.parametrize("language", sorted(GUARDS))
def test_config_file_with_the_remote_guard(terminal: Terminal, language: str) -> None:
    if language == "typescript" and not TSX.exists():
        pytest.fail("clients/typescript/node_modules is missing: run `npm ci --prefix clients/typescript`")
    if language == "go" and shutil.which("go") is None:
        pytest.fail("the `go` command is not on PATH: install Go 1.26+")
    server = terminal.serve([".venv/bin/treadle", "serve", "--config", "examples/agents.yaml"])
    server.wait_for("agent 'guarded' names processor(s) 'no-secrets'", stream="stderr")
    server.wait_for("agent 'clock' names tool(s) 'current_time'", stream="stderr")
    # Not attached yet: the fail-closed guard ends the run with an error naming it.
    code, out, err = chat(terminal, "guarded", "hello")
    assert code == 1 and "no-secrets" in err, (out, err)
    server.wait_for("of agent 'guarded' failed:", stream="stderr")

    guard = terminal.start([*GUARDS[language], terminal.target])
    guard.wait_for(f"processor no-secrets attached to {terminal.target}")
    code, out, err = chat(terminal, "guarded", "my", "password", "is", "hunter2")
    assert (code, out.strip()) == (EXIT_TRIPWIRE, BLOCKED), err
    if language == "python":  # one answer from the model is enough for the three
        code, out, err = chat(terminal, "guarded", "hello")
        assert code == 0 and out.strip(), err
    assert server.interrupt() == 0


def test_remote_tool(terminal: Terminal, openai_server: Any) -> None:
    fake = openai_server([Turn.call("current_time", {}), Turn.say("It is noon in UTC.")])
    server = terminal.serve([".venv/bin/treadle", "serve", "--config", "examples/agents.yaml"],
                            OPENAI_BASE_URL=fake.base_url)
    tool = terminal.start([".venv/bin/python", "examples/remote_tool.py", terminal.target])
    tool.wait_for(f"tool current_time attached to {terminal.target}")
    code, out, err = chat(terminal, "clock", "what time is it?")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "→ tool current_time({})"
    result = json.loads(lines[1].removeprefix("← current_time: "))
    assert set(result) == {"time", "zone"} and result["zone"] == "UTC"
    assert lines[2:] == ["It is noon in UTC."]
    tool_message = fake.requests[1]["messages"][-1]
    assert tool_message["role"] == "tool" and json.loads(tool_message["content"]) == result
    assert server.interrupt() == 0


def test_a_remote_guard_retries_a_server_that_is_not_up_yet_and_says_so(terminal: Terminal) -> None:
    guard = terminal.start([".venv/bin/python", "examples/remote_guard.py", terminal.target])
    # One line per failed try: two of them, then the server comes up and the guard attaches.
    line = guard.wait_for(f"processor no-secrets: cannot attach to {terminal.target}: UNAVAILABLE",
                          stream="stderr", count=2)
    assert "retrying in" in line
    terminal.serve([".venv/bin/treadle", "serve", "--config", "examples/agents.yaml"])
    guard.wait_for(f"processor no-secrets attached to {terminal.target}", stream="stderr")
    assert guard.interrupt() == 0


def test_every_example_is_listed_with_its_command() -> None:
    listing = (EXAMPLES / "README.md").read_text()
    entries = {p.name for p in EXAMPLES.iterdir() if p.name not in {"README.md", "package.json"}}
    for name in entries:
        assert f"[`{name}" in listing, f"examples/{name} is not in examples/README.md"

