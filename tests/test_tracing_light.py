"""The light tracer of a server that exports nothing: the SDK's spans, kept for the console."""

from __future__ import annotations

from typing import Any

import grpc
import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import NonRecordingSpan, SpanContext, StatusCode, TraceFlags
from opentelemetry.trace.span import TraceState

from tests.conftest import StartApp
from tests.harness import Harness, harness_factory  # noqa: F401
from tests.support import Turn
from treadle.loop import AgentLoop
from treadle.tools import Tool
from treadle.tracing.light import LightTracerProvider
from treadle.tracing.recent import RecentSpans
from treadle.v1 import agent_pb2, agent_service_pb2, agent_service_pb2_grpc, console_service_pb2, console_service_pb2_grpc

_MOVING = {"gen_ai.response.time_to_first_chunk", "gen_ai.tool.call.id", "treadle.run.id", "gen_ai.response.id"}
"""Attributes that differ between two runs of the same script."""


class Guard:
    id = "guard"

    def process_input(self, args: Any) -> None:
        return None


class Redactor:
    id = "redactor"

    def process_output_stream(self, args: Any) -> Any:
        return args.part


def _shape(spans: list[Any]) -> list[tuple[Any, ...]]:
    """What a run's spans say, ids and times aside: name, kind, parent's name, attributes, status."""
    by_id = {s.context.span_id: s for s in spans}
    out = []
    for s in spans:
        parent = by_id[s.parent.span_id].name if s.parent is not None else None
        attrs = tuple(sorted((k, v) for k, v in s.attributes.items() if k not in _MOVING))
        out.append((s.name, s.kind, parent, attrs, s.status.status_code, s.status.description,
                    tuple(e.name for e in s.events)))
    return sorted(out, key=repr)


async def test_a_run_makes_the_same_spans_as_with_the_sdk(harness_factory) -> None:
    script = [Turn.call("weather", {"city": "Oslo"}), Turn.say(["Sunny ", "today"])]
    sdk: Harness = harness_factory(list(script))
    light: Harness = harness_factory(list(script))
    recent = RecentSpans()
    light.loop = AgentLoop(light.registry, light.router, LightTracerProvider(recent).get_tracer("treadle"))
    shapes = []
    for h in (sdk, light):
        agent = h.agent(name="Forecaster", input_processors=[Guard()], output_processors=[Redactor()],
                        tools=[Tool("weather", lambda a, c: {"sky": "clear"})])
        result = await h.generate(agent, "weather in Oslo?")
        spans = h.spans() if h is sdk else recent.run_spans(result.run_id)
        assert len({s.context.trace_id for s in spans}) == 1
        shapes.append(_shape(spans))
    assert len(shapes[1]) > 5 and shapes[1] == shapes[0]


@pytest.mark.parametrize("light", [False, True])
def test_an_exception_is_recorded_and_sets_the_status_as_the_sdk_does(light: bool) -> None:
    recent, exporter = RecentSpans(), InMemorySpanExporter()
    if light:
        tracer = LightTracerProvider(recent).get_tracer("t")
    else:
        provider = TracerProvider()
        provider.add_span_processor(recent)
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        tracer = provider.get_tracer("t")
    with pytest.raises(ValueError):
        with tracer.start_as_current_span("outer", attributes={"treadle.run.id": "r1"}):
            with tracer.start_as_current_span("inner") as inner:
                inner.set_attribute("list", ["a", "b"])
                raise ValueError("bad")
    spans = {s.name: s for s in recent.run_spans("r1")}
    assert set(spans) == {"outer", "inner"}
    for s in spans.values():
        assert s.status.status_code is StatusCode.ERROR and s.status.description == "ValueError: bad"
        assert [e.name for e in s.events] == ["exception"]
        assert s.events[0].attributes["exception.type"] == "ValueError"
    assert spans["inner"].attributes["list"] == ("a", "b")
    assert spans["inner"].parent.span_id == spans["outer"].context.span_id
    assert not any(s.is_recording() for s in spans.values() if light)  # an ended span is read-only


def test_a_caller_s_trace_is_joined_and_its_sampling_decision_kept() -> None:
    recent = RecentSpans()
    tracer = LightTracerProvider(recent).get_tracer("t")
    state = TraceState([("vendor", "x")])
    for flags in (TraceFlags(TraceFlags.SAMPLED), TraceFlags(TraceFlags.DEFAULT)):
        parent = SpanContext(0xABC, 0xDEF, is_remote=True, trace_flags=flags, trace_state=state)
        span = tracer.start_span("child", context=trace.set_span_in_context(NonRecordingSpan(parent)))
        ctx = span.get_span_context()
        assert ctx.trace_id == 0xABC and ctx.span_id != 0xDEF and ctx.trace_state == state
        assert span.is_recording() == flags.sampled and ctx.trace_flags.sampled == flags.sampled
        span.end()
    root = tracer.start_span("root")
    assert root.get_span_context().trace_flags.sampled and root.get_span_context().is_valid


async def test_a_server_without_an_exporter_shows_a_stream_s_spans_in_the_console(
    start_app: StartApp, openai_server: Any
) -> None:
    server = openai_server([Turn.say(["Hel", "lo!"])])
    running = await start_app()  # no OTEL variables: nothing exported
    assert isinstance(running.app.tracer_provider, LightTracerProvider)
    async with grpc.aio.insecure_channel(running.target) as channel:
        agents = agent_service_pb2_grpc.AgentServiceStub(channel)
        await agents.CreateAgent(agent_service_pb2.CreateAgentRequest(agent=agent_pb2.Agent(
            id="echo", name="Echo", instructions="Be terse.", model="openai/gpt-4o-mini", base_url=server.base_url)))
        chunks = [c async for r in agents.Stream(agent_service_pb2.StreamRequest(agent_id="echo", prompt="hi"))
                  for c in r.chunks]
        run_id = chunks[0].run_id
        assert "".join(c.text_delta.text for c in chunks if c.HasField("text_delta")) == "Hello!"
        console = console_service_pb2_grpc.ConsoleServiceStub(channel)
        spans = (await console.ListSpans(console_service_pb2.ListSpansRequest(run_id=run_id))).spans
    assert [s.name for s in spans] == ["invoke_agent Echo", "step 0", "chat gpt-4o-mini"]
    root, step, chat = spans
    assert step.parent_span_id == root.span_id and chat.parent_span_id == step.span_id
    assert {s.trace_id for s in spans} == {root.trace_id} and len(root.trace_id) == 32
    assert root.attributes.fields["treadle.run.id"].string_value == run_id
    assert chat.attributes.fields["gen_ai.usage.output_tokens"].number_value > 0
    assert all(s.end_unix_nano >= s.start_unix_nano > 0 for s in spans)
