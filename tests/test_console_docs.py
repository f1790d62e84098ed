"""docs/console.md: the start lines name the console, ``--console`` moves it, and the curl call
through its Connect gateway answers as shown. Each block runs as a user runs it, against a
server on this test's free ports."""

from __future__ import annotations

import json
import re

from tests.doc_blocks import block
from tests.support.terminal import Terminal, free_port

DOC = "docs/console.md"
DOC_BLOCKS = {
    (DOC, "text", 0): "test_the_start_lines_end_with_the_console_address",
    (DOC, "sh", 0): "test_the_console_flag_and_the_curl_call",
    (DOC, "sh", 1): "test_the_console_flag_and_the_curl_call",
}


def test_the_start_lines_end_with_the_console_address(terminal: Terminal) -> None:
    shown = block(DOC, "text", 0).splitlines()
    # The default: no TREADLE_CONSOLE, so the console takes the port after the gRPC one.
    server = terminal.serve([".venv/bin/treadle", "serve"], TREADLE_CONSOLE="", OPENAI_BASE_URL="http://127.0.0.1:9/v1")
    console = f"127.0.0.1:{terminal.port + 1}"
    line = server.wait_for("Console: ", stream="stdout")
    assert line == shown[-1].replace("127.0.0.1:50052", console)
    lines = server.stdout
    assert lines[0] == shown[0].replace("127.0.0.1:50051", terminal.target)
    assert lines[1] == shown[1]
    assert server.interrupt() == 0


def test_the_console_flag_and_the_curl_call(terminal: Terminal) -> None:
    port = free_port()
    command = block(DOC, "sh", 0).strip().replace("127.0.0.1:8080", f"127.0.0.1:{port}")
    server = terminal.serve(command, TREADLE_CONSOLE="", OPENAI_BASE_URL="http://127.0.0.1:9/v1")
    server.wait_for(f"Console: http://127.0.0.1:{port}/", stream="stdout")
    curl = block(DOC, "sh", 1).strip().replace("127.0.0.1:50052", f"127.0.0.1:{port}")
    done = terminal.run(curl)
    assert done.returncode == 0, done.stderr
    agents = json.loads(done.stdout)["agents"]
    assert [a["id"] for a in agents] == ["assistant"]
    assert re.fullmatch(r"[\w-]+/[\w.-]+", agents[0]["model"])
    assert server.interrupt() == 0
