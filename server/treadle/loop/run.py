"""The agent loop's orchestration: plan a run, run its steps, end it.

``stream`` is the one path; ``generate`` consumes it. The loop knows nothing of gRPC, config
files or storage engines.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from dataclasses import replace
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import jsonschema
from opentelemetry import trace
from opentelemetry.trace import Span, Tracer

from ..agents import DEFAULT_MAX_STEPS, Agent, RunRequest, lane_for_call
from ..core.chunks import Chunk, ErrorPayload, Finish, FinishReason, SkippedProcessor, Start, Tripwire, Usage
from ..core.errors import InvalidArgumentError, ProcessorError, TripwireError
from ..core.message_list import MessageList
from ..core.messages import Message, new_id
from ..core.tool_payload import ToolPayloadPolicy
from ..processors.builtin import default_error_stack
from ..core.args import OutputResult, ProcessInputArgs, ProcessOutputResultArgs, StepResult
from ..core.processor import implements
from ..processors.parallel import ParallelGroup, group_refs
from ..processors.runner import ChainRunner, RunScope
from ..providers.base import ModelConfig, ModelSettings
from ..registry import Registry
from ..tools import ToolHooks
from ..tracing.spans import agent_span, step_span
from ..versions import ResolvedVersion, VersionResolver
from .output import END, Channel, Output
from .payload_view import PayloadView
from .persist import Persister, RunStatus, ThreadMemory
from .resolve import check_request_context, provisional, resolve_for_call
from .state import RunPlan, RunState
from .subagents import ChildRunner, LocalRunner, sub_agent_tool
from .step import Continue, Done, Failed, RetryCall, RetryStep, Tripped, run_step

log = logging.getLogger(__name__)
run_log = logging.getLogger("treadle.runs")
"""One line per finished run (``_log_run``)."""

QUEUE_SIZE = 256
"""Chunks buffered ahead of a slow client before the run waits for it."""


@dataclass
class GenerateResult:
    run_id: str
    text: str = ""
    finish_reason: FinishReason = "unknown"
    usage: Usage = field(default_factory=Usage)
    steps: list[StepResult] = field(default_factory=list)
    tripwire: Tripwire | None = None
    messages: list[Message] = field(default_factory=list)
    error: ErrorPayload | None = None
    skipped_processors: list[SkippedProcessor] = field(default_factory=list)
    """``fail_open`` processor hooks the run went on without (also in the ``finish`` chunk)."""
    view: PayloadView | None = None
    """How the run's tool payloads look to clients; ``displayed`` applies it."""

    async def displayed(self) -> GenerateResult:
        """The result as a client without raw payload access sees it (steps and messages)."""
        if not self.view:
            return self
        return dataclasses.replace(self, steps=await self.view.display_steps(self.steps),
                                   messages=await self.view.display_messages(self.messages),
                                   error=self.view.display_error(self.error) if self.error is not None else None)


class AgentLoop:
    def __init__(
        self, registry: Registry, models: Any, tracer: Tracer, memory: ThreadMemory | None = None
    ) -> None:
        self.registry = registry
        self.models = models
        self.tracer = tracer
        self.memory = memory
        """Where runs with ``memory`` options load and store their thread; None: no storage."""
        self.sub_agents = LocalRunner(registry.snapshot_agent, self.stream)
        """Runs local sub-agents; the app points ``start`` at the thread runtime."""
        self.remote_agents: ChildRunner | None = None
        """Runs sub-agents of other Treadle servers (``api.remote_agent``), when configured."""
        self.versions: VersionResolver | None = None
        """Where a run's agent version is resolved (``treadle.versions``); None: no versions."""
        self.on_finish: Callable[..., None] | None = None
        """Called, without waiting, when a run of an agent with scorers ends with ``finish``:
        ``on_finish(agent, run_id, message_list, options, span_context, agent_version_id)``
        (``treadle.scoring``)."""
        context = registry.builtin_context
        context.models = context.models or models
        context.tracer = context.tracer or tracer

    # --- public surface -----------------------------------------------------------------------

    async def resolve_version(self, agent: Agent, selection: str | None) -> tuple[Agent, ResolvedVersion | None]:
        """The agent as the stored version ``selection`` (``published`` when None or empty,
        ``draft``, or a version id or number) makes it, within what its editor allows, and what
        was resolved (None on a server without versions). Raises ``NotFoundError`` for an
        unknown version and ``FailedPreconditionError`` for an agent whose editor owns its
        instructions and that resolves none. ``stream`` and ``generate`` call it with the
        call's ``options.version``; a caller that runs an agent another way calls it itself."""
        if self.versions is None:
            return agent, None
        return await self.versions.resolve(agent, selection or "")

    async def _resolved_plan(self, agent: Agent, request: RunRequest) -> RunPlan:
        selection = request.options.merged_over(agent.default_options).version
        agent, version = await self.resolve_version(agent, selection)
        plan = self.plan(await resolve_for_call(self.registry, agent, request), request)
        plan.version = version
        return plan

    async def open(self, agent: Agent, request: RunRequest) -> RunHandle:
        """Start a run; its chunks come in batches (``RunHandle.batch``): what ``stream`` yields
        one by one, for a caller that sends several at once (the gRPC edge). Bad requests raise
        here. The caller must ``close`` the handle (which cancels a run that has not ended)."""
        plan = await self._resolved_plan(agent, request)
        persist = await self._open_memory(plan, request)
        channel, task = self._start(plan, request, GenerateResult(plan.run_id), persist)
        return RunHandle(plan.run_id, channel, task)

    async def stream(self, agent: Agent, request: RunRequest) -> AsyncIterator[Chunk]:
        """The run's chunks; bad requests raise before the first chunk."""
        plan = await self._resolved_plan(agent, request)
        persist = await self._open_memory(plan, request)
        # ``_stream`` inline: one generator between the run and the caller, not two.
        channel, task = self._start(plan, request, GenerateResult(plan.run_id), persist)
        items = channel.items
        try:
            while True:
                if not items:
                    await channel.wait()
                while items:
                    item = channel.pop()
                    if item is END:
                        await task
                        return
                    yield item
        finally:
            await _stop_run(task)

    async def generate(
        self, agent: Agent, request: RunRequest, on_chunk: Callable[[Chunk], None] | None = None
    ) -> GenerateResult:
        """The run's result; ``on_chunk`` sees its chunks as they come (a thread's subscribers)."""
        plan = await self._resolved_plan(agent, request)
        persist = await self._open_memory(plan, request)
        result = GenerateResult(plan.run_id)
        async for chunk in self._stream(plan, request, result, persist):
            if on_chunk is not None:
                on_chunk(chunk)
        return result

    async def _open_memory(self, plan: RunPlan, request: RunRequest) -> Persister:
        """The run's thread, opened before the first chunk (a refusal is the call's status);
        with its input when nothing before the model call can change that (``_stored_as_given``)."""
        memory = plan.options.memory
        if memory is None:
            return Persister(None)
        resolution = plan.agent.resolution
        if self.memory is None:
            raise InvalidArgumentError("memory is not available: this server has no store")
        persist = Persister(self.memory, memory.thread, memory.resource)
        if plan.version is not None:
            persist.extra["agentVersion"] = plan.version.detail()
        persist.resolved = {"model": plan.model.id, "matched": [], "overrides": []}
        if resolution is not None:
            persist.resolved.update(matched=[list(m) for m in resolution.matched],
                                    overrides=list(resolution.overrides))
        parent = plan.options.parent
        if parent is not None:
            persist.parent = {"run_id": parent.run_id, "tool_call_id": parent.tool_call_id,
                              "agent_id": parent.agent_id}
        persist.view = plan.view
        await persist.open(
            run_id=plan.run_id, agent_id=plan.agent.id, last_messages=plan.agent.memory.last_messages,
            title=memory.thread_title or None, metadata=memory.thread_metadata,
            input=request.messages if _stored_as_given(plan, request) else (),
        )
        return persist

    def plan(self, agent: Agent, request: RunRequest) -> RunPlan:
        """Resolve everything the run needs; raises InvalidArgumentError / NotFoundError."""
        if not request.messages and not (request.inbox is not None and request.inbox.pending):
            raise InvalidArgumentError("the request has no input: give a prompt or messages")
        agent = provisional(agent, request)  # a per-request agent not resolved yet: its variants
        opts = request.options.merged_over(agent.default_options)
        if agent.resolution is None:  # a resolved agent's context was checked before it resolved
            check_request_context(agent, opts.request_context)
        if opts.memory is not None and not (opts.memory.resource and opts.memory.thread):
            raise InvalidArgumentError("memory needs both resource and thread")
        if opts.memory is not None and max(len(opts.memory.resource), len(opts.memory.thread)) > 255:
            raise InvalidArgumentError("memory resource and thread ids must be at most 255 characters")
        max_steps = opts.max_steps if opts.max_steps is not None else DEFAULT_MAX_STEPS
        if max_steps < 1:
            raise InvalidArgumentError(f"max_steps must be at least 1, got {max_steps}")
        retries = opts.max_processor_retries
        if retries is None:
            retries = agent.max_processor_retries
        if retries is not None and retries < 0:
            raise InvalidArgumentError("max_processor_retries must be >= 0")
        model = ModelConfig(id=opts.model or agent.model, base_url=agent.base_url,
                            fallbacks=list(agent.fallback_models), credential=agent.provider_credential)
        if model.id:  # empty only while a Python function still has to give it (``provisional``)
            self.models.validate(model.id)
            self.models.check_access(model)  # before any call: the server's keys stay with their providers
        resolve = self.registry.resolve_processor

        def lane(per_call: list[Any] | None, agent_lane: list[Any]) -> list[Any]:
            return [resolve(r) for r in lane_for_call(agent.id, "output_processors", agent_lane, per_call)]

        def input_lane(per_call: list[Any] | None, agent_lane: list[Any]) -> list[Any]:
            return group_refs(lane_for_call(agent.id, "input_processors", agent_lane, per_call), resolve)

        tools = {t.name: t for t in (self.registry.resolve_tool(x) for x in agent.tools)}
        for ref in agent.sub_agents:
            runner = self.sub_agents if ref.remote is None else self.remote_agents
            if runner is None:
                raise InvalidArgumentError(
                    f"agent {agent.id!r}: sub-agent {ref.key!r} is on server {ref.remote.target!r} "  # type: ignore[union-attr]
                    "but this server has no remoteServers configured")
            tools[ref.tool_name] = sub_agent_tool(ref, runner)
        for name, description in agent.tool_descriptions.items():  # a version's descriptions
            if name in tools:
                tools[name] = replace(tools[name], description=description)
        hooks = (self.registry.resolve_hooks(agent.tool_hooks) or ToolHooks()).overridden_by(
            self.registry.resolve_hooks(opts.tool_hooks)
        )
        return RunPlan(
            run_id=request.run_id or new_id("run"),
            agent=agent,
            options=opts,
            input_processors=input_lane(opts.input_processors, agent.input_processors),
            output_processors=lane(opts.output_processors, agent.output_processors),
            error_processors=self._error_lane(agent, opts.error_processors),
            tools=tools,
            tool_hooks=hooks,
            model=model,
            model_settings=opts.model_settings or ModelSettings(),
            max_steps=max_steps,
            max_processor_retries=retries,
            instructions=[*agent.instructions, *request.instructions],
            tracer=self.tracer,
            find_tool=self.registry.find_tool,
            view=PayloadView(ToolPayloadPolicy(list(agent.tool_payload_rules)),
                             [resolve(r) for r in agent.tool_payload_processors]),
        )

    def _error_lane(self, agent: Agent, per_call: list[Any] | None) -> list[Any]:
        """The call's or the agent's error processors; with neither, the default error stack
        unless the agent opted out (``error_processor_defaults=False``)."""
        refs = lane_for_call(agent.id, "error_processors", agent.error_processors, per_call)
        if per_call is None and not refs and agent.error_processor_defaults is not False:
            return default_error_stack(self.registry.builtin_context)
        return [self.registry.resolve_processor(r) for r in refs]

    # --- the run ------------------------------------------------------------------------------

    async def _stream(
        self, plan: RunPlan, request: RunRequest, result: GenerateResult, persist: Persister
    ) -> AsyncIterator[Chunk]:
        channel, task = self._start(plan, request, result, persist)
        items = channel.items
        try:
            while True:
                if not items:
                    await channel.wait()
                while items:
                    item = channel.pop()
                    if item is END:
                        await task
                        return
                    yield item
        finally:
            await _stop_run(task)

    def _start(
        self, plan: RunPlan, request: RunRequest, result: GenerateResult, persist: Persister
    ) -> tuple[Channel, asyncio.Task[None]]:
        """The run's task and the channel its chunks come through (``END`` last)."""
        channel = Channel(QUEUE_SIZE)
        output = Output(plan.run_id, channel)
        output.view = result.view = persist.view = plan.view
        return channel, asyncio.create_task(self._run(plan, request, output, result, persist))

    async def _run(
        self, plan: RunPlan, request: RunRequest, output: Output, result: GenerateResult,
        persist: Persister,
    ) -> None:
        status: RunStatus = "aborted"  # unless it ends below: cancelled (client gone, shutdown)
        started = time.monotonic()
        try:
            memory = plan.options.memory
            with agent_span(self.tracer, agent_id=plan.agent.id, agent_name=plan.agent.name,
                            run_id=plan.run_id, thread_id=memory.thread if memory else "",
                            version=plan.version.detail() if plan.version is not None else None) as span:
                resolution_attributes(span, plan)
                await self._execute(plan, request, output, result, persist)
            status = "failed" if result.error else "aborted" if result.tripwire else "finished"
        except Exception as e:
            status = "failed"
            log.exception("run %s failed", plan.run_id)
            result.error = ErrorPayload(str(e) or type(e).__name__, type(e).__name__)
            result.finish_reason = "error"
            result.skipped_processors = _skipped(plan)
            await output.send(Chunk.of(result.error))
            await output.send(Chunk.of(Finish("error", result.usage, result.skipped_processors)))
        finally:
            try:
                await output.reset()
                _end_run(plan)
                _log_run(plan, status, result, time.monotonic() - started)
                await persist.end(status, result.finish_reason, result.usage)
            finally:  # also when the run is cancelled here (stopped in its last write): its reader ends
                output.queue.put_nowait(END)

    async def _execute(
        self, plan: RunPlan, request: RunRequest, output: Output, result: GenerateResult,
        persist: Persister,
    ) -> None:
        memory = plan.options.memory
        ml = MessageList(thread_id=memory.thread if memory else "",
                         resource_id=memory.resource if memory else "")
        ml.replace_all_system_messages(list(plan.instructions))
        ml.add(persist.history, "memory")
        ml.add(request.messages, "input")
        scope = RunScope(plan.run_id, self.tracer, plan.options.request_context,
                         emit_direct=output.send, emit_processed=output.emit,
                         agent_id=plan.agent.id, thread_id=ml.thread_id, resource_id=ml.resource_id)
        state = RunState(ml, scope, ChainRunner(scope))
        plan.view.bind(state.chain)
        persist.stats = scope.stats
        output.bind(state.chain, plan.output_processors, ml)
        await output.send(Chunk.of(Start(plan.agent.id, "")))
        await _take_signals(request, ml, output)  # signals that woke the run are its input

        try:
            await state.chain.run_message_hook(
                plan.input_processors, "process_input", ml,
                lambda p, c: ProcessInputArgs(
                    messages=ml.get_input(), system_messages=list(ml.system_messages),
                    message_list=ml, **c,
                ),
                shown=ml.get_input,
            )
        except TripwireError as e:  # the model is never called
            return await self._trip(plan, output, state, result, _tripwire(e))
        except ProcessorError as e:
            return await self._fail(plan, output, state, result, ErrorPayload(str(e), "ProcessorError"))
        if scope.held_guards:  # parallel guardrails beside the first provider call
            output.hold(scope.held_guards)  # the input is saved with the step, once they passed
            scope.held_guards = []
        else:
            await persist.save(ml)  # the input, as processInput left it
        base_system = list(ml.system_messages)

        while True:
            if state.step_number and await _take_signals(request, ml, output):  # the step boundary
                # The response so far stays one assistant message, stored before the signal; the
                # answer after the signal is a new one (the framework's rotateResponseMessageId),
                # so the thread reads in the order the model saw it.
                state.response_id = ""
            scope.step_number = state.step_number
            scope.stats.begin_step(state.step_number + 1)
            done, outcome = len(state.steps), None
            try:
                with step_span(self.tracer, state.step_number):
                    outcome = await run_step(plan, state, output, self.models.resolve, base_system)
            finally:
                last = state.steps[-1] if len(state.steps) > done else None
                scope.stats.end_step(
                    last.finish_reason if last is not None else _outcome_reason(outcome),
                    last.usage if last is not None else None,
                    last.model_id if last is not None else "")
            state.chain.end_stream_spans()
            state.step_number += 1
            match outcome:
                case RetryStep(reason=reason):
                    state.feedback = reason
                    state.count_retry()
                    continue
                case Tripped(tripwire=tripwire):
                    return await self._trip(plan, output, state, result, tripwire)
                case Failed(error=error, sent=sent):
                    return await self._fail(plan, output, state, result, error, sent=sent)
                case Done():
                    state.completed_steps += 1
                    # The run ends here unless the inbox has more (what is left past max_steps
                    # waits for the next run).
                    ending = (request.inbox is None or not request.inbox.pending
                              or state.completed_steps >= plan.max_steps)
                    if not (ending and state.finish_streamed and not _ends_with_hook(plan)):
                        await persist.save(ml)  # an accepted step, at its boundary
                    # (else nothing runs before ``persist.finish`` writes it with the run's end)
                    if ending:
                        break
                case Continue() | RetryCall():
                    state.completed_steps += 1
                    await persist.save(ml)
                    if state.completed_steps >= plan.max_steps:
                        break

        final_reason = state.steps[-1].finish_reason if state.steps else "unknown"
        text = "".join(s.text for s in state.steps if s.tripwire is None)
        out = OutputResult(text=text, usage=state.usage, finish_reason=final_reason,
                           steps=list(state.steps))
        try:
            if not state.finish_streamed:  # the last step called tools: processors still see a finish
                await output.emit(Chunk.of(Finish(final_reason, state.usage)))
            await state.chain.run_message_hook(
                plan.output_processors, "process_output_result", ml,
                lambda p, c: ProcessOutputResultArgs(
                    messages=ml.get_response(), message_list=ml, result=out, **c
                ),
                shown=ml.get_response,
            )
        except TripwireError as e:
            await persist.drop_response(ml)  # the rejected answer is not kept
            return await self._trip(plan, output, state, result, _tripwire(e))
        except ProcessorError as e:
            return await self._fail(plan, output, state, result, ErrorPayload(str(e), "ProcessorError"))
        await persist.finish(ml, final_reason, state.usage)  # the final state, after processOutputResult

        self._fill(result, state, text, final_reason)
        state.chain.end_stream_spans()  # a finish after the last step opened one more stream span
        # Last, after any chunk process_output_result wrote; processors saw a finish already.
        skipped = result.skipped_processors = _skipped(plan)
        await output.send(Chunk.of(Finish(final_reason, state.usage, skipped)))
        if plan.agent.scorers and self.on_finish is not None:  # queued off the request path
            version = plan.version.version_id if plan.version is not None else ""
            self.on_finish(plan.agent, plan.run_id, ml, plan.options, trace.get_current_span().get_span_context(),
                           version)

    # --- endings ------------------------------------------------------------------------------

    def _fill(self, result: GenerateResult, state: RunState, text: str, reason: FinishReason) -> None:
        result.text = text
        result.finish_reason = reason
        result.usage = state.usage
        result.steps = list(state.steps)
        result.messages = state.message_list.get_response()

    async def _trip(
        self, plan: RunPlan, output: Output, state: RunState, result: GenerateResult, tripwire: Tripwire
    ) -> None:
        """A final abort: tripwire chunk, then finish ``other``; the rejected text is not the answer."""
        result.tripwire = tripwire
        await self._stop(plan, output, state, result, Chunk.of(tripwire), "other")

    async def _fail(
        self, plan: RunPlan, output: Output, state: RunState, result: GenerateResult,
        error: ErrorPayload, *, sent: bool = False,
    ) -> None:
        """``sent``: the ``error`` chunk was streamed already, inside the failed step."""
        result.error = error
        await self._stop(plan, output, state, result, None if sent else Chunk.of(error), "error")

    async def _stop(
        self, plan: RunPlan, output: Output, state: RunState, result: GenerateResult, last: Chunk | None,
        reason: FinishReason,
    ) -> None:
        """End the run early: drop what is still in the pipeline, then ``last`` and ``finish``."""
        await output.reset()
        state.chain.end_stream_spans()
        self._fill(result, state, "", reason)
        if last is not None:
            await output.send(last)
        result.skipped_processors = _skipped(plan)
        await output.send(Chunk.of(Finish(reason, state.usage, result.skipped_processors)))


class RunHandle:
    """A run started by ``AgentLoop.open``."""

    def __init__(self, run_id: str, channel: Channel, task: asyncio.Task[None]) -> None:
        self.run_id = run_id
        self._channel = channel
        self._task = task
        self._ended = False

    async def batch(self) -> list[Chunk] | None:
        """The chunks ready now, waiting for the first if there is none: [] after ``interrupt``,
        None once the run ended (its task's exception, if any, is raised then)."""
        if self._ended:
            return None
        channel = self._channel
        if not channel.items:
            await channel.wait()
        out: list[Any] = channel.take_all()
        if out and out[-1] is END:  # the run's last item: nothing comes after it
            out.pop()
            self._ended = True
            await self._task
            return out or None
        return out

    def interrupt(self) -> None:
        """Make a waiting ``batch`` return now."""
        self._channel.wake()

    @property
    def task(self) -> asyncio.Task[None]:
        """The run's task: cancelled, the run ends (``batch`` then raises ``CancelledError``)."""
        return self._task

    async def close(self) -> None:
        """Cancel the run unless it ended."""
        await _stop_run(self._task)


async def _stop_run(task: asyncio.Task[None]) -> None:
    if not task.done():  # the client went away: cancel the run
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def _stored_as_given(plan: RunPlan, request: RunRequest) -> bool:
    """The input is stored as the request gives it: no input processor can change it, and
    no signal joins it (the message list keeps the request's messages, ids unique)."""
    if plan.input_processors or (request.inbox is not None and request.inbox.pending):
        return False
    ids = [m.id for m in request.messages]
    return bool(ids) and len(set(ids)) == len(ids) and all(m.role in ("user", "assistant", "tool")
                                                          for m in request.messages)


def _ends_with_hook(plan: RunPlan) -> bool:
    """A ``processOutputResult`` runs between the last step and the run's end."""
    return any(isinstance(p, ParallelGroup) or implements(p, "process_output_result")
               for p in plan.output_processors)


def _skipped(plan: RunPlan) -> list[SkippedProcessor]:
    """What the run's fail_open processors skipped (remote processors keep count)."""
    out: list[SkippedProcessor] = []
    seen: set[int] = set()
    for p in (*plan.input_processors, *plan.output_processors, *plan.error_processors):
        report = getattr(p, "skipped_processors", None)
        if callable(report) and id(p) not in seen:
            seen.add(id(p))
            out.extend(report())
    return out


async def _take_signals(request: RunRequest, ml: MessageList, output: Output) -> int:
    """Each delivered signal joins the message list as its own turn, its chunk to the stream;
    returns how many were taken."""
    if request.inbox is None:
        return 0
    taken = request.inbox.take()
    for delivery in taken:
        ml.add(delivery.message, "input")
        await output.send(delivery.chunk)
    return len(taken)


def _log_run(plan: RunPlan, status: RunStatus, result: GenerateResult, seconds: float) -> None:
    """The one INFO line every run leaves when it ends, with the same facts as fields for a JSON
    log (``treadle serve --log-format json``)."""
    if not run_log.isEnabledFor(logging.INFO):  # nothing would be written: build nothing
        return
    memory = plan.options.memory
    thread = memory.thread if memory else ""
    usage = result.usage
    reason = result.finish_reason or ("cancelled" if status == "aborted" and not result.tripwire else "")
    fields = {"run_id": plan.run_id, "agent_id": plan.agent.id, "thread_id": thread, "status": status,
              "finish_reason": reason, "duration_ms": round(seconds * 1000),
              "input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens}
    run_log.info("run %s agent=%s thread=%s %s (%s) in %.2fs, tokens %d in / %d out", plan.run_id, plan.agent.id,
                 thread or "-", status, reason or "-", seconds, usage.input_tokens, usage.output_tokens,
                 extra={"fields": fields})


def _outcome_reason(outcome: object) -> str:
    """A step's finish reason when it recorded no step result (rejected, tripped or failed)."""
    match outcome:
        case RetryStep():
            return "retry"
        case Tripped():
            return "tripwire"
        case Failed():
            return "error"
    return "error" if outcome is None else "unknown"


def _end_run(plan: RunPlan) -> None:
    """Tell processors that keep per-run resources (remote ones) that the run is over."""
    seen: set[int] = set()
    for p in (*plan.input_processors, *plan.output_processors, *plan.error_processors, *plan.view.processors):
        end = getattr(p, "end_run", None)
        if callable(end) and id(p) not in seen:
            seen.add(id(p))
            try:
                end(plan.run_id)
            except Exception:
                log.warning("end_run of %s failed", getattr(p, "id", p), exc_info=True)


RESOLVED_MODEL_ATTR = "treadle.agent.resolved_model"
MATCHED_VARIANTS_ATTR = "treadle.agent.matched_variants"
RESOLVER_OVERRIDES_ATTR = "treadle.agent.resolver_overrides"
RESOLVER_ATTR = "treadle.agent.resolver"
RESOLVE_SECONDS_ATTR = "treadle.agent.resolve_seconds"


def resolution_attributes(span: Span, plan: RunPlan) -> None:
    """What the call resolved, on its ``invoke_agent`` span: the model it runs, the variants that
    matched (``model[0]``, ...), the resolver and the fields it overrode, and how long resolving
    took (it runs before the span opens, before memory loads)."""
    span.set_attribute(RESOLVED_MODEL_ATTR, plan.model.id)
    resolution = plan.agent.resolution
    if resolution is not None and resolution.matched:
        span.set_attribute(MATCHED_VARIANTS_ATTR, [f"{f}[{i}]" for f, i in resolution.matched])
    if resolution is not None and resolution.overrides:
        span.set_attribute(RESOLVER_OVERRIDES_ATTR, list(resolution.overrides))
    if resolution is not None and resolution.resolver:
        span.set_attribute(RESOLVER_ATTR, resolution.resolver)
    if resolution is not None and resolution.seconds:
        span.set_attribute(RESOLVE_SECONDS_ATTR, resolution.seconds)


def _tripwire(e: TripwireError) -> Tripwire:
    return Tripwire(e.reason, e.retry, e.metadata, e.processor_id)
