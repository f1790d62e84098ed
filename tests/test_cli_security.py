"""The security flags of the CLI, as a user runs them: a public bind without auth is refused,
``--auth-file`` turns auth on, and ``treadle chat`` sends the token from ``TREADLE_TOKEN``.
Also: the configuration shown in docs/security.md loads as shown."""

from __future__ import annotations

import asyncio
import re
import subprocess
from pathlib import Path
from typing import Any

import yaml

from tests.security_env import TOKENS, write_config
from tests.support import OpenAIServer, Turn
from tests.test_cli import READY_TIMEOUT, ROOT, TREADLE, clean_env, free_port, serve  # noqa: F401
from treadle.config.auth import token_sha256
from treadle.config.security import load_security

DOC_BLOCKS = {("docs/security.md", "yaml", i): "test_the_documented_configuration_loads" for i in range(3)}


def test_serve_refuses_a_public_address_without_auth() -> None:
    proc = subprocess.run([*TREADLE, "serve", "--listen", f"0.0.0.0:{free_port()}"], env=clean_env(),
                          capture_output=True, text=True, timeout=READY_TIMEOUT, cwd=ROOT)
    assert proc.returncode == 2
    assert "without auth" in proc.stderr and "--insecure" in proc.stderr


def test_serve_says_it_is_unauthenticated(serve: Any) -> None:
    proc = serve(env=clean_env())
    proc.wait_for_line(proc.stderr, "UNAUTHENTICATED")


async def chat(target: str, token: str | None) -> tuple[int, str, str]:
    env = clean_env() | ({"TREADLE_TOKEN": token} if token is not None else {})
    proc = await asyncio.create_subprocess_exec(
        *TREADLE, "chat", "echo", "hello", "--target", target,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env,
    )
    out, err = await asyncio.wait_for(proc.communicate(), READY_TIMEOUT)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_auth_file_and_chat_with_treadle_token(serve: Any, tmp_path: Path) -> None:
    model = OpenAIServer([Turn.say("hi with a token")])
    try:
        config = write_config(tmp_path, model.base_url)
        data = yaml.safe_load(config.read_text())
        auth = data.pop("auth")
        config.write_text(yaml.safe_dump(data))  # agents only; credentials in their own file
        auth_file = tmp_path / "auth.yaml"
        auth_file.write_text(yaml.safe_dump({"auth": auth}))
        proc = serve("--config", str(config), "--auth-file", str(auth_file), env=clean_env())
        code, out, err = await chat(proc.target, None)
        assert code == 1 and "UNAUTHENTICATED" in err
        code, out, err = await chat(proc.target, TOKENS["web-app"])
        assert code == 0 and out.strip() == "hi with a token", err
    finally:
        model.close()


def test_the_documented_configuration_loads(tmp_path: Path) -> None:
    doc = (ROOT / "docs" / "security.md").read_text()
    blocks = re.findall(r"```yaml\n(.*?)```", doc, re.S)
    text = "\n".join(blocks).replace('"<hex>"', f'"{token_sha256("x")}"')
    text = text.replace(token_sha256("x"), token_sha256("a"), 1).replace(token_sha256("x"), token_sha256("b"), 1)
    path = tmp_path / "server.yaml"
    path.write_text(text)
    security = load_security(path)
    assert security.auth is not None
    assert [c.id for c in security.auth.credentials] == ["web-app", "guard-team", "ops"]
    assert security.limits.max_concurrent_runs == 256
    assert security.trust.credentials["team-vllm"].api_key_env == "TEAM_VLLM_KEY"
    assert security.trust.trusts("openai", "https://llm-gateway.internal/v1/", "")
    assert not security.trust.trusts("openai", "https://evil.example/v1", "")
