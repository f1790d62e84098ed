"""``treadle.testing``, used as users use it in their own tests: a ``ScriptedModel`` standing in
for every model of an app (``app.loop.models = ScriptedModels(model)``) or of an ``AgentLoop``,
with no network and no provider SDK."""

from __future__ import annotations

from typing import Any

from opentelemetry import trace

from treadle.agents import Agent, CallOptions, RunRequest
from treadle.app import TreadleApp
from treadle.core.chunks import Usage
from treadle.config import Settings
from treadle.loop import AgentLoop
from treadle.core.messages import Message, SystemMessage, ToolResultPart
from treadle.providers.base import ModelRequest
from treadle.registry import Registry
from treadle.testing import ScriptedModel, ScriptedModels, text_response, tool_call_response
from treadle.tools import Tool
from treadle_client import AgentClient
from treadle.v1 import chunk_pb2


async def test_an_app_served_with_a_scripted_model(start_app: Any) -> None:
    model = ScriptedModel([tool_call_response("weather", {"city": "Oslo"}), text_response(["Sunny ", "in Oslo."])])

    def setup(app: TreadleApp) -> None:
        app.add_tool(Tool("weather", lambda args, ctx: {"city": args["city"], "sky": "clear"}))
        app.add_agent(Agent(id="forecaster", model="openai/gpt-4o-mini", tools=["weather"],
                            instructions=[SystemMessage("Be brief.")]))
        app.loop.models = ScriptedModels(model)

    running = await start_app(setup=setup)
    async with AgentClient(running.target) as client:
        response = await client.generate("forecaster", "weather in Oslo?")
    assert response.text == "Sunny in Oslo."
    assert response.finish_reason == chunk_pb2.FINISH_REASON_STOP
    assert (response.usage.input_tokens, response.usage.output_tokens) == (20, 3)  # 10+1 and 10+2
    # What the model was asked: the second request carries the tool's result.
    assert len(model.requests) == 2 and model.script == []
    [result] = [p for m in model.requests[1].prompt if m.role == "tool" for p in m.content]
    assert isinstance(result, ToolResultPart)
    assert (result.tool_name, result.result) == ("weather", {"city": "Oslo", "sky": "clear"})


async def test_a_scripted_response_can_depend_on_the_request_and_running_out_is_an_error() -> None:
    def echo(request: ModelRequest) -> list[Any]:
        last = request.prompt[-1].content[0]
        return text_response(f"you said: {last.text}", usage=Usage(1, 1, 2))  # type: ignore[union-attr]

    model = ScriptedModel(provider="fake", model_id="echo-1")
    model.add(echo)
    models = ScriptedModels(model)
    models.validate("anything/at-all")
    loop = AgentLoop(Registry(), models, trace.get_tracer("test"))
    agent = Agent(id="echo", model="fake/echo-1")
    result = await loop.generate(agent, RunRequest([Message.user("hello")], CallOptions()))
    assert (result.text, result.usage, result.steps[0].model_id) == ("you said: hello", Usage(1, 1, 2), "echo-1")
    assert (model.provider, model.model_id) == ("fake", "echo-1")

    again = await loop.generate(agent, RunRequest([Message.user("hello")], CallOptions()))
    assert again.finish_reason == "error"
    assert again.error is not None and again.error.message == "the scripted model ran out of responses"
    await models.aclose()
