"""The span tree of a multi-step run with a REAL remote processor, in every delivery mode.

One run with a tool call (step 0) and an answer (step 1), the ``tests.remote.chaos_main``
processor as output processor, in lock-step, pipelined and windowed delivery. The server's spans
are read from its exporter, the processor process's from the OTLP receiver it exports to. In
every mode:

- every span starts while its parent is open (the same clock: one machine);
- each step's ``processOutputStream`` span of the server (the last step's covers the model's
  ``finish``) is a child of that step;
- each span of the processor process is a child of the server's stream span of the step its
  chunks belong to (``treadle.step.number``).
"""

from __future__ import annotations

from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan

from tests.support import Turn
from tests.support.otlp import OtlpReceiver, otlp  # noqa: F401
from tests.test_remote_processes import PID, Processor, Server, Spawn, _id, processor, server, until, visible  # noqa: F401
from treadle.agents import Agent, ProcessorRef
from treadle.core.messages import SystemMessage
from treadle.tools import Tool

STREAM = f"processOutputStream {PID}"


def _parent_of(span: ReadableSpan, spans: list[ReadableSpan]) -> ReadableSpan | None:
    if span.parent is None:
        return None
    return next(s for s in spans if s.context.span_id == span.parent.span_id)


@pytest.mark.parametrize("delivery", ["per_chunk", "pipelined", "windowed"])
async def test_every_stream_span_is_under_the_step_it_belongs_to(
    server: Any, processor: Spawn, otlp: OtlpReceiver, delivery: str,
) -> None:
    s: Server = await server()
    s.app.add_tool(Tool("weather", lambda a, c: {"sky": "clear"}))
    model = s.model([Turn.call("weather", {"city": "Oslo"}), Turn.say(["Sunny ", "today"])])
    s.app.add_agent(Agent(id="forecaster", name="forecaster", model="openai/test-model", base_url=model.base_url,
                          instructions=[SystemMessage("Be brief.")], tools=["weather"],
                          output_processors=[ProcessorRef(PID)]))
    child: Processor = await processor(s, "--delivery", delivery,
                                       env={"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": otlp.endpoint})
    chunks = await s.stream("forecaster", "weather in Oslo?")
    assert visible(chunks)[-4:] == ["text_end", "data:data-word-count", "step_finish", "finish:FINISH_REASON_STOP"]
    await until(lambda: any(sp.name == "invoke_agent forecaster" for sp in s.server_spans()))
    await child.send("flush")
    await child.expect("flushed")

    local = s.server_spans()
    assert [sp.name for sp in local if sp.parent is None] == ["invoke_agent forecaster"]
    steps = {sp.attributes["treadle.step.number"]: sp for sp in local if sp.name.startswith("step ")}
    assert sorted(steps) == [0, 1]

    # Every server span starts while its parent is open.
    for sp in local:
        parent = _parent_of(sp, local)
        if parent is not None:
            assert parent.start_time <= sp.start_time <= parent.end_time, (sp.name, parent.name)

    # One stream span per step, under it.
    streams = [sp for sp in local if sp.name == STREAM]
    assert sorted(_parent_of(sp, local).name for sp in streams) == ["step 0", "step 1"]  # type: ignore[union-attr]
    by_parent = {_parent_of(sp, local).context.span_id: sp for sp in streams}  # type: ignore[union-attr]
    stream_of_step = {n: by_parent[step.context.span_id] for n, step in steps.items()}

    # The processor's spans: each under the server's stream span of its step, opened while it was.
    remote = [sp for sp in otlp.spans() if sp.name == STREAM]
    kinds = {int(r["inv"], 16): r["type"] for r in child.reports("chunk")}
    assert "finish" in kinds.values() and list(kinds.values()).count("step-start") == 2
    for sp in remote:
        step = next(a.value.int_value for a in sp.attributes if a.key == "treadle.step.number")
        parent = stream_of_step[step]
        assert _id(sp.parent_span_id) == parent.context.span_id, (kinds[_id(sp.span_id)], step)
        assert parent.start_time <= sp.start_time_unix_nano <= parent.end_time
    assert {kinds[_id(sp.span_id)] for sp in remote} >= {"step-start", "tool-call", "text-delta", "finish"}
