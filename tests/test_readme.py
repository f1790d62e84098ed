"""The README's examples run as written: the processor example, the config file, the commands."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.support import Turn
from treadle.api.convert import agent_from_dict
from treadle.config import load_agent_file
from treadle.v1 import chunk_pb2
from treadle_client import AgentClient

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()


def block_after(heading: str, lang: str) -> str:
    section = README.split(f"## {heading}", 1)[1]
    match = re.search(rf"```{lang}\n(.*?)```", section, re.S)
    assert match, f"no {lang} block under {heading!r}"
    return match.group(1)


def test_quick_start_is_two_commands() -> None:
    quick = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"```sh\n(.*?)\n\s*```", quick, re.S)
    assert [c.strip() for c in commands] == [
        "python3 -m venv .venv && .venv/bin/pip install -e '.[dev]' && .venv/bin/treadle serve",
        "bash tests/run.sh",
    ]


def test_config_example_loads(tmp_path: Path) -> None:
    path = tmp_path / "agents.yaml"
    path.write_text(block_after("Configuration", "yaml"))
    agents = [agent_from_dict(d, source="config") for d in load_agent_file(path)]
    assert [a.id for a in agents] == ["echo", "poet"]
    assert agents[1].input_processors[0].id == "no-secrets"


async def test_processor_example_blocks_passwords(monkeypatch: pytest.MonkeyPatch, openai_server: Any) -> None:
    server = openai_server([Turn.say("Fine.")])
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    namespace: dict[str, Any] = {"__name__": "readme_example"}
    exec(compile(block_after("Writing a processor in Python", "python"), "README.md", "exec"), namespace)
    app = namespace["app"]
    port = await app.start("127.0.0.1:0")
    try:
        async with AgentClient(f"127.0.0.1:{port}") as client:
            blocked = await client.generate("careful", "my password is hunter2")
            assert blocked.finish_reason == chunk_pb2.FINISH_REASON_OTHER
            assert (blocked.tripwire.processor_id, blocked.tripwire.reason) == (
                "no-secrets", "prompts must not contain passwords",
            )
            fine = await client.generate("careful", "hello")
            assert fine.text == "Fine."
    finally:
        await app.stop(0)
    assert len(server.requests) == 1
