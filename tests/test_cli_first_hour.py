"""What a new user meets in the first hour, as they meet it: Ctrl-C in ``treadle chat`` (in a real
terminal), ``treadle runs``, ``treadle health``, the server's run log lines and log options, and
messages that say what to do, each with its exact text."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import re
from pathlib import Path
from typing import Any

import yaml

from tests.conftest import StartApp
from tests.support import OpenAIServer, Turn
from tests.support.certs import TestCA
from tests.support.terminal import ROOT, Terminal, free_port
from tests.support.tmux import Pane
from tests.test_cli import run_cli
from treadle.agents import Agent
from treadle.providers.base import ModelConfig

STORY = [f"word{i} " for i in range(200)]


# --- Ctrl-C in a conversation ------------------------------------------------------------------


def test_ctrl_c_stops_an_answer_and_clears_the_prompt_and_the_conversation_goes_on(
    terminal: Terminal, openai_server: Any
) -> None:
    fake = openai_server([Turn.say(STORY, pace=0.1), Turn.say("Still here.")])
    server = terminal.serve([".venv/bin/treadle", "serve"], OPENAI_BASE_URL=fake.base_url)
    pane = Pane(".venv/bin/treadle chat assistant --thread t1 --resource ada", cwd=ROOT,
                env=terminal.env | {"TERM": "xterm"})
    try:
        pane.wait_for(lambda t: t.endswith("you>"), "the prompt")
        pane.type("tell me a story")
        pane.keys("Enter")
        pane.wait_for(lambda t: "word3 " in t, "the answer streaming")
        pane.keys("C-c")  # while it streams
        text = pane.wait_for(lambda t: "(answer stopped)" in t and t.endswith("you>"), "a new prompt")
        assert "word199" not in text
        pane.type("are you there?")
        pane.keys("Enter")
        pane.wait_for(lambda t: "Still here." in t and t.endswith("you>"), "the next answer")
        pane.type("never sent")
        pane.keys("C-c")  # at the prompt: the line is dropped, a new prompt
        pane.wait_for(lambda t: t.count("you>") == 4 and t.endswith("you>"), "a fresh prompt")
        pane.keys("C-d")
        text = pane.wait_for(lambda t: "[exit 0]" in t, "the conversation ending with status 0")
    finally:
        pane.close()
    assert "Traceback" not in text and "KeyboardInterrupt" not in text, text
    assert len(fake.requests) == 2  # the dropped line was never sent
    # The second answer saw the first question: one conversation on one thread.
    assert [m["content"] for m in fake.requests[1]["messages"] if m["role"] == "user"] == [
        "tell me a story", "are you there?"]
    done = terminal.run([".venv/bin/treadle", "runs", "list", "ada", "t1"])
    statuses = [line.split()[2] for line in done.stdout.splitlines()]
    assert statuses == ["finished", "aborted"], done.stdout  # newest first
    assert server.interrupt() == 0


def test_ctrl_c_during_a_single_answer_exits_130_without_a_traceback(terminal: Terminal, openai_server: Any) -> None:
    fake = openai_server([Turn.say(STORY, pace=0.1)])
    terminal.serve([".venv/bin/treadle", "serve"], OPENAI_BASE_URL=fake.base_url)
    pane = Pane(".venv/bin/treadle chat assistant tell me a story", cwd=ROOT, env=terminal.env | {"TERM": "xterm"})
    try:
        pane.wait_for(lambda t: "word3 " in t, "the answer streaming")
        pane.keys("C-c")
        text = pane.wait_for(lambda t: "[exit 130]" in t, "exit status 130")
    finally:
        pane.close()
    assert "interrupted" in text and "Traceback" not in text, text


# --- runs, threads, health ----------------------------------------------------------------------


def test_runs_list_and_show_and_threads_show_lists_runs(terminal: Terminal, openai_server: Any) -> None:
    fake = openai_server([Turn.call("lookup", {"q": "x"}), Turn.say("Done."), Turn.say("Again.")])
    agents = {"agents": [{"id": "helper", "model": "openai/gpt-4o-mini", "tools": ["lookup"],
                          "inputProcessors": [{"builtin": "unicode-normalizer"}],
                          "outputProcessors": [{"builtin": "pii"}]}]}
    path = Path(terminal.env["TREADLE_DATA_DIR"]) / "agents.yaml"
    path.write_text(yaml.safe_dump(agents))
    server = terminal.serve([".venv/bin/treadle", "serve", "--config", str(path)], OPENAI_BASE_URL=fake.base_url)
    tool = terminal.start([".venv/bin/python", "-c", _LOOKUP_TOOL, terminal.target])
    tool.wait_for("attached")
    assert terminal.run([".venv/bin/treadle", "chat", "helper", "find x", "--thread", "t", "--resource", "r"]).returncode == 0
    assert terminal.run([".venv/bin/treadle", "chat", "helper", "again", "--thread", "t", "--resource", "r"]).returncode == 0

    listing = terminal.run([".venv/bin/treadle", "runs", "list", "r", "t"])
    assert listing.returncode == 0, listing.stderr
    lines = listing.stdout.splitlines()
    assert len(lines) == 2 and all(" helper  finished (stop)  " in line for line in lines), lines
    assert all(re.search(r" UTC, \d+\.\d\d s, tokens \d+ in / \d+ out$", line) for line in lines), lines
    older = lines[1].split()[0]
    shown = terminal.run([".venv/bin/treadle", "runs", "show", "r", "t", older])
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout.splitlines()
    assert out[0] == f"run {older}" and out[1] == "  agent:    helper" and out[2] == "  thread:   t (resource r)"
    assert out[3] == "  status:   finished (stop)" and out[7] == "  steps:    2"
    number = r"\d+\.\d\d"
    hook = rf"  · (\S+) (\w+): (\d+) calls?, ({number}) ms \((.*)\)"
    step = rf"step (\d)  ({number}) s  gpt-4o-mini  (\S+), tokens \d+ in / \d+ out"
    hooks = [m.groups() for line in out if (m := re.fullmatch(hook, line))]
    assert all(float(h[3]) >= 0 and int(h[2]) >= 1 for h in hooks), hooks
    assert out[8:10] == ["  hooks outside steps (processInput, processOutputResult):",
                         "  · unicode-normalizer processInput: 1 call, " + out[9].split(", ", 1)[1]]
    first_step = out.index(next(line for line in out if line.startswith("step 1  ")))
    assert out[first_step + 1].startswith("  · pii processOutputStream: ")  # one line per step, not per chunk
    assert sum(h[:2] == ("pii", "processOutputStream") for h in hooks) == 2, hooks
    steps = [m.groups() for line in out if (m := re.fullmatch(step, line))]
    assert [(s[0], s[2]) for s in steps] == [("1", "tool-calls"), ("2", "stop")], out
    assert all(float(s[1]) > 0 for s in steps), steps
    messages = [line for line in out[8:] if not re.fullmatch(hook, line) and not line.startswith("  hooks ")]
    assert [re.sub(r"^step (\d).*", r"step \1", line) for line in messages] == [
        "user: find x", "step 1", 'assistant: → tool lookup({"q": "x"})',
        '           ← lookup: {"found": "x"}', "step 2", "assistant: Done."]
    missing = terminal.run([".venv/bin/treadle", "runs", "show", "r", "t", "run_nope"])
    assert missing.returncode == 1
    assert missing.stderr.startswith("treadle runs: no run 'run_nope' on thread 't' (newest: ")

    thread = terminal.run([".venv/bin/treadle", "threads", "show", "r", "t"])
    assert "runs (2, newest first; `treadle runs show r t RUN` shows one):" in thread.stdout
    assert sum(line.startswith("  run_") for line in thread.stdout.splitlines()) == 2
    assert tool.interrupt() == 0
    assert server.interrupt() == 0


_LOOKUP_TOOL = """
import sys
from treadle_client import run_tools, tool

@tool("lookup", "Looks a thing up", {"type": "object"})
def lookup(args, ctx):
    return {"found": args["q"]}

run_tools([lookup], sys.argv[1])
"""


def test_threads_honours_treadle_target(terminal: Terminal) -> None:
    terminal.serve([".venv/bin/treadle", "serve"])
    done = terminal.run([".venv/bin/treadle", "threads", "list", "nobody"])  # TREADLE_TARGET only
    assert (done.returncode, done.stdout) == (0, "no threads for resource 'nobody'\n"), done.stderr
    away = terminal.run([".venv/bin/treadle", "threads", "list", "nobody"], TREADLE_TARGET="127.0.0.1:9")
    assert away.returncode == 1
    assert away.stderr.strip().endswith(
        "(is `treadle serve` running at 127.0.0.1:9? --target or TREADLE_TARGET names another server)")


def test_health_answers_for_probes(terminal: Terminal) -> None:
    server = terminal.serve([".venv/bin/treadle", "serve"])
    done = terminal.run([".venv/bin/treadle", "health"])
    assert (done.returncode, done.stdout) == (0, f"{terminal.target}: SERVING\n"), done.stderr
    assert server.interrupt() == 0
    done = terminal.run([".venv/bin/treadle", "health", "--timeout", "1"])
    assert done.returncode == 1 and done.stderr.startswith(f"{terminal.target}: not reachable: UNAVAILABLE")


# --- the server's log ---------------------------------------------------------------------------


def test_each_run_leaves_one_info_line_and_json_logs_carry_its_fields(terminal: Terminal, openai_server: Any) -> None:
    fake = openai_server([Turn.say("Hi."), Turn.say("Hi again.")])
    server = terminal.serve([".venv/bin/treadle", "serve", "--log-format", "json"], OPENAI_BASE_URL=fake.base_url)
    assert terminal.run([".venv/bin/treadle", "chat", "assistant", "hello", "--thread", "t9"]).returncode == 0
    line = server.wait_for('"logger": "treadle.runs"', stream="stderr")
    record = json.loads(line)
    assert record["level"] == "INFO" and record["agent_id"] == "assistant" and record["thread_id"] == "t9"
    assert (record["status"], record["finish_reason"]) == ("finished", "stop")
    assert record["run_id"].startswith("run_") and isinstance(record["duration_ms"], int)
    assert record["input_tokens"] >= 0 and record["output_tokens"] >= 0
    assert record["message"].startswith(f"run {record['run_id']} agent=assistant thread=t9 finished (stop) in ")
    for other in server.stderr:  # every line is JSON, none is alembic's
        assert json.loads(other)["logger"] != "alembic", other
    assert server.interrupt() == 0

    quiet = terminal.serve([".venv/bin/treadle", "serve", "--log-level", "warning"], OPENAI_BASE_URL=fake.base_url)
    assert terminal.run([".venv/bin/treadle", "chat", "assistant", "hello"]).returncode == 0
    assert quiet.interrupt() == 0
    assert not [line for line in quiet.stderr if "treadle.runs" in line], quiet.stderr


def test_a_bad_log_option_says_the_choices(terminal: Terminal) -> None:
    done = terminal.run([".venv/bin/treadle", "serve"], TREADLE_LOG_FORMAT="yaml")
    assert (done.returncode, done.stderr.strip()) == (
        2, "treadle serve: log format 'yaml' is not one of text, json")


async def test_a_cancelled_and_a_blocked_run_are_logged_too(start_app: StartApp, caplog: Any) -> None:
    from treadle_client import AgentClient

    class Stop:
        id = "stop"

        def process_input(self, args: Any) -> Any:
            args.abort("no")

    model = OpenAIServer([])
    try:
        def setup(app: Any) -> None:
            app.add_processor(Stop())
            app.add_agent(Agent(id="a", model="openai/m", base_url=model.base_url, input_processors=["stop"]))

        running = await start_app(setup)
        with caplog.at_level(logging.INFO, logger="treadle.runs"):
            async with AgentClient(running.target) as client:
                await client.generate("a", "hi")
    finally:
        model.close()
    [record] = [r for r in caplog.records if r.name == "treadle.runs"]
    fields = record.fields
    assert (fields["agent_id"], fields["status"], fields["finish_reason"]) == ("a", "aborted", "other")


# --- messages that say what to do ---------------------------------------------------------------


async def test_a_wrong_agent_id_lists_the_agents_and_suggests_the_nearest(start_app: StartApp) -> None:
    running = await start_app(lambda app: [app.add_agent(Agent(id=i, model="openai/m")) for i in ("assistant", "echo")])
    done = await asyncio.to_thread(run_cli, "chat", "asistant", "hi", TREADLE_TARGET=running.target)
    assert (done.returncode, done.stderr.strip()) == (1, (
        "treadle chat: NOT_FOUND: agent 'asistant' not found; did you mean 'assistant'? "
        "This server has: assistant, echo"))
    done = await asyncio.to_thread(run_cli, "agents", "show", "zzz", TREADLE_TARGET=running.target)
    assert done.stderr.strip() == "treadle agents: NOT_FOUND: agent 'zzz' not found. This server has: assistant, echo"


async def test_chat_takes_the_message_after_its_options_too(start_app: StartApp) -> None:
    model = OpenAIServer([Turn.say("Hi.")])
    try:
        running = await start_app(lambda app: app.add_agent(Agent(id="a", model="openai/m", base_url=model.base_url)))
        done = await asyncio.to_thread(run_cli, "chat", "a", "--thread", "t", "hello", "there",
                                       TREADLE_TARGET=running.target)
    finally:
        model.close()
    assert (done.returncode, done.stdout) == (0, "Hi.\n"), done.stderr
    assert [m["content"] for m in model.requests[0]["messages"] if m["role"] == "user"] == ["hello there"]
    done = await asyncio.to_thread(run_cli, "agents", "extra")
    assert done.returncode == 2 and "invalid choice: 'extra'" in done.stderr


def test_chat_without_arguments_asks_for_the_agent() -> None:
    done = run_cli("chat")
    assert (done.returncode, done.stderr.strip()) == (2, (
        "treadle chat: name the agent to talk to: treadle chat AGENT [MESSAGE...] "
        "(`treadle agents` lists the server's agents)"))


async def test_an_unreachable_provider_names_the_url_and_where_it_is_set(start_app: StartApp) -> None:
    closed = f"http://127.0.0.1:{free_port()}/v1"
    running = await start_app(lambda app: app.add_agent(Agent(
        id="a", model="openai/gpt-4o-mini", base_url=closed, error_processor_defaults=False)))
    done = await asyncio.to_thread(run_cli, "chat", "a", "hi", TREADLE_TARGET=running.target)
    assert done.returncode == 1
    assert done.stderr.strip() == (
        f"error: openai: Connection error: cannot reach {closed}/. The URL comes from OPENAI_BASE_URL (or the "
        "agent's baseUrl) and the key from the environment of the machine running `treadle serve`, not the client's")


async def test_a_fallback_that_fails_too_shows_both_errors(start_app: StartApp) -> None:
    first = OpenAIServer([Turn.fail(401, "primary key rejected")])
    second = OpenAIServer([Turn.fail(400, "bad key for the fallback")])
    try:
        running = await start_app(lambda app: app.add_agent(Agent(
            id="a", model="openai/one", base_url=first.base_url, error_processor_defaults=False,
            fallback_models=[ModelConfig(id="openai/two", base_url=second.base_url)])))
        done = await asyncio.to_thread(run_cli, "chat", "a", "hi", TREADLE_TARGET=running.target)
    finally:
        first.close()
        second.close()
    assert done.returncode == 1
    assert done.stderr.strip() == ("error: openai 400: every model failed: openai/one (401): primary key rejected; "
                                   "openai/two (400): bad key for the fallback")


def test_an_unauthenticated_call_says_set_treadle_token(terminal: Terminal, tmp_path: Path) -> None:
    config = tmp_path / "server.yaml"
    digest = hashlib.sha256(b"s3cret").hexdigest()
    config.write_text(f"auth:\n  credentials:\n    - {{id: admin, tokenSha256: '{digest}', admin: true}}\n")
    server = terminal.serve([".venv/bin/treadle", "serve", "--config", str(config)])
    done = terminal.run([".venv/bin/treadle", "agents"])
    assert done.returncode == 1
    assert done.stderr.strip() == ("treadle agents: UNAUTHENTICATED: this server needs a credential: send "
                                   "'authorization: Bearer <token>' (set TREADLE_TOKEN to a token this server accepts)")
    done = terminal.run([".venv/bin/treadle", "agents"], TREADLE_TOKEN="wrong")
    assert done.stderr.strip().endswith("(the token in TREADLE_TOKEN is not one this server accepts)")
    assert terminal.run([".venv/bin/treadle", "agents"], TREADLE_TOKEN="s3cret").returncode == 0
    assert server.interrupt() == 0


def test_mutual_tls_without_a_client_certificate_says_so(terminal: Terminal, tmp_path: Path) -> None:
    ca = TestCA(tmp_path)
    pair = ca.issue("server", server=True)
    server = terminal.serve([".venv/bin/treadle", "serve", "--tls-cert", str(pair.cert), "--tls-key", str(pair.key),
                             "--tls-client-ca", str(ca.cert)])
    done = terminal.run([".venv/bin/treadle", "agents", "--tls-ca", str(ca.cert)])
    assert done.returncode == 1
    assert done.stderr.strip().endswith(
        f"(the server at {terminal.target} closed the TLS connection: it may ask for a client certificate "
        "(mutual TLS): pass --tls-cert and --tls-key)"), done.stderr
    done = terminal.run([".venv/bin/treadle", "agents"])  # no TLS at all
    assert done.returncode == 1
    assert done.stderr.strip().endswith(
        f"(a server runs at {terminal.target} but closed the connection: if it serves TLS, pass --tls-ca "
        "(and --tls-cert and --tls-key when it asks for client certificates))"), done.stderr
    client = ca.issue("client")
    done = terminal.run([".venv/bin/treadle", "agents", "--tls-ca", str(ca.cert), "--tls-cert", str(client.cert),
                         "--tls-key", str(client.key)])
    assert done.returncode == 0, done.stderr
    assert server.interrupt() == 0


def test_a_bare_processor_name_in_a_config_says_how_to_write_it(terminal: Terminal, tmp_path: Path) -> None:
    config = tmp_path / "agents.yaml"
    config.write_text("agents:\n  - id: echo\n    model: openai/gpt-4o-mini\n    inputProcessors: [pii]\n")
    done = terminal.run([".venv/bin/treadle", "serve", "--config", str(config)])
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == (
        f"treadle: {config}: agents[0] ('echo'): inputProcessors[0]: a processor entry is an object, not the bare "
        "name 'pii': write {builtin: pii} for the built-in processor or {id: pii} for a processor registered or "
        "attached under that id")


# --- no false warnings -------------------------------------------------------------------------


def test_builtins_raise_no_warning_and_show_no_failure_policy(terminal: Terminal, tmp_path: Path) -> None:
    config = tmp_path / "agents.yaml"
    config.write_text("agents:\n  - id: careful\n    model: openai/gpt-4o-mini\n"
                      "    inputProcessors: [{builtin: pii, options: {strategy: block}}]\n"
                      "    outputProcessors: [{builtin: batch-parts}]\n")
    server = terminal.serve([".venv/bin/treadle", "serve", "--config", str(config)], OPENAI_BASE_URL="http://127.0.0.1:9/v1")
    assert not [line for line in server.stderr if "names processor" in line], server.stderr
    assert not [line for line in server.stderr if "alembic" in line], server.stderr
    shown = yaml.safe_load(terminal.run([".venv/bin/treadle", "agents", "show", "careful"]).stdout)
    assert shown["inputProcessors"] == [{"builtin": "pii", "options": {"strategy": "block"}}]
    assert shown["outputProcessors"] == [{"builtin": "batch-parts"}]
    assert server.interrupt() == 0


def test_a_taken_port_is_said_in_one_line(terminal: Terminal) -> None:
    terminal.serve([".venv/bin/treadle", "serve"])
    done = terminal.run([".venv/bin/treadle", "serve"])
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"treadle: port {terminal.port} is already in use ({terminal.target}): is another server running there? "
        "Stop it, or choose another port with --listen HOST:PORT or TREADLE_LISTEN")


# --- the embedded model ----------------------------------------------------------------------------


def test_an_agent_with_tools_on_the_embedded_model_is_warned_and_the_load_is_announced(
    terminal: Terminal, tmp_path: Path
) -> None:
    config = tmp_path / "agents.yaml"
    config.write_text("agents:\n  - id: clock\n    model: local/smollm2-135m-instruct\n    tools: [current_time]\n")
    server = terminal.serve([".venv/bin/treadle", "serve", "--config", str(config)])
    loading = server.wait_for("loading local/", stream="stderr")
    assert loading == ("INFO treadle: loading local/smollm2-135m-instruct: the server listens once it is "
                       "loaded (seconds; longer on a busy machine)")
    warning = server.wait_for("cannot call tools", stream="stderr")
    assert warning == (
        "WARNING treadle: agent 'clock' lists tools ('current_time') but runs on local/smollm2-135m-instruct, "
        "which cannot call tools: it answers without them. Give it an OpenAI or Anthropic model (model: "
        "openai/..., with OPENAI_API_KEY or OPENAI_BASE_URL set) to use tools")
    assert server.interrupt() == 0


def test_embedded_answers_are_capped_and_penalise_repeats() -> None:
    from treadle.providers.base import ModelRequest, ModelSettings
    from treadle.providers.local import generation_args

    args = generation_args(ModelRequest(prompt=[], settings=ModelSettings()))
    assert (args["max_tokens"], args["repeat_penalty"]) == (200, 1.2)
    args = generation_args(ModelRequest(prompt=[], settings=ModelSettings(max_output_tokens=50, frequency_penalty=0.5)))
    assert args["max_tokens"] == 50 and "repeat_penalty" not in args

