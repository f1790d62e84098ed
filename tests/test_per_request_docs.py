"""docs/per-request-agents.md's examples run as written: the config file under ``treadle serve``
with the OpenAI wire fake, the client program and its printed output, ``treadle agents show``,
the Python resolver process, and the agent defined with Python functions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.doc_blocks import DEFAULT_ADDRESS, block
from tests.support import OpenAIServer, Turn
from tests.support.terminal import Terminal
from treadle_client import AgentClient

DOC = "docs/per-request-agents.md"
DOC_BLOCKS = {
    (DOC, "yaml", 0): "test_the_variants_example_the_client_program_and_agents_show",
    (DOC, "python", 0): "test_the_variants_example_the_client_program_and_agents_show",
    (DOC, "text", 0): "test_the_variants_example_the_client_program_and_agents_show",
    (DOC, "sh", 0): "test_the_variants_example_the_client_program_and_agents_show",
    (DOC, "text", 1): "test_the_variants_example_the_client_program_and_agents_show",
    (DOC, "yaml", 1): "test_the_python_resolver_process_overrides_model_and_instructions",
    (DOC, "python", 1): "test_the_python_resolver_process_overrides_model_and_instructions",
    (DOC, "python", 2): "test_the_agent_written_with_python_functions",
}


def test_the_variants_example_the_client_program_and_agents_show(
    terminal: Terminal, openai_server: Any, tmp_path: Path,
) -> None:
    fake: OpenAIServer = openai_server([Turn.say("On its way."), Turn.say("Tomorrow.")])
    config = tmp_path / "agents.yaml"
    config.write_text(block(DOC, "yaml", 0))
    server = terminal.serve([".venv/bin/treadle", "serve", "--config", str(config)], OPENAI_BASE_URL=fake.base_url)
    script = tmp_path / "tiers.py"
    script.write_text(block(DOC, "python", 0).replace(DEFAULT_ADDRESS, terminal.target))
    done = terminal.run([".venv/bin/python", str(script)])
    assert done.returncode == 0, done.stderr
    assert done.stdout == block(DOC, "text", 0)
    assert [r["model"] for r in fake.requests] == ["gpt-4o", "gpt-4o-mini"]
    # Neither call is from an admin, billing, or a pro customer with 50 seats: no refund_order.
    assert [[t["function"]["name"] for t in r.get("tools", ())] for r in fake.requests] == [["search_docs"]] * 2

    shown = terminal.run(block(DOC, "sh", 0).strip())
    assert shown.returncode == 0, shown.stderr
    comments = [line for line in shown.stdout.splitlines() if line.startswith("# ")][1:]  # after "# source"
    assert "\n".join(comments) + "\n" == block(DOC, "text", 1)
    assert server.interrupt() == 0


async def test_the_python_resolver_process_overrides_model_and_instructions(
    terminal: Terminal, openai_server: Any, tmp_path: Path,
) -> None:
    fake: OpenAIServer = openai_server([Turn.say("Acme here."), Turn.say("Hello.")])
    config = tmp_path / "agents.yaml"
    config.write_text(block(DOC, "yaml", 1))
    terminal.serve([".venv/bin/treadle", "serve", "--config", str(config)], OPENAI_BASE_URL=fake.base_url,
                   TREADLE_PROCESSOR_ATTACH_WAIT="30")
    script = tmp_path / "tenant_router.py"
    script.write_text(block(DOC, "python", 1).replace(DEFAULT_ADDRESS, terminal.target))
    terminal.start([".venv/bin/python", str(script)])
    async with AgentClient(terminal.target) as client:  # the first call waits for it to attach
        await client.generate("routed", "Hi", options={"request_context": {"tenant": "acme"}}, timeout=60)
        await client.generate("routed", "Hi", options={"request_context": {"tenant": "globex"}})
    acme, globex = fake.requests
    assert acme["model"] == "gpt-4o" and globex["model"] == "gpt-4o-mini"
    assert acme["messages"][0]["content"] == "You answer for Acme (the agent's model was openai/gpt-4o-mini)."
    assert globex["messages"][0]["content"] == "You are a helpful assistant."


async def test_the_agent_written_with_python_functions(
    terminal: Terminal, openai_server: Any, tmp_path: Path,
) -> None:
    fake: OpenAIServer = openai_server([Turn.say("Hi Ada."), Turn.say("Hello.")])
    script = tmp_path / "support.py"
    script.write_text(block(DOC, "python", 2))
    terminal.serve([".venv/bin/python", str(script)], OPENAI_BASE_URL=fake.base_url)
    async with AgentClient(terminal.target) as client:
        await client.generate("support", "Hi", options={"request_context": {"tier": "pro", "user": "Ada"}})
        await client.generate("support", "Hi")
        [listed] = [a for a in await client.list_agents() if a.id == "support"]
    pro, anyone = fake.requests
    assert (pro["model"], pro["messages"][0]["content"]) == ("gpt-4o", "You help Ada. Be brief.")
    assert (anyone["model"], anyone["messages"][0]["content"]) == ("gpt-4o-mini", "You help a customer. Be brief.")
    assert listed.model == "" and listed.instructions == ""
