"""Pytest fixtures: factories for the wire servers, closed at the end of each test.

Register them in ``tests/conftest.py`` with::

    from tests.support.fixtures import anthropic_server, openai_server, wire_server  # noqa: F401
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

import pytest

from .anthropic_wire import AnthropicServer
from .openai_wire import OpenAIServer
from .script import ScriptStep
from .server import ScriptedServer

_SERVERS: dict[str, type[ScriptedServer]] = {"openai": OpenAIServer, "anthropic": AnthropicServer}


def _factory(kind: type[ScriptedServer]) -> Iterator[Callable[..., Any]]:
    servers: list[ScriptedServer] = []

    def make(script: Iterable[ScriptStep] = (), **kwargs: Any) -> Any:
        server = kind(script, **kwargs)
        servers.append(server)
        return server

    yield make
    for server in servers:
        server.close()


@pytest.fixture
def openai_server() -> Iterator[Callable[..., OpenAIServer]]:
    """``openai_server(script, reasoning_field=...) -> OpenAIServer``."""
    yield from _factory(OpenAIServer)


@pytest.fixture
def anthropic_server() -> Iterator[Callable[..., AnthropicServer]]:
    """``anthropic_server(script) -> AnthropicServer``."""
    yield from _factory(AnthropicServer)


@pytest.fixture(params=sorted(_SERVERS))
def wire_server(request: pytest.FixtureRequest) -> Iterator[Callable[..., ScriptedServer]]:
    """A factory parametrized over both providers; ``server.provider`` says which one.

    Use it to run one provider-neutral script against both SDKs.
    """
    yield from _factory(_SERVERS[request.param])
