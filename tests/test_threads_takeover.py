"""Taking a thread over, with two thread runtimes in one process on one store (the harness of
``test_signals_inprocess_replicas``): what clients are told while a replica takes a thread
over, and a takeover that does not wait behind a signal relayed to the dead replica.
"""

from __future__ import annotations

import asyncio
from typing import Any

from tests.test_signals_inprocess_replicas import KEY, TARGET, Held, replicas  # noqa: F401 - a fixture
from treadle.signals import Signal
from treadle.signals.hub import ActiveRunChanged
from treadle.testing import ScriptedModel, text_response, tool_call_response


async def test_no_takeover_token_reaches_a_client(replicas: Any) -> None:  # noqa: F811
    """While A takes the thread over (here: delivering what waited for the thread to be idle),
    B answers for the thread with no run, and a message sent to B runs on A with a real run id."""
    held = Held()
    model = ScriptedModel([text_response("woken by the relayed message")])
    a, b = await replicas(model, held), await replicas(model, held)
    in_hook, leave_hook = asyncio.Event(), asyncio.Event()

    async def idle_hook(_key: Any) -> None:
        in_hook.set()
        await leave_hook.wait()

    a.on_idle.append(idle_hook)
    taking = asyncio.create_task(a.take_over(KEY))
    await asyncio.wait_for(in_hook.wait(), 10)  # A holds the thread's lease, taking it over
    try:
        assert await b.current_run(KEY) is None, "a thread being taken over has no run yet"
        watch = b.subscribe(KEY)
        sent = await asyncio.wait_for(b.send(TARGET, Signal("user", "user", "hello")), 10)
        assert sent.accepted.action == "deliver"
        assert sent.accepted.run_id.startswith("run_"), sent.accepted
        started = [e async for e in _until_idle(watch, sent.accepted.run_id)]
        assert sent.accepted.run_id in [e.run_id for e in started if isinstance(e, ActiveRunChanged)]
        watch.close()
    finally:
        leave_hook.set()
        await taking


async def _until_idle(watch: Any, run_id: str) -> Any:
    seen = False
    async for event in watch.events():
        yield event
        if isinstance(event, ActiveRunChanged):
            seen = seen or event.run_id == run_id
            if seen and not event.run_id:
                return


async def test_a_takeover_does_not_wait_behind_a_signal_relayed_to_the_dead_replica(replicas: Any) -> None:  # noqa: F811
    """A's run holds the thread and A stops answering (its lease is not renewed, its relay hears
    nothing): a signal sent to B waits for A's answer, but B takes the thread over when A's lease
    ends, not after that wait; its run takes the signal in, and the answer names that run."""
    ttl = 3.0
    held = Held()
    model = ScriptedModel([tool_call_response("hold", {}), text_response("taken over")])
    a, b = await replicas(model, held, ttl), await replicas(model, held, ttl)
    woke = await a.send(TARGET, Signal("user", "user", "start"))
    await asyncio.wait_for(held.entered.wait(), 10)
    run = a.active_run(KEY)
    assert run is not None and run.renewer is not None
    run.renewer.cancel()  # A is "paused": nothing renews its lease ...
    a.relay._on_message = lambda _message: None  # type: ignore[union-attr]  # ... nor answers
    watch = b.subscribe(KEY)
    sending = asyncio.create_task(b.send(TARGET, Signal("user", "user", "for the dead run")))
    async for event in watch.events():
        if isinstance(event, ActiveRunChanged) and event.run_id and event.run_id != woke.accepted.run_id:
            break
    taken = event.run_id
    sent = await sending
    # Answered once B's takeover run took the signal in (a takeover waiting behind the relayed
    # call would come after its answer, which would name A's dead run).
    assert sent.accepted.action == "deliver" and sent.accepted.run_id == taken
    async for event in watch.events():
        if isinstance(event, ActiveRunChanged) and not event.run_id:
            break
    watch.close()
    prompt = "".join(getattr(p, "text", "") for m in model.requests[1].prompt for p in m.content)
    assert "start" in prompt and "for the dead run" in prompt, "B's run took the signal in"
    held.release.set()
