"""The span tree of one run, GenAI attributes, and OTLP export configured from OTEL_* variables."""

from __future__ import annotations

from pathlib import Path

from opentelemetry.sdk.trace import ReadableSpan

from tests.harness import Harness, harness_factory  # noqa: F401
from tests.support import Turn
from tests.support.otlp import OtlpReceiver, otlp  # noqa: F401
from treadle.tools import Tool
from treadle.tracing import build_tracer_provider


class Guard:
    id = "guard"

    def process_input(self, args):
        return None

    def process_input_step(self, args):
        return None


class Redactor:
    id = "redactor"

    def process_output_stream(self, args):
        return args.part

    def process_tool_result(self, args):
        return None


def _children(spans: list[ReadableSpan], parent: ReadableSpan) -> list[ReadableSpan]:
    return [s for s in spans if s.parent is not None and s.parent.span_id == parent.context.span_id]


def _names(spans: list[ReadableSpan]) -> list[str]:
    return [s.name for s in sorted(spans, key=lambda s: s.start_time or 0)]


async def test_span_tree_of_a_run_with_a_tool_and_two_processors(harness_factory) -> None:
    h: Harness = harness_factory([Turn.call("weather", {"city": "Oslo"}), Turn.say(["Sunny ", "today"])])
    agent = h.agent(name="Forecaster", input_processors=[Guard()], output_processors=[Redactor()],
                    tools=[Tool("weather", lambda a, c: {"sky": "clear"})])
    await h.generate(agent, "weather in Oslo?")
    spans = h.spans()
    roots = [s for s in spans if s.parent is None]
    assert [r.name for r in roots] == ["invoke_agent Forecaster"]
    root = roots[0]
    assert len({s.context.trace_id for s in spans}) == 1
    assert root.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert root.attributes["gen_ai.agent.id"] == agent.id

    # The model's ``finish`` is seen in its step: no stream span after the steps.
    assert _names(_children(spans, root)) == ["processInput guard", "step 0", "step 1"]
    step0 = next(s for s in spans if s.name == "step 0")
    step1 = next(s for s in spans if s.name == "step 1")
    assert _names(_children(spans, step0)) == [
        "processInputStep guard",
        "processOutputStream redactor",  # opens at the step-start chunk, before the call
        "chat test-model",
        "execute_tool weather",
        "processToolResult redactor",
    ]
    assert _names(_children(spans, step1)) == [
        "processInputStep guard", "processOutputStream redactor", "chat test-model",
    ]

    chat = next(s for s in _children(spans, step1) if s.name.startswith("chat"))
    attrs = chat.attributes
    assert attrs["gen_ai.operation.name"] == "chat"
    assert attrs["gen_ai.provider.name"] == "openai"
    assert attrs["gen_ai.request.model"] == "test-model"
    assert attrs["gen_ai.response.model"] == "test-model"
    assert tuple(attrs["gen_ai.response.finish_reasons"]) == ("stop",)
    assert attrs["gen_ai.usage.input_tokens"] > 0 and attrs["gen_ai.usage.output_tokens"] > 0
    assert attrs["gen_ai.response.time_to_first_chunk"] >= 0

    tool = next(s for s in spans if s.name == "execute_tool weather")
    assert tool.attributes["gen_ai.tool.name"] == "weather"
    assert tool.attributes["gen_ai.tool.call.id"]

    stream_span = next(s for s in _children(spans, step1) if s.name.startswith("processOutputStream"))
    assert stream_span.attributes["treadle.processor.id"] == "redactor"
    assert stream_span.attributes["treadle.processor.hook"] == "processOutputStream"
    assert stream_span.attributes["treadle.processor.chunk_count"] >= 4  # step-start, deltas, ...
    hook_span = next(s for s in spans if s.name == "processInput guard")
    assert hook_span.attributes["treadle.processor.outcome"] == "continue"
    assert hook_span.attributes["treadle.processor.retry_count"] == 0


async def test_abort_outcome_recorded_on_the_hook_span(harness_factory) -> None:
    class Stop:
        id = "stop"

        def process_input(self, args):
            args.abort("no")

    h: Harness = harness_factory([])
    await h.generate(h.agent(input_processors=[Stop()]), "x")
    span = next(s for s in h.spans() if s.name == "processInput stop")
    assert span.attributes["treadle.processor.outcome"] == "abort"


def test_no_exporter_without_otel_variables() -> None:
    assert build_tracer_provider({}) is None


async def test_otlp_http_export_when_configured(harness_factory, otlp: OtlpReceiver) -> None:
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": otlp.base, "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
           "OTEL_SERVICE_NAME": "treadle-test"}
    provider = build_tracer_provider(env)  # the injected env is enough: os.environ untouched
    assert provider is not None
    h: Harness = harness_factory([Turn.say("hi")])
    h.loop.tracer = provider.get_tracer("treadle")
    await h.generate(h.agent(name="Exported"), "x")
    provider.force_flush()
    assert otlp.arrived.wait(10)
    names = [span.name for span in otlp.spans()]
    assert "invoke_agent Exported" in names and "chat test-model" in names
    service = {
        a.value.string_value
        for req in otlp.trace_requests()
        for rs in req.resource_spans
        for a in rs.resource.attributes
        if a.key == "service.name"
    }
    assert service == {"treadle-test"}
    provider.shutdown()


async def test_metrics_exported_over_otlp_when_configured(otlp: OtlpReceiver, tmp_path: Path) -> None:
    from treadle.app import TreadleApp
    from treadle.config import Settings

    assert TreadleApp(Settings(example_agent=False, data_dir=tmp_path), env={}).meter_provider is None
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": otlp.base, "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}
    app = TreadleApp(Settings(example_agent=False, data_dir=tmp_path), env=env)
    assert app.meter_provider is not None
    app.processors.m_streams_started.add(1)
    app.meter_provider.force_flush()
    assert otlp.arrived.wait(10)
    assert set(otlp.paths) == {"/v1/metrics"}
    assert otlp.metrics()["treadle.processor.streams_started"] == [1]
    app.meter_provider.shutdown()


async def test_each_process_output_stream_call_runs_in_its_span_and_keeps_its_own_arguments(harness_factory) -> None:
    from opentelemetry import trace

    class Keeper:
        """Keeps every ``args`` it is given and what the current span was during the call."""

        id = "keeper"

        def __init__(self) -> None:
            self.calls: list[tuple[object, str, int]] = []

        async def process_output_stream(self, args):
            text = args.part.payload.text if args.part.type == "text-delta" else ""
            self.calls.append((args, text, trace.get_current_span().get_span_context().span_id))
            return args.part

    keeper = Keeper()
    h: Harness = harness_factory([Turn.say(["one ", "two ", "three"])])
    await h.generate(h.agent(output_processors=[Redactor(), keeper]), "count")
    stream_span = next(s for s in h.spans() if s.name == "processOutputStream keeper")
    assert {span_id for _, _, span_id in keeper.calls} == {stream_span.context.span_id}
    # every invocation got its own arguments, and they still show the chunk it was given
    assert len({id(args) for args, _, _ in keeper.calls}) == len(keeper.calls)
    assert [args.part.payload.text for args, text, _ in keeper.calls if text] == ["one ", "two ", "three"]
    assert stream_span.attributes["treadle.processor.chunk_count"] == len(keeper.calls)
