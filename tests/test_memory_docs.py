"""docs/memory.md's examples run as written."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path
from typing import Any

from tests.conftest import StartApp
from tests.support import Turn
from treadle.agents import Agent
from treadle.api.convert import agent_from_dict
from treadle.config import load_agent_file

DOC = (Path(__file__).resolve().parent.parent / "docs" / "memory.md").read_text()


def blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", DOC, re.S)


async def test_the_python_example_carries_the_conversation(start_app: StartApp, openai_server: Any,
                                                           capsys: Any) -> None:
    server = openai_server([Turn.say("Hello, Ada."), Turn.say("Your name is Ada.")])

    def setup(app: Any) -> None:
        app.add_agent(Agent(id="assistant", model="openai/gpt-4o-mini", base_url=server.base_url))

    running = await start_app(setup)
    code = blocks("python")[0].replace("127.0.0.1:50051", running.target)
    namespace: dict[str, Any] = {}
    exec("async def example():\n" + textwrap.indent(code, "    "), namespace)
    await namespace["example"]()
    assert capsys.readouterr().out.splitlines() == [
        "1 My name is Ada.", "2 Hello, Ada.", "1 What is my name?", "2 Your name is Ada."
    ]
    assert [m["content"] for m in server.requests[1]["messages"]] == [
        "My name is Ada.", "Hello, Ada.", "What is my name?"
    ]
    assert running.app.store is not None
    thread = await running.app.store.get_thread("trip")
    assert thread is not None and thread.title == "Paris trip"


def test_the_settings_example_loads(tmp_path: Path) -> None:
    path = tmp_path / "agents.yaml"
    path.write_text(blocks("yaml")[0])
    [agent] = [agent_from_dict(d, source="config") for d in load_agent_file(path)]
    assert agent.memory.last_messages == 20
