"""Shared fixtures: the wire-level provider fakes, and a Treadle server started in-process."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.support import ScriptedServer, databases
from treadle.config import settings as settings_module
from tests.support.databases import database, postgres  # noqa: F401
from tests.support.fixtures import anthropic_server, openai_server, wire_server  # noqa: F401
from tests.support.go import go_build  # noqa: F401
from tests.support.terminal import terminal  # noqa: F401
from treadle.app import TreadleApp
from treadle.config import Settings


@pytest.fixture(autouse=True)
def _a_store_per_test(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """An app a test builds without ``data_dir`` gets a store of its own, not ``./.treadle``
    (created only when an app opens it)."""
    monkeypatch.setattr(settings_module, "DEFAULT_DATA_DIR",
                        tmp_path_factory.getbasetemp() / f"data-{uuid.uuid4().hex[:12]}")


def pytest_unconfigure(config: pytest.Config) -> None:
    databases.stop_postgres()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Tests that take ``database`` run once per storage engine."""
    if "engine" in metafunc.fixturenames:
        metafunc.parametrize("engine", databases.engines())


@pytest.fixture(autouse=True)
def fakes_played_out() -> Iterator[None]:
    """Fails a test that leaves a provider fake it made with script not played, a scripted
    callable that raised, or a request the real API would have refused."""
    first = len(ScriptedServer.created)
    yield
    made = ScriptedServer.created[first:]
    del ScriptedServer.created[first:]
    problems = [f for s in made for f in s.failures]
    problems += [f"scripted {s.provider} server: {s.remaining} scripted turn(s) never played" for s in made
                 if s.remaining]
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)


@dataclass
class RunningApp:
    app: TreadleApp
    port: int

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"


StartApp = Callable[..., Awaitable[RunningApp]]


@pytest.fixture
async def start_app(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[StartApp]:
    """``await start_app(setup=fn, env=..., **settings)``: a TreadleApp serving on a free port.

    ``env`` (default: empty) is what the app sees for OTEL and credential checks; the example
    agent is off unless ``example_agent=True``; the store is SQLite in a fresh temporary directory
    unless ``data_dir`` or ``database`` says otherwise. Every app is stopped at the end of the test.
    """
    apps: list[TreadleApp] = []

    async def start(
        setup: Callable[[TreadleApp], Any] | None = None,
        env: dict[str, str] | None = None,
        **settings: Any,
    ) -> RunningApp:
        settings.setdefault("listen", "127.0.0.1:0")
        settings.setdefault("example_agent", False)
        if "data_dir" not in settings:
            settings["data_dir"] = tmp_path_factory.mktemp("data")
        app = TreadleApp(Settings(**settings), env=env or {})
        apps.append(app)
        if setup is not None:
            setup(app)
        port = await app.start()
        return RunningApp(app, port)

    yield start
    for app in apps:
        await app.stop(0)
