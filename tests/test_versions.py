"""Versions in process and in the docs: the run's span names the version it resolved, the config
file's editor forms, the resolution seam other run paths call, and docs/versions.md's examples as
a user runs them (the Python program and the CLI against ``treadle serve``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.doc_blocks import DEFAULT_ADDRESS, block
from tests.harness import Harness, harness_factory  # noqa: F401 - a fixture
from tests.support import Turn
from tests.support.databases import Database
from tests.support.terminal import Terminal
from treadle.agents import Editor
from treadle.api.convert import agent_from_dict
from treadle.config import load_agent_file
from treadle.core.errors import FailedPreconditionError, InvalidArgumentError, NotFoundError
from treadle.core.messages import SystemMessage
from treadle.memory import open_store
from treadle.memory.version_sql import SqlVersionStore
from treadle.versions import AgentVersion, Override, VersionResolver

DOC = "docs/versions.md"
DOC_BLOCKS = {
    (DOC, "yaml", 0): "test_the_documented_editor_policies_load",
    (DOC, "python", 0): "test_the_python_example_and_the_cli_draft_publish_and_roll_back",
    (DOC, "sh", 0): "test_the_python_example_and_the_cli_draft_publish_and_roll_back",
}


def test_the_documented_editor_policies_load(tmp_path: Path) -> None:
    path = tmp_path / "agents.yaml"
    path.write_text(block(DOC, "yaml"))
    agents = {a.id: a for a in (agent_from_dict(d, source="config") for d in load_agent_file(path))}
    assert agents["support"].editor == Editor()
    assert agents["billing"].editor == Editor(instructions=True, tools="descriptions")
    assert agents["compliance"].editor == Editor(locked=True)
    assert agents["concierge"].editor.owns_instructions(agents["concierge"])


def test_a_malformed_editor_is_refused_naming_it() -> None:
    base = {"id": "a", "model": "openai/gpt-4o-mini"}
    with pytest.raises(InvalidArgumentError, match="editor.tools: unknown key 'names'"):
        agent_from_dict({**base, "editor": {"tools": {"names": True}}}, source="config")
    with pytest.raises(InvalidArgumentError, match="editor"):
        agent_from_dict({**base, "editor": "yes"}, source="config")


async def test_the_run_span_names_the_version_and_the_seam_resolves_it(
    harness_factory: Any, database: Database
) -> None:
    h: Harness = harness_factory([Turn.say("ok"), Turn.say("ok")])
    store = await open_store(database.url)
    try:
        versions = SqlVersionStore(store.engine)
        h.loop.versions = VersionResolver(versions)
        agent = h.agent(id="spanned", instructions="v0")
        made = await versions.add_version(AgentVersion("agv_1", "spanned", 0, "draft", Override(
            instructions=[SystemMessage("v1")]), "first", "ops"), publish=True)
        await h.generate(agent, "hi")
        assert h.bodies()[-1]["messages"][0] == {"role": "system", "content": "v1"}
        [span] = [s for s in h.spans() if s.name.startswith("invoke_agent")]
        assert dict(span.attributes or {}).items() >= {
            "treadle.agent.version.id": made.id, "treadle.agent.version.number": 1,
            "treadle.agent.version.selection": "published"}.items()

        # The seam a run path of its own calls (a sub-agent call, a scorer's judge).
        resolved, version = await h.loop.resolve_version(agent, "v1")
        assert resolved.instructions == [SystemMessage("v1")] and version is not None and version.number == 1
        assert agent.instructions == [SystemMessage("v0")]  # the definition is untouched
        with pytest.raises(NotFoundError, match="agent 'spanned' has no draft"):
            await h.loop.resolve_version(agent, "draft")
        locked = h.agent(id="spanned", instructions="v0", editor=Editor(locked=True))
        resolved, version = await h.loop.resolve_version(locked, None)
        assert resolved.instructions == [SystemMessage("v0")] and version is not None and not version.version_id
        owned = h.agent(id="nobody", instructions=[], editor=Editor(instructions=True))
        with pytest.raises(FailedPreconditionError, match="agent 'nobody' has no instructions"):
            await h.generate(owned, "hi")
        await h.generate(agent, "hi", version="published")
        assert h.bodies()[-1]["messages"][0]["content"] == "v1"
    finally:
        await store.close()


def test_the_python_example_and_the_cli_draft_publish_and_roll_back(
    terminal: Terminal, openai_server: Any, tmp_path: Path
) -> None:
    fake = openai_server([Turn.say("Ahoy!"), Turn.say("Hello."), Turn.say("Ahoy there!")])
    server = terminal.serve([".venv/bin/treadle", "serve"], OPENAI_BASE_URL=fake.base_url)
    script = tmp_path / "versions.py"
    script.write_text(block(DOC, "python").replace(DEFAULT_ADDRESS, terminal.target))
    done = terminal.run([".venv/bin/python", str(script)])
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "draft: Ahoy!", "published: Hello.", "published: Ahoy there!", "v1 pirate voice by anonymous"]
    pirate = "You are a pirate. Answer in one sentence."
    assert [r["messages"][0]["content"] for r in fake.requests] == [
        pirate, "You are a helpful, concise assistant.", pirate]

    listing, publish = block(DOC, "sh").strip().splitlines()
    done = terminal.run(listing)
    assert done.returncode == 0, done.stderr
    header, row = done.stdout.splitlines()
    assert header.split() == ["VERSION", "STATE", "AUTHOR", "CREATED", "MESSAGE"]
    assert row.split()[:3] == ["v1", "published", "anonymous"] and row.endswith("pirate voice")
    done = terminal.run(publish)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("agent assistant: v1 is published")
    assert server.interrupt() == 0
