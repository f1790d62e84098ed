"""The Go SDK over mutual TLS with tokens, against a server started with TLS and the credentials
of the security docs (``tests/security_env.py``): ``clients/go/internal/tlsclient`` attaches a
processor and serves a tool with the processor team's token (``WithToken``), calls agents with
the calling service's token from ``TREADLE_TOKEN``, and is refused when it attaches with a
caller's token or calls without TLS."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

from tests.security_env import TOKENS, secured  # noqa: F401
from tests.support import Turn
from tests.support.certs import TestCA
from tests.support.go import GoBuild


async def test_go_sdk_over_mtls_with_tokens(secured: Any, go_build: GoBuild, tmp_path: Path) -> None:
    ca = TestCA(tmp_path)
    server, client = ca.issue("localhost", server=True), ca.issue("guard-host")
    running, model = await secured(
        [Turn.say("guarded"), Turn.call("get_weather", {"city": "Oslo"}), Turn.say("clear")],
        tls_cert=server.cert, tls_key=server.key, tls_client_ca=ca.cert)
    proc = await asyncio.create_subprocess_exec(
        str(go_build("tlsclient")), f"localhost:{running.port}", str(ca.cert), str(client.cert), str(client.key),
        TOKENS["guard-team"], TOKENS["web-app"],
        env={**os.environ, "TREADLE_TOKEN": TOKENS["web-app"]},
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    stdout, stderr = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, stderr.decode()
    out = json.loads(stdout)
    assert out == {"guarded": "guarded", "weather": "clear", "refused": "PermissionDenied", "plaintext": "Unavailable"}
    # The weather agent's second request carried the Go tool's result.
    tool_message = [m for m in model.requests[2]["messages"] if m["role"] == "tool"][0]
    assert json.loads(tool_message["content"]) == {"sky": "clear"}
