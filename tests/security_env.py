"""A server with the credentials of the security docs, and callers holding each token."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import grpc
import pytest
import yaml

from tests.conftest import RunningApp, StartApp
from tests.support import OpenAIServer
from treadle.config.auth import token_sha256
from treadle.v1 import agent_service_pb2_grpc

TOKENS = {"web-app": "tok-web", "guard-team": "tok-guard", "rival": "tok-rival", "ops": "tok-ops"}

CREDENTIALS: list[dict[str, Any]] = [
    {"id": "web-app", "tokenSha256": token_sha256(TOKENS["web-app"]),
     "agents": ["echo", "support-*", "guarded", "weather"], "resources": ["tenant-a/*"]},
    {"id": "guard-team", "tokenSha256": token_sha256(TOKENS["guard-team"]),
     "processors": ["pii-guard"], "tools": ["get_weather"]},
    # Allowed by scope to attach anything, but not what another credential already serves.
    {"id": "rival", "tokenSha256": token_sha256(TOKENS["rival"]), "processors": ["*"], "tools": ["*"]},
    {"id": "ops", "tokenSha256": token_sha256(TOKENS["ops"]), "admin": True},
]


def md(who: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {TOKENS[who]}"),)


def agents(base_url: str) -> list[dict[str, Any]]:
    common = {"model": "openai/test-model", "baseUrl": base_url, "instructions": "be brief"}
    return [
        {"id": "echo", **common},
        {"id": "support-1", **common},
        {"id": "secret", **common},
        {"id": "guarded", **common, "inputProcessors": [{"id": "pii-guard"}]},
        {"id": "weather", **common, "tools": ["get_weather"]},
        {"id": "tenant-b-bot", **common,
         "defaultOptions": {"memory": {"resource": "tenant-b/alice", "thread": {"id": "t1"}}}},
    ]


def write_config(directory: Path, base_url: str, **sections: Any) -> Path:
    data: dict[str, Any] = {"agents": agents(base_url), "auth": {"credentials": CREDENTIALS}}
    data.update(sections)
    path = directory / "server.yaml"
    path.write_text(yaml.safe_dump(json.loads(json.dumps(data))))
    return path


@pytest.fixture
async def secured(start_app: StartApp, tmp_path: Path) -> AsyncIterator[Callable[..., Any]]:
    """``await secured(**sections, **settings)`` -> (running app, the model fake)."""
    models: list[OpenAIServer] = []

    async def start(script: list[Any] | None = None, setup: Any = None, **kw: Any) -> tuple[RunningApp, OpenAIServer]:
        model = OpenAIServer(script or [])
        models.append(model)
        sections = {k: kw.pop(k) for k in ("limits", "providers", "providerCredentials", "auth") if k in kw}
        path = write_config(tmp_path, model.base_url, **sections)
        return await start_app(config_file=path, setup=setup, **kw), model

    yield start
    for model in models:
        model.close()


@pytest.fixture
async def channel_for() -> AsyncIterator[Callable[[RunningApp], grpc.aio.Channel]]:
    channels: list[grpc.aio.Channel] = []

    def make(running: RunningApp) -> grpc.aio.Channel:
        channel = grpc.aio.insecure_channel(running.target)
        channels.append(channel)
        return channel

    yield make
    for channel in channels:
        await channel.close()


def agent_stub(channel: grpc.aio.Channel) -> agent_service_pb2_grpc.AgentServiceStub:
    return agent_service_pb2_grpc.AgentServiceStub(channel)
