"""OpenTelemetry for the runtime: span names, GenAI attributes, exporter set-up, W3C context."""

from .setup import build_meter_provider, build_tracer_provider
from .spans import (
    ATTR,
    agent_span,
    chat_span,
    inject_context,
    processor_span,
    step_span,
    tool_span,
)

__all__ = [
    "ATTR",
    "agent_span",
    "build_meter_provider",
    "build_tracer_provider",
    "chat_span",
    "inject_context",
    "processor_span",
    "step_span",
    "tool_span",
]
