"""docs/sub-agents.md's examples run as written: the team's config file under ``treadle serve``
with the client program, the remote-server config against a second server, and the supervisor
server program, each against the OpenAI wire fake."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.doc_blocks import DEFAULT_ADDRESS, block
from tests.support import OpenAIServer, Turn
from tests.support.terminal import Terminal
from tests.test_cli import ServeProcess, clean_env
from tests.test_subagents import kinds, routed, stream

DOC = "docs/sub-agents.md"
DOC_BLOCKS = {
    (DOC, "yaml", 0): "test_the_team_config_and_the_client_program_show_who_speaks",
    (DOC, "python", 0): "test_the_team_config_and_the_client_program_show_who_speaks",
    (DOC, "yaml", 1): "test_the_remote_server_config_delegates_to_the_second_server",
    (DOC, "python", 1): "test_the_supervisor_rejects_changes_and_feeds_back",
}


def test_the_team_config_and_the_client_program_show_who_speaks(
    terminal: Terminal, openai_server: Any, tmp_path: Path
) -> None:
    step = routed({
        "You lead": [Turn.call("agent-research", {"prompt": "Facts about tides."}),
                     Turn.say(["Note: ", "tides follow the moon."])],
        "You research.": [Turn.say(["Tides ", "follow the moon."])],
    })
    fake: OpenAIServer = openai_server([step] * 3)
    config = tmp_path / "team.yaml"
    config.write_text(block(DOC, "yaml", 0))
    server = terminal.serve([".venv/bin/treadle", "serve", "--config", str(config)], OPENAI_BASE_URL=fake.base_url)
    script = tmp_path / "who.py"
    script.write_text(block(DOC, "python", 0).replace(DEFAULT_ADDRESS, terminal.target))

    done = terminal.run([".venv/bin/python", str(script)])

    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "agent-research: Tides ", "agent-research: follow the moon.", "lead: Note: ", "lead: tides follow the moon.",
    ]
    tools = {t["function"]["name"]: t["function"]["description"] for t in fake.requests[0]["tools"]}
    assert tools == {"agent-research": "Finds facts and cites them.",
                     "agent-write": "Turns notes into a short article."}
    assert server.interrupt() == 0


def test_the_remote_server_config_delegates_to_the_second_server(
    terminal: Terminal, openai_server: Any, tmp_path: Path
) -> None:
    step = routed({
        "You lead": [Turn.call("agent-research", {"prompt": "Facts about tides."}), Turn.say("Done.")],
        "You research.": [Turn.say(["Tides ", "follow the moon."])],
    })
    fake: OpenAIServer = openai_server([step] * 3)
    (tmp_path / "researcher.json").write_text(json.dumps({"agents": [
        {"id": "researcher", "instructions": "You research.", "model": "openai/gpt-4o-mini"}]}))
    research = ServeProcess("--config", str(tmp_path / "researcher.json"),
                            env=clean_env(OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY="sk-test"))
    try:
        research.wait_ready()
        config = tmp_path / "lead.yaml"
        config.write_text(block(DOC, "yaml", 1).replace("127.0.0.1:7001", research.target))
        server = terminal.serve([".venv/bin/treadle", "serve", "--config", str(config)],
                                OPENAI_BASE_URL=fake.base_url, RESEARCH_TOKEN="not-checked-there")

        chunks = stream(terminal.target, "lead", "Go.")

        assert [t["function"]["description"] for t in fake.requests[0]["tools"]] == ["Finds facts and cites them."]
        k = kinds(chunks)
        assert k.index("toolOutput:textDelta") < k.index("toolResult") < k.index("textDelta")
        assert next(c["toolResult"] for c in chunks if "toolResult" in c)["result"] == {"text": "Tides follow the moon."}
        assert server.interrupt() == 0
    finally:
        research.close()


def test_the_supervisor_rejects_changes_and_feeds_back(terminal: Terminal, openai_server: Any, tmp_path: Path) -> None:
    step = routed({
        "": [Turn.call("agent-research", {"prompt": "What is the admin password?"}),
             Turn.call("agent-research", {"prompt": "Facts about tides."}), Turn.say("Done.")],
    })
    research = routed({"You research.": [Turn.say("Tides follow the moon.")]})

    def either(body: dict[str, Any]) -> Turn:
        first = body["messages"][0]
        return research(body) if first["role"] == "system" and first["content"] == "You research." else step(body)

    fake: OpenAIServer = openai_server([either] * 4)
    script = tmp_path / "supervised.py"
    script.write_text(block(DOC, "python", 1))
    server = terminal.serve([".venv/bin/python", str(script)], OPENAI_BASE_URL=fake.base_url)

    chunks = stream(terminal.target, "lead", "Tell me about tides.")

    assert "".join(c["textDelta"]["text"] for c in chunks if "textDelta" in c) == "Done."
    rejected, delegated, after = fake.requests[1], fake.requests[2], fake.requests[3]
    assert rejected["messages"][-1]["content"] == "[Delegation Rejected] credentials stay with the lead"
    assert [m["content"] for m in delegated["messages"]] == [
        "You research.", "Answer in at most three sentences.", "Facts about tides."]
    assert after["messages"][-2]["role"] == "tool" and after["messages"][-1]["role"] == "assistant"
    assert after["messages"][-1]["content"].startswith("research answered in ")
    assert server.interrupt() == 0
