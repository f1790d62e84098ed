"""What a user sees for a bad agent file or a bad setting: ``treadle serve`` says what is wrong
on stderr, in one line naming the file (and the agent) or the setting, and exits 2."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from treadle.cli import main
from treadle.config import AgentFileError, Settings, load_agent_file

GOOD = "agents:\n  - id: echo\n    model: openai/gpt-4o-mini\n"


def serve(capsys: pytest.CaptureFixture[str], data_dir: Path, *args: str) -> tuple[int, str]:
    """The exit code and what ``treadle serve`` said (its log lines before it left out)."""
    try:
        code = main(["serve", "--listen", "127.0.0.1:0", "--data-dir", str(data_dir), *args])
    except SystemExit as e:  # the server's own start checks exit with 2
        code = int(e.code or 0)
    err = capsys.readouterr().err
    said = re.search(r"^treadle( serve)?: ", err, re.M)
    assert said is not None, err
    return code, err[said.start():].strip()


@pytest.mark.parametrize(("name", "text", "problem"), [
    ("agents.yaml", "agents: [", "not valid YAML: "),
    ("agents.json", '{"agents": [}', "not valid JSON: Expecting value: line 1 column 13 (char 12)"),
    ("agents.yaml", "agent:\n  - id: echo\n", "unknown top-level keys ['agent']; expected some of ['agents', 'auth', 'limits', 'providers', 'providerCredentials', 'remoteServers']"),
    ("agents.yaml", "agents: 5\n", "expected a list of agents or an 'agents:' list"),
    ("agents.yaml", "just a string\n", "expected a list of agents or an 'agents:' list"),
    ("agents.yaml", "agents:\n  - echo\n", "agents[0] is not an object"),
    ("agents.yaml", GOOD + "  - id: echo\n    model: openai/gpt-4o\n", "agents[1] repeats id 'echo' (first at agents[0])"),
    ("agents.yaml", "- id: echo\n  model: openai/gpt-4o-mini\n  maxStep: 3\n",
     'agents[0] (\'echo\'): not a valid Agent in proto JSON form: Message type "treadle.v1.Agent" has no '
     'field named "maxStep"'),
    ("agents.yaml", "- id: echo\n  model: nowhere/gpt\n", "agents[0] ('echo'): agent.model: model 'nowhere/gpt' names "
     "unknown provider 'nowhere'; supported providers: openai, anthropic, local"),
])
def test_a_bad_agent_file_is_named_with_what_is_wrong(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, text: str, problem: str,
) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    code, line = serve(capsys, tmp_path, "--config", str(path))
    assert code == 2
    assert line.startswith(f"treadle: {path}: {problem}"), line


def test_a_missing_agent_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "absent.yaml"
    assert serve(capsys, tmp_path, "--config", str(path)) == (2, f"treadle: {path}: cannot read: No such file or directory")


def test_agent_files_in_both_forms(tmp_path: Path) -> None:
    yaml_file, json_file, bare, empty = (tmp_path / n for n in ("a.yaml", "a.json", "bare.yml", "empty.yaml"))
    yaml_file.write_text(GOOD, encoding="utf-8")
    json_file.write_text('{"agents": [{"id": "echo", "model": "openai/gpt-4o-mini"}]}', encoding="utf-8")
    bare.write_text("- id: echo\n  model: openai/gpt-4o-mini\n", encoding="utf-8")
    empty.write_text("", encoding="utf-8")
    expected = [{"id": "echo", "model": "openai/gpt-4o-mini"}]
    assert load_agent_file(yaml_file) == load_agent_file(json_file) == load_agent_file(bare) == expected
    assert load_agent_file(empty) == []
    with pytest.raises(AgentFileError, match="cannot read"):
        load_agent_file(tmp_path)  # a directory


@pytest.mark.parametrize(("variable", "value", "problem"), [
    ("TREADLE_GRACE", "soon", "TREADLE_GRACE='soon' is not a number"),
    ("TREADLE_MAX_MESSAGE_BYTES", "1.5", "TREADLE_MAX_MESSAGE_BYTES='1.5' is not a number"),
    ("TREADLE_GRACE", "-1", "grace period must be >= 0 seconds, got -1.0"),
    ("TREADLE_TOOL_TIMEOUT", "0", "tool timeout must be > 0 seconds, got 0.0"),
    ("TREADLE_MAX_MESSAGE_BYTES", "0", "max message size must be positive"),
    ("TREADLE_PROCESSOR_TIMEOUT", "0", "processor timeouts must be > 0 seconds"),
    ("TREADLE_PROCESSOR_MAX_TIMEOUT", "-2", "processor timeouts must be > 0 seconds"),
    ("TREADLE_PROCESSOR_ATTACH_WAIT", "-1", "processor attach wait must be >= 0 seconds, got -1.0"),
])
def test_a_bad_setting_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], variable: str, value: str,
    problem: str,
) -> None:
    monkeypatch.setenv(variable, value)
    assert serve(capsys, tmp_path) == (2, f"treadle serve: {problem}")


@pytest.mark.parametrize("listen", ["50051", ":50051", "localhost:", "localhost:http", "localhost:70000"])
def test_a_bad_listen_address_is_named(capsys: pytest.CaptureFixture[str], listen: str) -> None:
    code = main(["serve", "--listen", listen])
    assert (code, capsys.readouterr().err.strip()) == (
        2, f"treadle serve: listen address {listen!r} must be HOST:PORT, e.g. 127.0.0.1:50051")


def test_settings_come_from_flags_over_variables_over_defaults(tmp_path: Path) -> None:
    env = {"TREADLE_LISTEN": "0.0.0.0:7000", "TREADLE_CONFIG": str(tmp_path / "a.yaml"), "TREADLE_GRACE": "5",
           "TREADLE_MAX_MESSAGE_BYTES": "1024", "TREADLE_TOOL_TIMEOUT": "2.5", "TREADLE_PROCESSOR_TIMEOUT": "3",
           "TREADLE_PROCESSOR_MAX_TIMEOUT": "30", "TREADLE_PROCESSOR_ATTACH_WAIT": "0.5"}
    s = Settings.from_env(env, grace=1.0, listen=None)
    assert (s.listen, s.config_file, s.grace, s.max_message_bytes, s.tool_timeout, s.processor_timeout,
            s.processor_max_timeout, s.processor_attach_wait) == (
        "0.0.0.0:7000", tmp_path / "a.yaml", 1.0, 1024, 2.5, 3.0, 30.0, 0.5)
    assert Settings.from_env({}) == Settings()
