"""A run stopped from outside while it records its end (``AbortRun``, or a lost lease as the run
fails on it) still ends its batches: the caller of a ``Stream`` on a thread reads the run's
chunks from ``AgentLoop.open`` and would otherwise wait for an end that never comes."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from opentelemetry.trace import NoOpTracer

from treadle.agents import Agent, CallOptions, MemoryOptions, RunRequest
from treadle.core.messages import Message, SystemMessage
from treadle.loop import AgentLoop
from treadle.registry import Registry
from treadle.testing import ScriptedModel, ScriptedModels, text_response


class LostLease:
    """A thread whose writes are refused (its lease was taken over); recording the end of the
    run that failed on them waits until the run is stopped."""

    def __init__(self) -> None:
        self.ending = asyncio.Event()

    async def begin_run(self, *args: Any, **kwargs: Any) -> list[Message]:
        return []

    async def save_messages(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("the run no longer holds the thread's lease")

    async def end_run(self, *args: Any, messages: Any = (), **kwargs: Any) -> None:
        if messages:  # the run's last save, with its end
            raise RuntimeError("the run no longer holds the thread's lease")
        self.ending.set()
        await asyncio.Event().wait()  # until the run's task is cancelled


async def test_a_run_stopped_while_it_records_its_end_still_ends_its_batches() -> None:
    memory = LostLease()
    model = ScriptedModel()
    model.add(text_response(["never stored"]))
    loop = AgentLoop(Registry(), ScriptedModels(model), NoOpTracer(), memory=memory)
    agent = Agent(id="a", model="scripted/a", instructions=[SystemMessage("a")])
    handle = await loop.open(agent, RunRequest([Message.user("hi")], CallOptions(memory=MemoryOptions("r", "t"))))
    await memory.ending.wait()  # the run failed on its write and is recording its end
    handle.task.cancel()  # stopped from outside now
    chunks = []
    with pytest.raises(asyncio.CancelledError):
        while (batch := await handle.batch()) is not None:
            chunks += batch
    assert [c.type for c in chunks][-2:] == ["error", "finish"]
    await handle.close()
