"""The processors that ship with Treadle, addressable by name and options.

An agent's processor list may name one as ``{"builtin": "pii", "options": {"strategy":
"block"}}`` (config file, ``CreateAgent``) or hold the object (``PII(strategy="block")``, from
Python). Each name maps to an ordinary processor class and the frozen dataclass that checks its
options (``_options.parse_options``: the one place options are validated).

Every agent also gets ``default_error_stack()`` as its error processors unless it lists its own
or sets ``error_processor_defaults`` to false: history repair, prefill repair, then transient
retry, in that order.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from opentelemetry.trace import Tracer

from ._judge import JudgeOptions
from ._options import parse_options
from .batch_parts import BatchParts, BatchPartsOptions
from .clock import Clock, FakeClock, SystemClock
from .history import ProviderHistoryCompat, ProviderHistoryCompatOptions
from .moderation import Moderation
from .pii import PII, PIIOptions
from .prefill import PrefillErrorHandler, PrefillErrorHandlerOptions
from .prompt_injection import PromptInjection
from .stream_retry import StreamErrorRetry, StreamErrorRetryOptions
from .token_limiter import TokenLimiter, TokenLimiterOptions
from .tool_call_filter import ToolCallFilter, ToolCallFilterOptions
from .unicode import UnicodeNormalizer, UnicodeNormalizerOptions


@dataclass
class BuiltinContext:
    """What some built-ins need from the server: the provider router (model-backed detectors),
    the tracer for their model calls, and the clock retries wait on."""

    models: Any = None
    tracer: Tracer | None = None
    clock: Clock = dataclasses.field(default_factory=SystemClock)


@dataclass(frozen=True)
class _Builtin:
    cls: type
    options: type
    needs: tuple[str, ...] = ()
    """Context the constructor takes: ``models``, ``tracer``, ``clock``."""


BUILTINS: dict[str, _Builtin] = {
    "prefill-error-handler": _Builtin(PrefillErrorHandler, PrefillErrorHandlerOptions),
    "provider-history-compat": _Builtin(ProviderHistoryCompat, ProviderHistoryCompatOptions),
    "stream-error-retry": _Builtin(StreamErrorRetry, StreamErrorRetryOptions, ("clock",)),
    "unicode-normalizer": _Builtin(UnicodeNormalizer, UnicodeNormalizerOptions),
    "token-limiter": _Builtin(TokenLimiter, TokenLimiterOptions),
    "tool-call-filter": _Builtin(ToolCallFilter, ToolCallFilterOptions),
    "batch-parts": _Builtin(BatchParts, BatchPartsOptions),
    "pii": _Builtin(PII, PIIOptions),
    "moderation": _Builtin(Moderation, JudgeOptions, ("models", "tracer")),
    "prompt-injection": _Builtin(PromptInjection, JudgeOptions, ("models", "tracer")),
}

DEFAULT_STREAM_RETRIES = 2
"""Transient-error retries of the default error stack (the run's budget of 3 caps all of them)."""


class BuiltinError(ValueError):
    """An unknown built-in name or a bad option; the message names it."""


def check(name: str, options: Mapping[str, Any] | None) -> Any:
    """The parsed options of built-in ``name``; ``BuiltinError`` naming what is wrong."""
    entry = BUILTINS.get(name)
    if entry is None:
        raise BuiltinError(f"unknown built-in processor {name!r}; known: {', '.join(BUILTINS)}")
    try:
        return parse_options(entry.options, options)
    except ValueError as e:
        raise BuiltinError(f"built-in processor {name!r}: {e}") from None


def build(name: str, options: Mapping[str, Any] | None, *, id: str = "",
          context: BuiltinContext | None = None) -> Any:
    """A new processor for built-in ``name`` with ``options`` (its id: ``id`` or ``name``)."""
    parsed = check(name, options)
    entry = BUILTINS[name]
    context = context or BuiltinContext()
    kwargs = {f.name: getattr(parsed, f.name) for f in dataclasses.fields(parsed)}
    kwargs.update({need: getattr(context, need) for need in entry.needs})
    return entry.cls(id=id or name, **kwargs)


def default_error_stack(context: BuiltinContext | None = None) -> list[Any]:
    """History repair, prefill repair, transient retry: what an agent without error processors
    of its own gets."""
    clock = (context or BuiltinContext()).clock
    return [
        ProviderHistoryCompat(),
        PrefillErrorHandler(),
        StreamErrorRetry(max_retries=DEFAULT_STREAM_RETRIES, clock=clock),
    ]


NAMES: tuple[str, ...] = tuple(BUILTINS)

__all__ = [
    "BUILTINS",
    "NAMES",
    "PII",
    "BatchParts",
    "BuiltinContext",
    "BuiltinError",
    "Clock",
    "FakeClock",
    "Moderation",
    "PrefillErrorHandler",
    "PromptInjection",
    "ProviderHistoryCompat",
    "StreamErrorRetry",
    "SystemClock",
    "TokenLimiter",
    "ToolCallFilter",
    "UnicodeNormalizer",
    "build",
    "check",
    "default_error_stack",
]

