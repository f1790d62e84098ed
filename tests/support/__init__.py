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
