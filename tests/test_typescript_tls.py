"""The TypeScript SDK against a server with mutual TLS and tokens (``tests/remote/ts/tls_client.ts``,
a separate Node process): the processor, the tool and the agent client connect with a CA, a
client certificate and a token (the agent client's from ``TREADLE_TOKEN``); without TLS, without
a certificate, without a token or with another team's token they are refused."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

from tests.security_env import TOKENS, secured  # noqa: F401
from tests.support import Turn
from tests.support.certs import TestCA
from tests.test_typescript_sdk import NODE_TSX, ROOT, TS_CLIENT


async def test_processor_tool_and_agent_client_over_mtls_with_tokens(secured, tmp_path: Path) -> None:
    ca = TestCA(tmp_path)
    server, client = ca.issue("localhost", server=True), ca.issue("ts-host")
    running, model = await secured([Turn.say("guarded"), Turn.call("get_weather", {"city": "Oslo"}), Turn.say("clear in Oslo")],
                                   tls_cert=server.cert, tls_key=server.key, tls_client_ca=ca.cert)
    target = f"localhost:{running.port}"
    proc = await asyncio.create_subprocess_exec(
        *NODE_TSX, str(ROOT / "tests" / "remote" / "ts" / "tls_client.ts"), target,
        str(ca.cert), str(client.cert), str(client.key), TOKENS["guard-team"], cwd=TS_CLIENT,
        env={**os.environ, "TREADLE_TOKEN": TOKENS["web-app"]},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, out.decode()
    report = json.loads(out.decode().strip().splitlines()[-1])
    # The server drops a connection that fails the TLS handshake; Node's HTTP/2 client reports
    # that as a reset stream (CANCELED) or a lost connection (UNAVAILABLE), by when it notices.
    assert report.pop("plaintext") in {"Canceled", "Unavailable"}
    assert report.pop("noCertificate") in {"Canceled", "Unavailable"}
    assert report == {
        "guarded": "guarded",
        "withTool": "clear in Oslo",
        "noToken": "Unauthenticated",
        "refused": "PermissionDenied",
    }
    assert len(model.requests) == 3  # the refused calls reached no model
    tool_message = [m for m in model.requests[2]["messages"] if m["role"] == "tool"][0]
    assert json.loads(tool_message["content"]) == {"city": "Oslo", "sky": "clear"}
