"""``treadle-client`` installs and works without the server: a fresh venv, ``pip install
./clients/python``, then a processor attached and agents called from that venv's Python against a
real server, as a service that only calls agents would run it; and with the ``dataclasses`` extra,
the typed client from such an install.

The plain venv is built once per session from a copy of ``clients/python`` (so the build leaves
nothing in the working tree), the one with the extra once by its test; pip takes grpcio, protobuf,
opentelemetry-api (and betterproto2) from the package index (its cache, on a warm machine).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import textwrap
import venv
from pathlib import Path

import pytest

from tests.conftest import StartApp
from tests.support import OpenAIServer, Turn
from treadle.agents import Agent, ProcessorRef
from treadle.core.messages import SystemMessage

ROOT = Path(__file__).resolve().parent.parent

CLIENT_SCRIPT = textwrap.dedent('''
    import asyncio, json, sys

    from treadle.core.messages import TextPart
    from treadle_client import AgentClient, attach


    class NoSecrets:
        id = "no-secrets"

        async def process_input(self, args):
            for msg in args.messages:
                text = " ".join(p.text for p in msg.content.parts if isinstance(p, TextPart))
                if "password" in text:
                    args.abort("no passwords here")
            return args.messages


    async def main(target):
        attachment = await attach([NoSecrets()], target)
        await attachment.ready()
        print(json.dumps({"attached": True}), flush=True)
        async with AgentClient(target) as client:
            text = "".join([c.text_delta.text async for c in client.stream("guarded", "hello")
                            if c.WhichOneof("chunk") == "text_delta"])
            blocked = await client.generate("guarded", "my password is hunter2")
        await attachment.close()
        print(json.dumps({"text": text, "tripwire": blocked.tripwire.reason,
                          "processor": blocked.tripwire.processor_id}), flush=True)


    asyncio.run(main(sys.argv[1]))
''')


def _client_venv(tmp_path_factory: pytest.TempPathFactory, extras: str = "") -> Path:
    tmp = tmp_path_factory.mktemp("client-dist")
    source = tmp / "python"
    shutil.copytree(ROOT / "clients" / "python", source,
                    ignore=shutil.ignore_patterns("examples", "build", "*.egg-info", "__pycache__"))
    env_dir = tmp / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    done = subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                           f"{source}{extras}"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return python


@pytest.fixture(scope="session")
def client_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _client_venv(tmp_path_factory)


def test_the_client_installs_without_the_server_or_the_provider_sdks(client_venv: Path) -> None:
    listed = subprocess.run([str(client_venv), "-m", "pip", "list", "--format=json"],
                            capture_output=True, text=True, check=True)
    names = {p["name"].lower() for p in json.loads(listed.stdout)}
    assert "treadle-client" in names
    assert {"grpcio", "protobuf", "opentelemetry-api"} <= names
    assert not names & {"openai", "anthropic", "treadle", "sqlalchemy", "alembic", "psycopg", "pyyaml",
                        "jsonschema", "opentelemetry-sdk", "httpx", "betterproto2"}, sorted(names)
    # The server's modules are not there; the shared core is.
    probe = subprocess.run(
        [str(client_venv), "-c",
         "import importlib.util as u, json; print(json.dumps({m: u.find_spec(m) is not None for m in "
         "['treadle.app', 'treadle.loop', 'treadle.v1.agent_pb2', 'treadle.core.messages', 'treadle.wire.data']}))"],
        capture_output=True, text=True, check=True, cwd="/",
    )
    assert json.loads(probe.stdout) == {"treadle.app": False, "treadle.loop": False, "treadle.v1.agent_pb2": True,
                                        "treadle.core.messages": True, "treadle.wire.data": True}
    # The dataclasses are an extra: without it, importing them says which one.
    typed = subprocess.run([str(client_venv), "-c", "import treadle_client.typed"],
                           capture_output=True, text=True, cwd="/")
    assert typed.returncode == 1
    assert "pip install 'treadle-client[dataclasses]'" in typed.stderr, typed.stderr


async def test_an_agent_call_and_a_processor_attach_from_the_client_only_install(
    client_venv: Path, start_app: StartApp, tmp_path: Path,
) -> None:
    model = OpenAIServer([Turn.say(["Hello ", "there"])])
    try:
        running = await start_app()
        running.app.add_agent(Agent(id="guarded", name="guarded", model="openai/test-model", base_url=model.base_url,
                                    instructions=[SystemMessage("Be brief.")],
                                    input_processors=[ProcessorRef("no-secrets")]))
        script = tmp_path / "client.py"
        script.write_text(CLIENT_SCRIPT)
        proc = await asyncio.create_subprocess_exec(
            str(client_venv), str(script), running.target, cwd=str(tmp_path),
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), timeout=120)
        assert proc.returncode == 0, err.decode()
        lines = [json.loads(line) for line in out.decode().splitlines()]
        assert lines == [{"attached": True},
                         {"text": "Hello there", "tripwire": "no passwords here", "processor": "no-secrets"}]
        assert len(model.recorded) == 1  # the blocked prompt never reached the model
    finally:
        model.close()


TYPED_SCRIPT = textwrap.dedent('''
    import asyncio, json, sys

    from treadle_client.typed import AgentClient, Chunk, FinishReason, TextDeltaChunk


    async def main(target):
        async with AgentClient(target) as client:
            text = ""
            async for chunk in client.stream("plain", "hello"):
                assert isinstance(chunk, Chunk), type(chunk)
                match chunk.chunk:
                    case TextDeltaChunk(text=delta):
                        text += delta
            response = await client.generate("plain", "again")
        print(json.dumps({"text": text, "generated": response.text,
                          "stop": response.finish_reason == FinishReason.STOP}), flush=True)


    asyncio.run(main(sys.argv[1]))
''')


async def test_the_dataclasses_extra_installs_and_calls_an_agent(
    tmp_path_factory: pytest.TempPathFactory, start_app: StartApp, tmp_path: Path,
) -> None:
    python = _client_venv(tmp_path_factory, "[dataclasses]")
    listed = subprocess.run([str(python), "-m", "pip", "list", "--format=json"],
                            capture_output=True, text=True, check=True)
    names = {p["name"].lower() for p in json.loads(listed.stdout)}
    assert "betterproto2" in names and not names & {"betterproto2-compiler", "ruff", "treadle"}, sorted(names)
    marker = subprocess.run([str(python), "-c", "import importlib.resources as r; "
                             "print(r.files('treadle_client').joinpath('py.typed').is_file())"],
                            capture_output=True, text=True, check=True, cwd="/")
    assert marker.stdout.strip() == "True"  # mypy reads the installed package's types
    script = tmp_path / "typed_client.py"
    script.write_text(TYPED_SCRIPT)
    # mypy, as a user runs it over their code, sees the dataclasses' types in the installed package.
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", "mypy"],
                   capture_output=True, text=True, check=True, timeout=600)
    wrong = tmp_path / "wrong.py"
    wrong.write_text(TYPED_SCRIPT.replace("text += delta", "text += delta + 1"))
    checked = subprocess.run([str(python), "-m", "mypy", "--no-incremental", "--check-untyped-defs",
                              script.name, wrong.name],
                             capture_output=True, text=True, cwd=str(tmp_path), timeout=300)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    errors = [line.split(":", 2) for line in checked.stdout.splitlines() if ": error:" in line]
    assert [(path, error) for path, _, error in errors] == [
        ("wrong.py", ' error: Unsupported operand types for + ("str" and "int")  [operator]')], checked.stdout
    model = OpenAIServer([Turn.say(["Hello ", "there"]), Turn.say("Again.")])
    try:
        running = await start_app()
        running.app.add_agent(Agent(id="plain", name="plain", model="openai/test-model", base_url=model.base_url))
        proc = await asyncio.create_subprocess_exec(
            str(python), str(script), running.target, cwd=str(tmp_path),
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), timeout=120)
        assert proc.returncode == 0, err.decode()
        assert json.loads(out) == {"text": "Hello there", "generated": "Again.", "stop": True}
    finally:
        model.close()
