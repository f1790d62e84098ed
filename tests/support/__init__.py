"""Test support: loopback servers speaking the OpenAI and Anthropic wire formats, and scripts.

    with OpenAIServer([Turn.say(["Hel", "lo"]), Turn.call("get_weather", {"city": "Paris"})]) as s:
        ...  # point a client at s.base_url; assert on s.requests afterwards

Pytest fixtures (``openai_server``, ``anthropic_server``, ``wire_server``) live in
``tests.support.fixtures``.
"""

from .anthropic_wire import AnthropicServer
from .openai_wire import OpenAIServer
from .script import HttpError, ScriptedToolCall, ScriptedUsage, ScriptStep, Turn
from .server import RecordedRequest, ScriptedServer

__all__ = [
    "AnthropicServer",
    "HttpError",
    "OpenAIServer",
    "RecordedRequest",
    "ScriptStep",
    "ScriptedServer",
    "ScriptedToolCall",
    "ScriptedUsage",
    "Turn",
]

from treadle.providers.trust import ProviderTrust  # noqa: E402

LOOPBACK_TRUST = ProviderTrust({"openai": ("http://127.0.0.1:*",), "anthropic": ("http://127.0.0.1:*",)})
"""Tests that give a router the server's keys trust the loopback fakes, as an operator would."""
__all__ += ["LOOPBACK_TRUST"]
