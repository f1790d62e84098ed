"""Processes in three languages serving one agent's run against the real Python server.

- A Go tool (``clients/go/internal/toolsclient``, which also drives the run with the Go agent
  client), a TypeScript tool (``clients/typescript/examples/tool.ts``) and a Java tool
  (``dev.treadle.interop.JavaWeather``) are called by one agent in one run.
- A TypeScript, a Go and a Java processor (``clients/typescript/examples/tracing.ts``,
  ``clients/go/internal/tracedecho``, ``dev.treadle.examples.TracingExample``), each on its SDK's
  tracing, on one agent's stream: every SDK's invocation spans are children of the server's hook
  spans, so the run is one trace across the four processes.
"""

from __future__ import annotations

import asyncio
import json
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import StartApp
from tests.java_build import java, java_build  # noqa: F401
from tests.remote.procs import Child
from tests.support import OpenAIServer, Turn
from tests.support.otlp import OtlpReceiver, otlp  # noqa: F401
from tests.support.go import GoBuild
from tests.support.script import ScriptedToolCall
from tests.test_go_sdk import toolsclient  # noqa: F401
from tests.test_typescript_sdk import agent, node  # noqa: F401
from treadle.agents import ProcessorRef, RunRequest
from treadle.core.messages import Message

canonical = partial(json.dumps, sort_keys=True)


async def test_a_go_a_typescript_and_a_java_tool_in_one_run(
    start_app: StartApp, node, java, toolsclient: Path,  # noqa: F811
) -> None:
    calls = [ScriptedToolCall("go-weather", {"city": "Oslo"}, id="c-go"),
             ScriptedToolCall("weather", {"city": "Oslo"}, id="c-ts"),
             ScriptedToolCall("java-wind", {"city": "Oslo"}, id="c-java")]
    model = OpenAIServer([Turn(tool_calls=calls), Turn.say("Clear, sunny and calm in Oslo."),
                          Turn.say("Still clear.")])
    try:
        running = await start_app()
        running.app.add_agent(agent(model, "weather", tools=["go-weather", "weather", "java-wind"]))
        ts_tool = await node("tool.ts", running.target)
        java_tool = await java("dev.treadle.interop.JavaWeather", running.target)
        await java_tool.expect("ready")
        for name in ("weather", "java-wind"):
            await running.app.tool_hub.wait_attached(name, timeout=30)
        # The Go program serves go-weather, then streams the agent's answer with the Go client.
        proc = await asyncio.create_subprocess_exec(
            str(toolsclient), running.target, "weather", stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        stdout, stderr = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 0, stderr.decode()
        out = json.loads(stdout)
        assert out["stream_text"] == "Clear, sunny and calm in Oslo."
        assert sorted(out["tool_results"], key=canonical) == sorted([
            {"city": "Oslo", "sky": "clear"},
            {"city": "Oslo", "forecast": "sunny", "celsius": 21},
            {"city": "Oslo", "wind": "calm", "by": "java"},
        ], key=canonical)
        assert sorted(out["progress"], key=canonical) == [{"by": "java", "city": "Oslo"}, {"city": "Oslo"}]  # data-progress of Go and Java
        # The model got the three results, each as the answer to its own call.
        tool_messages = {m["tool_call_id"]: json.loads(m["content"])
                         for m in model.recorded[1].body["messages"] if m["role"] == "tool"}
        assert tool_messages == {
            "c-go": {"city": "Oslo", "sky": "clear"},
            "c-ts": {"city": "Oslo", "forecast": "sunny", "celsius": 21},
            "c-java": {"city": "Oslo", "wind": "calm", "by": "java"},
        }
        assert out["generate_text"] == "Still clear."
        await ts_tool.stop()
    finally:
        model.close()


def _java_spans(lines: list[str]) -> list[dict[str, Any]]:
    return [json.loads(line.removeprefix("span ")) for line in lines if line.startswith("span ")]


async def test_one_trace_across_the_server_and_typescript_go_and_java_processors(
    start_app: StartApp, node, java, otlp: OtlpReceiver, go_build: GoBuild,  # noqa: F811
) -> None:
    model = OpenAIServer([Turn.say(["traced ", "answer"])])
    try:
        running = await start_app(env={"OTEL_EXPORTER_OTLP_ENDPOINT": otlp.base,
                                       "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"})
        processors = ("traced-echo", "go-traced-echo", "java-traced-echo")
        traced = agent(model, output_processors=[ProcessorRef(p) for p in processors])
        running.app.add_agent(traced)
        ts = await node("tracing.ts", running.target, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=otlp.endpoint)
        jv = await java("dev.treadle.examples.TracingExample", running.target)
        await jv.expect("ready")
        go = Child(await asyncio.create_subprocess_exec(str(go_build("tracedecho")), running.target,
                                                        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE))
        await go.expect("ready")
        for pid in processors:
            assert await running.app.processors.wait_attached(pid, 30)
        result = await running.app.loop.generate(traced, RunRequest([Message.user("hi")]))
        assert result.text == "traced answer"
        assert await ts.stop() == 0  # shutting the provider down exports its spans
        await jv.stop()
        go.proc.terminate()
        assert go.proc.stdout is not None
        go.lines.extend((await go.proc.stdout.read()).decode().splitlines())
        await go.close()
        assert running.app.tracer_provider is not None
        running.app.tracer_provider.force_flush()
        by_scope: dict[str, list[Any]] = {}
        for req in otlp.trace_requests():
            for rs in req.resource_spans:
                for ss in rs.scope_spans:
                    by_scope.setdefault(ss.scope.name, []).extend(ss.spans)
        typescript = by_scope.pop("@treadle/client")
        server = [s for spans in by_scope.values() for s in spans]
        java_spans = _java_spans(jv.lines)
        assert {s["name"] for s in java_spans} == {"processOutputStream java-traced-echo"}
        assert {s.name for s in typescript} == {"processOutputStream traced-echo"}
        trace_id = typescript[0].trace_id
        assert {s.trace_id for s in typescript + server} == {trace_id}  # one trace ...
        assert {s["traceId"] for s in java_spans} == {trace_id.hex()}  # ... the Java spans too
        go_spans = [json.loads(line.removeprefix("span ")) for line in go.lines if line.startswith("span ")]
        assert {s["name"] for s in go_spans} == {"processOutputStream go-traced-echo"}
        assert {s["trace_id"] for s in go_spans} == {trace_id.hex()}  # ... and the Go spans
        hook_spans = {name: {s.span_id.hex() for s in server if s.name == f"processOutputStream {name}"}
                      for name in processors}
        assert all(s.parent_span_id.hex() in hook_spans["traced-echo"] for s in typescript)
        assert all(s["parentSpanId"] in hook_spans["java-traced-echo"] for s in java_spans)
        assert all(s["parent_span_id"] in hook_spans["go-traced-echo"] for s in go_spans)
    finally:
        model.close()
