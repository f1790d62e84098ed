"""Per-request agents in the loop: resolve an agent once per call, after the request context is
validated and before memory loads, into the frozen snapshot the run uses (``variants``).

The agent's ``resolver`` is a processor serving ``resolve_agent`` (in this process or attached
remotely: then its failure policy and timeout apply), or, for an agent written in Python, any
callable taking the ``ResolveAgentArgs``. It returns None or a dict of overrides.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import inspect
import time
from collections.abc import Mapping
from typing import Any

import jsonschema
from opentelemetry import context as otel_context

from ..agents import Agent, CallOptions, ProcessorRef, RunRequest
from ..core.args import ResolveAgentArgs, RunInfo, make_abort
from ..core.errors import (
    FailedPreconditionError,
    InvalidArgumentError,
    ProcessorError,
    ProcessorUnavailableError,
    TripwireError,
)
from ..core.messages import new_id
from ..registry import Registry
from ..variants import Resolution, check_resolved, has_dynamic_fields, normalise, resolve, resolve_declarative

class ResolverUnavailableError(Exception):
    """The agent's ``fail_closed`` resolver could not answer (not attached, timed out, gone):
    UNAVAILABLE, naming the processor and the hook."""


_OVERRIDABLE = ("model", "instructions", "tools", "input_processors", "output_processors",
                "error_processors", "default_options")


def check_request_context(agent: Agent, request_context: Mapping[str, Any]) -> None:
    """``InvalidArgumentError`` when the context does not match the agent's schema."""
    if agent.request_context_schema:
        try:
            jsonschema.validate(request_context, agent.request_context_schema)
        except jsonschema.ValidationError as e:
            path = "/".join(str(p) for p in e.absolute_path) or "(root)"
            raise InvalidArgumentError(f"request_context is invalid at {path}: {e.message}") from None


def _defaults(agent: Agent) -> CallOptions | None:
    d = agent.default_options
    return None if callable(d) and not isinstance(d, CallOptions) else d


def request_context_of(agent: Agent, request: RunRequest) -> dict[str, Any]:
    return request.options.merged_over(_defaults(agent)).request_context


async def resolve_for_call(registry: Registry, agent: Agent, request: RunRequest) -> Agent:
    """The snapshot the call runs: ``agent`` itself when it has nothing to resolve."""
    if agent.resolution is not None or not has_dynamic_fields(agent):
        return agent
    context = request_context_of(agent, request)
    check_request_context(agent, context)
    if not request.run_id:
        request.run_id = new_id("run")  # the resolver's invocation names the run
    call = None
    if agent.resolver is not None:
        async def call(resolved: Any, ctx: dict[str, Any]) -> dict[str, Any] | None:
            return await _run_resolver(registry, agent, resolved, ctx, request)
    started = time.perf_counter()
    out, resolution = await resolve(agent, context, call)
    had_instructions = bool(agent.variants.get("instructions")) or callable(agent.instructions)
    check_resolved(out, request.options.merged_over(out.default_options), had_instructions)
    out.resolution = dataclasses.replace(resolution, resolver=_resolver_name(agent.resolver),
                                         seconds=time.perf_counter() - started)
    return out


def _resolver_name(ref: Any) -> str:
    if ref is None:
        return ""
    if isinstance(ref, str):
        return ref
    if isinstance(ref, ProcessorRef):
        return ref.processor_id
    return str(getattr(ref, "id", "") or getattr(ref, "__name__", "") or type(ref).__name__)


def provisional(agent: Agent, request: RunRequest) -> Agent:
    """What ``plan`` checks a call against before it is resolved (a thread's run checks its
    request before it reserves the thread): the declarative variants applied; a Python
    callable or a resolver is not run here, so a field left to one is not checked."""
    if agent.resolution is not None or not has_dynamic_fields(agent):
        return agent
    context = request_context_of(agent, request)
    check_request_context(agent, context)
    out, matched = resolve_declarative(agent, context)
    dynamic = agent.resolver is not None
    for name in ("model", "instructions", "tools", "input_processors", "output_processors",
                 "error_processors", "default_options"):
        if callable(getattr(out, name)) and not isinstance(getattr(out, name), CallOptions):
            setattr(out, name, "" if name == "model" else None if name == "default_options" else [])
            dynamic = True
    if not dynamic:
        check_resolved(out, request.options.merged_over(out.default_options),
                       bool(agent.variants.get("instructions")))
    out.resolution = Resolution(model=out.model, matched=tuple(matched))
    out.resolver = None
    return out


async def _run_resolver(
    registry: Registry, agent: Agent, resolved: Agent, context: dict[str, Any], request: RunRequest,
) -> dict[str, Any] | None:
    ref = agent.resolver
    if isinstance(ref, (str, ProcessorRef)):
        target = registry.resolve_processor(ref)
        pid = ref if isinstance(ref, str) else ref.processor_id
    else:
        target, pid = ref, str(getattr(ref, "id", "") or getattr(ref, "__name__", "resolver"))
    fn = getattr(target, "resolve_agent", None) or (target if callable(target) else None)
    if fn is None:
        raise FailedPreconditionError(
            f"agent {agent.id!r}: resolver {pid!r} does not implement resolveAgent")
    memory = request.options.merged_over(_defaults(agent)).memory
    args = ResolveAgentArgs(
        agent=copy.copy(resolved), abort=make_abort(pid), request_context=context,
        tracing_context=otel_context.get_current(), abort_signal=asyncio.Event(),
        run=RunInfo(request.run_id, agent.id, memory.thread if memory else "",
                    memory.resource if memory else ""),
    )
    try:
        result = fn(args)
        if inspect.isawaitable(result):
            result = await result
    except TripwireError as e:
        raise FailedPreconditionError(f"agent {agent.id!r}: resolver {pid!r} refused the call: {e.reason}") from None
    except ProcessorUnavailableError as e:  # fail_closed: the call is refused, nothing ran
        raise ResolverUnavailableError(f"agent {agent.id!r}: {e}") from None
    except (InvalidArgumentError, FailedPreconditionError):
        raise
    except Exception as e:
        raise FailedPreconditionError(f"agent {agent.id!r}: {ProcessorError(pid, 'resolveAgent', e)}") from e
    finally:
        end = getattr(target, "end_run", None)
        if callable(end):
            end(request.run_id)
    return _overrides(agent.id, pid, result)


def _overrides(agent_id: str, pid: str, result: Any) -> dict[str, Any] | None:
    """A resolver's answer as domain values (the remote path has decoded it already)."""
    if result is None:
        return None
    if not isinstance(result, Mapping):
        raise FailedPreconditionError(f"agent {agent_id!r}: {ProcessorError(pid, 'resolveAgent', f'returned {type(result).__name__}, not a dict of overrides')}")
    out: dict[str, Any] = {}
    for name, value in result.items():
        if name not in _OVERRIDABLE:
            raise FailedPreconditionError(f"agent {agent_id!r}: {ProcessorError(pid, 'resolveAgent', f'returned an unknown override {name!r}: use ' + ', '.join(_OVERRIDABLE))}")
        if name == "default_options":
            if value is not None and not isinstance(value, CallOptions):
                raise FailedPreconditionError(f"agent {agent_id!r}: {ProcessorError(pid, 'resolveAgent', 'default_options must be CallOptions')}")
            out[name] = value
        else:
            out[name] = normalise(name, value, agent_id)
    return out
