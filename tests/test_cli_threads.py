"""``treadle threads list`` / ``treadle threads show`` as real processes against a server."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.conftest import StartApp
from tests.support import Turn
from tests.test_cli import READY_TIMEOUT, TREADLE, clean_env
from treadle.agents import Agent
from treadle.tools import Tool
from treadle_client import AgentClient


async def run_threads(target: str, *args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        *TREADLE, "threads", *args, "--target", target,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=clean_env(),
    )
    out, err = await asyncio.wait_for(proc.communicate(), READY_TIMEOUT * 2)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_threads_list_and_show_print_threads_and_messages(start_app: StartApp, openai_server: Any) -> None:
    server = openai_server([Turn.call("get_weather", {"city": "Paris"}), Turn.say("Sunny in Paris."),
                            Turn.say("Hello.")])

    def setup(app: Any) -> None:
        app.add_tool(Tool("get_weather", lambda args, ctx: {"sky": "sunny"}))
        app.add_agent(Agent(id="weather", model="openai/test", base_url=server.base_url, tools=["get_weather"]))

    running = await start_app(setup=setup)
    async with AgentClient(running.target) as client:
        await client.generate("weather", "Weather in Paris?", options={
            "memory": {"resource": "ada", "thread": {"id": "trip", "title": "Paris trip"}}})
        await client.generate("weather", "Hi", options={"memory": {"resource": "ada", "threadId": "chat"}})

    code, out, err = await run_threads(running.target, "list", "ada")
    assert code == 0, err
    lines = out.splitlines()
    assert [line.split()[0] for line in lines] == ["chat", "trip"]
    assert "Paris trip" in lines[1]

    code, out, err = await run_threads(running.target, "show", "ada", "trip")
    assert code == 0, err
    lines = [line.strip() for line in out.splitlines()]
    assert lines[:2] == ["thread trip: Paris trip", "user: Weather in Paris?"]
    assert 'assistant: → tool get_weather({"city": "Paris"})' in lines
    assert '← get_weather: {"sky": "sunny"}' in lines
    runs = lines.index("runs (1, newest first; `treadle runs show ada trip RUN` shows one):")
    assert lines[runs - 1].endswith("Sunny in Paris.")  # the messages, then the thread's runs
    assert lines[runs + 1].startswith("run_") and "  finished (stop)  " in lines[runs + 1]

    code, _, err = await run_threads(running.target, "show", "bob", "trip")
    assert code == 1 and "PERMISSION_DENIED" in err
