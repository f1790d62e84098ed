"""The provider fakes refuse what the real APIs refuse, with the APIs' own 400 error JSON; and a
test that leaves a fake with unplayed script, a scripted callable that raised, or a refused
request fails at teardown (``fakes_played_out`` in ``tests/conftest.py``).

The requests here are sent with the real ``openai`` and ``anthropic`` SDKs, as Treadle sends them.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import anthropic
import openai
import pytest

from tests.support import AnthropicServer, OpenAIServer, Turn

pytest_plugins = ["pytester"]

USER = {"role": "user", "content": "weather?"}
CALL = {"role": "assistant", "content": None,
        "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}]}


async def _openai(server: OpenAIServer, **body: Any) -> openai.BadRequestError:
    async with openai.AsyncOpenAI(api_key="sk-test", base_url=server.base_url, max_retries=0) as client:
        with pytest.raises(openai.BadRequestError) as raised:
            await client.chat.completions.create(model="gpt-test", stream=True, **body)
    return raised.value


@pytest.mark.parametrize(("messages", "param", "message"), [
    ([USER, {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}], "messages.[1].role",
     "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'."),
    ([USER, CALL, {"role": "tool", "tool_call_id": "call_2", "content": "sunny"}], "messages.[2].tool_call_id",
     "Invalid parameter: 'tool_call_id' of 'call_2' not found in 'tool_calls' of previous message."),
    ([USER, CALL, USER], "messages.[1].role",
     "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. "
     "The following tool_call_ids did not have response messages: call_1"),
    ([{"role": "model", "content": "hi"}], "messages.[0].role",
     "Invalid value: 'model'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and "
     "'developer'."),
    ([{"role": "user", "content": [{"type": "image", "image": "x"}]}], "messages.[0].content.[0].type",
     "Invalid value: 'image'. Supported values are: 'text', 'image_url', 'input_audio', 'refusal', and 'file'."),
])
async def test_the_openai_fake_refuses_a_malformed_conversation(messages: list[Any], param: str, message: str) -> None:
    with OpenAIServer([Turn.say("never")]) as server:
        error = await _openai(server, messages=messages)
        assert error.status_code == 400
        assert error.body == {"message": message, "type": "invalid_request_error", "param": param, "code": None}
        assert server.take_failures() == [f"scripted openai server: request #1 refused as the real API would: {message}"]
        assert server.remaining == 1  # a refused request plays no turn
        server.script.clear()


async def test_the_openai_fake_refuses_bad_tools() -> None:
    with OpenAIServer() as server:
        tool = {"type": "function", "function": {"name": "weather", "parameters": {"type": "string"}}}
        error = await _openai(server, messages=[USER], tools=[tool])
        assert error.body["message"] == ("Invalid schema for function 'weather': schema must be a JSON Schema of "
                                         "'type: \"object\"', got 'type: \"string\"'.")
        error = await _openai(server, messages=[USER], tool_choice="auto")
        assert error.body["param"] == "tool_choice"
        assert len(server.take_failures()) == 2


async def _anthropic(server: AnthropicServer, **body: Any) -> tuple[int, Any]:
    """The status and error body of the refused request."""
    if "max_tokens" not in body:  # the SDK itself insists on max_tokens: send this one raw
        raw = json.dumps({"model": "claude-test", "stream": True, **body}).encode()
        request = urllib.request.Request(f"{server.base_url}/v1/messages", raw, {"content-type": "application/json"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        return refused.value.code, json.loads(refused.value.read())
    async with anthropic.AsyncAnthropic(api_key="sk-test", base_url=server.base_url, max_retries=0) as client:
        with pytest.raises(anthropic.BadRequestError) as raised:
            await client.messages.create(model="claude-test", stream=True, **body)
    return raised.value.status_code, raised.value.body


TOOL_USE = {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {}}]}


@pytest.mark.parametrize(("body", "message"), [
    ({"messages": [{"role": "user", "content": "hi"}]}, "max_tokens: Field required"),
    ({"max_tokens": 100, "messages": [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]},
     'messages: roles must alternate between "user" and "assistant", but found multiple "user" roles in a row'),
    ({"max_tokens": 100, "messages": [{"role": "user", "content": "a"}, TOOL_USE,
                                      {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_2",
                                                                     "content": "sunny"}]}]},
     "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_2. Each `tool_result` "
     "block must have a corresponding `tool_use` block in the previous message."),
    ({"max_tokens": 100, "messages": [{"role": "user", "content": "a"}, TOOL_USE, {"role": "user", "content": "b"}]},
     "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1. Each "
     "`tool_use` block must have a corresponding `tool_result` block in the next message."),
    ({"max_tokens": 100, "messages": [{"role": "system", "content": "be brief"}]},
     'messages: Unexpected role "system". The Messages API accepts a top-level `system` parameter, not "system" '
     "as an input message role."),
    ({"max_tokens": 100, "messages": [{"role": "user", "content": [{"type": "tool_use", "id": "t", "name": "w",
                                                                     "input": {}}]}]},
     "messages.0.content.0: `tool_use` blocks can only be in `assistant` messages"),
    ({"max_tokens": 100, "messages": [{"role": "user", "content": "a"}],
      "tools": [{"name": "weather", "input_schema": {"type": "object", "properties": {"city": {"type": 5}}}}]},
     "tools.0.custom.input_schema: JSON schema is invalid. It must match JSON Schema draft 2020-12."),
])
async def test_the_anthropic_fake_refuses_a_malformed_request(body: dict[str, Any], message: str) -> None:
    with AnthropicServer([Turn.say("never")]) as server:
        status, error = await _anthropic(server, **body)
        assert status == 400
        assert error["type"] == "error" and error["request_id"].startswith("req_")
        assert error["error"] == {"type": "invalid_request_error", "message": message}
        assert server.take_failures() == [
            f"scripted anthropic server: request #1 refused as the real API would: {message}"
        ]
        server.script.clear()


def test_a_test_leaving_a_fake_unplayed_refused_or_raising_fails(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makeconftest("from tests.conftest import fakes_played_out  # noqa: F401\n")
    pytester.makepyfile(test_inner='''
import openai
import pytest
from tests.support import OpenAIServer, Turn


def ask(server):
    client = openai.OpenAI(api_key="k", base_url=server.base_url, max_retries=0)
    return client.chat.completions.create(model="m", stream=True, messages=[{"role": "user", "content": "hi"}])


def test_unplayed():
    with OpenAIServer([Turn.say("a"), Turn.say("b")]) as server:
        list(ask(server))


def test_raising():
    def turn(body):
        raise ValueError("script bug")

    with OpenAIServer([turn]) as server:
        with pytest.raises(openai.InternalServerError):
            ask(server)


def test_refused():
    with OpenAIServer([Turn.say("a")]) as server:
        client = openai.OpenAI(api_key="k", base_url=server.base_url, max_retries=0)
        with pytest.raises(openai.BadRequestError):
            client.chat.completions.create(model="m", stream=True, messages=[])
        server.script.clear()


def test_played_out():
    with OpenAIServer([Turn.say("a")]) as server:
        list(ask(server))
''')
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=4, errors=3)
    result.stdout.fnmatch_lines([
        "*scripted openai server: 1 scripted turn(s) never played*",
        "*scripted openai server: turn #1 raised ValueError('script bug')*",
        "*scripted openai server: request #1 refused as the real API would: Invalid 'messages': empty array.*",
    ])
