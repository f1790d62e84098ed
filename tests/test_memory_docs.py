"""docs/memory.md's examples run as written: the Python program with ``.venv/bin/python`` against
``treadle serve`` (whose ``assistant`` runs on the OpenAI wire fake), then the CLI commands."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.doc_blocks import DEFAULT_ADDRESS, block
from tests.support import Turn
from tests.support.terminal import Terminal
from treadle.api.convert import agent_from_dict
from treadle.config import load_agent_file

DOC = "docs/memory.md"
DOC_BLOCKS = {
    (DOC, "python", 0): "test_the_python_example_and_the_cli_show_the_conversation",
    (DOC, "sh", 0): "test_the_python_example_and_the_cli_show_the_conversation",
    (DOC, "yaml", 0): "test_the_settings_example_loads",
}


def test_the_python_example_and_the_cli_show_the_conversation(terminal: Terminal, openai_server: Any,
                                                              tmp_path: Path) -> None:
    fake = openai_server([Turn.say("Hello, Ada."), Turn.say("Your name is Ada.")])
    server = terminal.serve([".venv/bin/treadle", "serve"], OPENAI_BASE_URL=fake.base_url)
    script = tmp_path / "memory.py"
    script.write_text(block(DOC, "python").replace(DEFAULT_ADDRESS, terminal.target))
    done = terminal.run([".venv/bin/python", str(script)])
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "1 My name is Ada.", "2 Hello, Ada.", "1 What is my name?", "2 Your name is Ada."
    ]
    assert [m["content"] for m in fake.requests[1]["messages"]][1:] == ["My name is Ada.", "Hello, Ada.", "What is my name?"]

    listing, show = block(DOC, "sh").strip().splitlines()
    done = terminal.run(listing)  # finds the server through TREADLE_TARGET, as chat does
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("trip  Paris trip  (updated "), done.stdout
    done = terminal.run(show)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[:5] == [
        "thread trip: Paris trip", "user: My name is Ada.", "assistant: Hello, Ada.",
        "user: What is my name?", "assistant: Your name is Ada.",
    ]
    assert server.interrupt() == 0


def test_the_settings_example_loads(tmp_path: Path) -> None:
    path = tmp_path / "agents.yaml"
    path.write_text(block(DOC, "yaml"))
    [agent] = [agent_from_dict(d, source="config") for d in load_agent_file(path)]
    assert agent.memory.last_messages == 20
