"""docs/operations.md's commands, and the deployment files of examples/deploy, run outside a
container: the image's entry point with the image's environment, the compose file's services as
the processes compose would start (on a real PostgreSQL), the systemd unit's commands with its
environment. Docker itself does not run here; what it would run does.

Agents run on the OpenAI wire fake (``OPENAI_BASE_URL``), as a deployment with a provider does,
so that no test waits for the embedded model to load.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
from pathlib import Path
from typing import Any

import yaml

from tests.doc_blocks import ROOT, block
from tests.support import Turn
from tests.support.databases import Database
from tests.support.terminal import Process, Terminal, free_port

OPS = "docs/operations.md"
DEPLOY = ROOT / "examples" / "deploy"
ENTRYPOINT = DEPLOY / "entrypoint.sh"
VENV_BIN = ROOT / ".venv" / "bin"
DOC_BLOCKS = {
    (OPS, "sh", 0): "test_health_command",
    (OPS, "sh", 1): "test_json_logs_look_as_shown",
    (OPS, "json", 0): "test_json_logs_look_as_shown",
    (OPS, "sh", 2): "test_backup_then_restore",
    (OPS, "sh", 3): "test_backup_then_restore",
    (OPS, "sh", 4): "test_migrate_command_on_postgresql",
}


def served_here(terminal: Terminal, tmp_path: Path) -> Path:
    """A directory to run the docs' commands in, as from a clone: ``.venv`` is the repository's."""
    (tmp_path / ".venv").symlink_to(ROOT / ".venv")
    return tmp_path


# --- docs/operations.md -----------------------------------------------------------------------------


def test_health_command(terminal: Terminal) -> None:
    server = terminal.serve([".venv/bin/treadle", "serve"], OPENAI_BASE_URL="http://127.0.0.1:9/v1")
    done = terminal.run(block(OPS, "sh", 0))
    assert (done.returncode, done.stdout) == (0, f"{terminal.target}: SERVING\n"), done.stderr
    assert server.interrupt() == 0


def test_json_logs_look_as_shown(terminal: Terminal, openai_server: Any) -> None:
    fake = openai_server([Turn.say("Hello.")])
    server = terminal.start(block(OPS, "sh", 1).strip(), OPENAI_BASE_URL=fake.base_url)
    server.wait_for(f"Treadle listening on {terminal.target}", stream="stdout")
    assert terminal.run([".venv/bin/treadle", "chat", "assistant", "hi", "--thread", "t1"]).returncode == 0
    logged = json.loads(server.wait_for('"logger": "treadle.runs"', stream="stderr"))
    shown = json.loads(block(OPS, "json", 0))
    assert list(logged) == list(shown)
    for key, value in shown.items():
        assert type(logged[key]) is type(value), key
    for key in ("level", "logger", "agent_id", "thread_id", "status", "finish_reason"):
        assert logged[key] == shown[key], key
    pattern = re.escape(shown["message"]).replace("run_4f1c", r"run_\w+").replace(r"1\.20s", r"[\d.]+s")
    pattern = pattern.replace("23", r"\d+").replace("41", r"\d+")
    assert re.fullmatch(pattern, logged["message"]), (pattern, logged["message"])
    assert server.interrupt() == 0


def test_backup_then_restore(terminal: Terminal, openai_server: Any, tmp_path: Path) -> None:
    here = served_here(terminal, tmp_path)
    fake = openai_server([Turn.say("Noted."), Turn.say("Also noted.")])
    env = {"TREADLE_DATA_DIR": "", "OPENAI_BASE_URL": fake.base_url}  # the default: ./.treadle

    def chat(text: str) -> None:
        done = terminal.run([".venv/bin/treadle", "chat", "assistant", text, "--thread", "t", "--resource", "r"])
        assert done.returncode == 0, done.stderr

    server = terminal.serve([".venv/bin/treadle", "serve"], cwd=here, **env)
    chat("first")
    done = terminal.run(block(OPS, "sh", 2), cwd=here, **env)
    assert (done.returncode, done.stdout) == (0, "backed up .treadle/treadle.db to treadle-backup.db\n"), done.stderr
    chat("after the backup")
    assert server.interrupt() == 0

    done = terminal.run(block(OPS, "sh", 3), cwd=here, **env)
    assert done.returncode == 0, done.stderr
    server = terminal.serve([".venv/bin/treadle", "serve"], cwd=here, **env)
    shown = terminal.run([".venv/bin/treadle", "threads", "show", "r", "t"]).stdout.splitlines()
    assert shown[:3] == ["thread t", "user: first", "assistant: Noted."], shown
    assert "user: after the backup" not in shown  # the store is the backup's
    assert server.interrupt() == 0

    again = terminal.run(block(OPS, "sh", 2), cwd=here, **env)  # never overwrites
    assert again.returncode == 1 and "treadle-backup.db exists" in again.stderr


def test_migrate_command_on_postgresql(terminal: Terminal, postgres: Database) -> None:
    command = block(OPS, "sh", 4).strip()
    assert command.startswith(".venv/bin/treadle migrate --database postgresql://")
    command = command.split(" --database ")[0] + " --database " + shlex.quote(str(postgres.database))
    first = terminal.run(command)
    assert first.returncode == 0, first.stderr
    assert re.fullmatch(r".* schema migrated from empty to \w+\n", first.stdout), first.stdout
    head = first.stdout.split()[-1]
    second = terminal.run(command)
    assert second.stdout.endswith(f": schema already at {head}\n"), second.stdout
    assert "treadle:treadle@" not in first.stdout  # a password in the URL is never printed


# --- examples/deploy --------------------------------------------------------------------------------


def dockerfile() -> dict[str, Any]:
    """The final stage's ENV, USER, ENTRYPOINT, CMD, HEALTHCHECK and COPY lines."""
    text = (DEPLOY / "Dockerfile").read_text().replace("\\\n", " ")
    final = text[text.rindex("\nFROM "):]
    env: dict[str, str] = {}
    for line in re.findall(r"^ENV (.*)$", final, re.M):
        for pair in shlex.split(line):
            name, _, value = pair.partition("=")
            env[name] = value
    [user] = re.findall(r"^USER (\S+)$", final, re.M)
    [entrypoint] = re.findall(r"^ENTRYPOINT (.*)$", final, re.M)
    [cmd] = re.findall(r"^CMD (.*)$", final, re.M)
    [health] = re.findall(r"^HEALTHCHECK .*?CMD (\[.*\])$", final, re.M)
    copies = re.findall(r"^COPY (?!--from)(\S+) (\S+)$", text, re.M)
    return {"env": env, "user": user, "entrypoint": json.loads(entrypoint), "cmd": json.loads(cmd),
            "health": json.loads(health), "copies": copies, "text": text}


def test_the_image_builds_from_the_repository_and_runs_as_a_non_root_user() -> None:
    image = dockerfile()
    assert image["user"] == "treadle" and "useradd --system --uid 10001" in image["text"]
    assert image["entrypoint"] == ["treadle-entrypoint"] and image["cmd"] == ["serve"]
    assert image["health"] == ["treadle-entrypoint", "health"]
    for source, _ in image["copies"]:
        assert (ROOT / source).exists(), f"the Dockerfile copies {source}, which the repository lacks"
    assert ("examples/deploy/entrypoint.sh", "/usr/local/bin/treadle-entrypoint") in image["copies"]
    readme = (ROOT / "README.md").read_text()
    [cmake] = re.findall(r'CMAKE_ARGS="([^"]+)"', image["text"])
    assert f'CMAKE_ARGS="{cmake}"' in readme  # llama.cpp built as the quick start builds it
    assert "pip install --no-cache-dir '.[local]'" in image["text"]
    assert image["env"]["TREADLE_LISTEN"] == "0.0.0.0:50051" and image["env"]["TREADLE_DATA_DIR"] == "/var/lib/treadle"


def image_env(terminal: Terminal, **extra: str) -> dict[str, str]:
    """The image's environment on this machine: its PATH's venv is the repository's."""
    env = dockerfile()["env"] | extra
    env["PATH"] = f"{ENTRYPOINT.parent}:{VENV_BIN}:{os.environ['PATH']}"
    return env


def entrypoint(terminal: Terminal, *args: str, cwd: Path = ROOT, **env: str) -> Process:
    return terminal.start(["sh", str(ENTRYPOINT), *args], cwd=cwd, **env)


def test_the_entrypoint_serves_and_answers_its_health_check(terminal: Terminal, tmp_path: Path) -> None:
    port = free_port()
    env = image_env(terminal, TREADLE_LISTEN=f"0.0.0.0:{port}", TREADLE_DATA_DIR=str(tmp_path),
                    OPENAI_BASE_URL="http://127.0.0.1:9/v1")
    without = terminal.run(["sh", str(ENTRYPOINT)], **env)  # the image's CMD: serve, no auth
    assert without.returncode == 2
    assert f"refusing to listen on 0.0.0.0:{port} without auth" in without.stderr

    server = entrypoint(terminal, "serve", "--insecure", **env)
    server.wait_for(f"Treadle listening on 0.0.0.0:{port}", stream="stdout")
    health = dockerfile()["health"]
    done = terminal.run(["sh", str(ENTRYPOINT), *health[1:]], **env)  # the HEALTHCHECK, as docker runs it
    assert (done.returncode, done.stdout) == (0, f"127.0.0.1:{port}: SERVING\n"), done.stderr
    os.killpg(server.proc.pid, signal.SIGTERM)  # what `docker stop` sends: exec made treadle PID 1
    assert server.wait() == 0
    done = terminal.run(["sh", str(ENTRYPOINT), "health", "--timeout", "1"], **env)
    assert done.returncode == 1


def test_compose_runs_two_replicas_on_one_postgresql(terminal: Terminal, postgres: Database, openai_server: Any,
                                                      tmp_path: Path) -> None:
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    services = compose["services"]
    assert set(services) == {"postgres", "migrate", "treadle-1", "treadle-2"}
    assert services["migrate"]["depends_on"] == {"postgres": {"condition": "service_healthy"}}
    replicas = [services["treadle-1"], services["treadle-2"]]
    for replica in replicas:
        assert replica["depends_on"] == {"migrate": {"condition": "service_completed_successfully"}}
        assert replica["build"]["dockerfile"] == "examples/deploy/Dockerfile"
        assert (DEPLOY / replica["build"]["context"] / replica["build"]["dockerfile"]).resolve() == DEPLOY / "Dockerfile"
        grace = float(replica["environment"]["TREADLE_GRACE"])
        assert int(replica["stop_grace_period"].removesuffix("s")) > grace  # runs finish before a kill
        assert [p.split(":")[0] for p in replica["ports"]] == ["127.0.0.1"]  # loopback only: no auth
    url = services["migrate"]["environment"]["TREADLE_DATABASE_URL"]
    db = services["postgres"]["environment"]
    assert url == f"postgresql://{db['POSTGRES_USER']}:{db['POSTGRES_PASSWORD']}@postgres:5432/{db['POSTGRES_DB']}"

    fake = openai_server([Turn.say("Remembered."), Turn.say("You said: remember me.")])

    def env_of(service: dict[str, Any], port: int) -> dict[str, str]:
        env = image_env(terminal, **{k: str(v) for k, v in service["environment"].items()})
        return env | {"TREADLE_DATABASE_URL": str(postgres.database), "TREADLE_LISTEN": f"0.0.0.0:{port}",
                      "TREADLE_DATA_DIR": str(tmp_path), "OPENAI_BASE_URL": fake.base_url,
                      "TREADLE_THREAD_LEASE_TTL": "5"}

    migrate = terminal.run(["sh", str(ENTRYPOINT), *services["migrate"]["command"]], **env_of(services["migrate"], 0))
    assert migrate.returncode == 0 and "schema migrated from empty to" in migrate.stdout, migrate.stderr
    ports = [free_port(), free_port()]
    running = []
    for replica, port in zip(replicas, ports):
        proc = entrypoint(terminal, *replica["command"], **env_of(replica, port))
        proc.wait_for(f"Treadle listening on 0.0.0.0:{port}", stream="stdout")
        json.loads(proc.stderr[0])  # TREADLE_LOG_FORMAT=json
        running.append(proc)
    first, second = (f"127.0.0.1:{p}" for p in ports)
    where = ["--thread", "shared", "--resource", "r"]
    chat = [".venv/bin/treadle", "chat", "assistant"]
    assert terminal.run([*chat, "remember me", *where], TREADLE_TARGET=first).returncode == 0
    done = terminal.run([*chat, "what did I say?", *where], TREADLE_TARGET=second)  # the other replica
    assert (done.returncode, done.stdout) == (0, "You said: remember me.\n"), done.stderr
    assert [m["content"] for m in fake.requests[1]["messages"] if m["role"] == "user"] == [
        "remember me", "what did I say?"]
    for proc in running:
        os.killpg(proc.proc.pid, signal.SIGTERM)
        assert proc.wait() == 0


def unit() -> dict[str, list[str]]:
    """The systemd unit's keys (each with every value it is given)."""
    out: dict[str, list[str]] = {}
    for line in (DEPLOY / "treadle.service").read_text().splitlines():
        if "=" in line and not line.startswith(("#", "[")):
            key, _, value = line.partition("=")
            out.setdefault(key, []).append(value)
    return out


def test_the_systemd_unit_migrates_serves_and_stops_within_its_timeout(terminal: Terminal, tmp_path: Path) -> None:
    service = unit()
    env: dict[str, str] = {}
    for assignment in service["Environment"]:
        name, _, value = assignment.partition("=")
        env[name] = value
    assert int(service["TimeoutStopSec"][0]) > float(env["TREADLE_GRACE"])
    assert service["User"] == ["treadle"] and service["KillSignal"] == ["SIGTERM"]
    assert service["ReadWritePaths"] == [env["TREADLE_DATA_DIR"]] == service["WorkingDirectory"]
    # This machine's paths for the unit's: the clone is this repository, the data a temporary dir.
    (tmp_path / "agents.yaml").write_text("agents:\n  - {id: helper, model: openai/gpt-4o-mini}\n")
    env |= {"TREADLE_DATA_DIR": str(tmp_path / "data"), "TREADLE_CONFIG": str(tmp_path / "agents.yaml"),
            "TREADLE_LISTEN": terminal.target, "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}

    def local(command: str) -> list[str]:
        words = shlex.split(command)
        assert words[0].startswith("/opt/treadle/.venv/bin/")
        return [str(VENV_BIN / words[0].rsplit("/", 1)[1]), *words[1:]]

    [pre] = service["ExecStartPre"]
    done = terminal.run(local(pre), **env)
    assert done.returncode == 0 and "schema migrated from empty to" in done.stdout, done.stderr
    [start] = service["ExecStart"]
    server = terminal.start(local(start), cwd=tmp_path, **env)
    server.wait_for(f"Treadle listening on {terminal.target}", stream="stdout")
    assert "  helper: openai/gpt-4o-mini (config)" in server.stdout
    assert terminal.run([".venv/bin/treadle", "health"]).returncode == 0
    os.killpg(server.proc.pid, signal.SIGTERM)
    assert server.wait(timeout=float(service["TimeoutStopSec"][0])) == 0


def test_every_deploy_file_is_described_in_the_operations_doc() -> None:
    doc = (ROOT / OPS).read_text()
    for path in DEPLOY.iterdir():
        assert f"(../examples/deploy/{path.name})" in doc, f"docs/operations.md does not link {path.name}"
