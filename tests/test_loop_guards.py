"""Loop behaviours that are easy to break without noticing, one test each (scripted OpenAI wire).

- a processor that raises ``TripwireError`` itself (instead of calling ``args.abort()``) still
  trips with its own id, from every hook;
- the ``[Processor Feedback]`` system message of a rejected step is in the request of the redo,
  and gone from every request after it.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import Harness, harness_factory, of_type  # noqa: F401
from tests.support import Turn
from tests.test_loop_semantics import HOOK_ABORTS, played
from treadle.core.errors import TripwireError
from treadle.loop.step import feedback_message
from treadle.tools import Tool


class RaiseIn:
    """Raises a bare ``TripwireError`` (no processor id) from ``hook``."""

    def __init__(self, hook: str) -> None:
        self.id = f"raise-in-{hook}"
        self.violations: list[Any] = []

        def trip(args: Any) -> Any:
            raise TripwireError(f"raised in {hook}", metadata={"hook": hook})

        setattr(self, hook, trip)

    def on_violation(self, violation: Any) -> None:
        self.violations.append(violation)


@pytest.mark.parametrize(("hook", "lane"), HOOK_ABORTS)
async def test_a_tripwire_raised_by_a_processor_names_it(harness_factory, hook: str, lane: str) -> None:
    h: Harness = harness_factory(played(hook))
    processor = RaiseIn(hook)
    chunks = await h.stream(h.agent(tools=[Tool("t", lambda a, c: "ok")], **{lane: [processor]}), "go")
    [tripwire] = of_type(chunks, "tripwire")
    assert (tripwire.payload.reason, tripwire.payload.processor_id) == (f"raised in {hook}", processor.id)
    assert [(v.processor_id, v.hook) for v in processor.violations] == [(processor.id, hook)]
    assert [c.type for c in chunks[-2:]] == ["tripwire", "finish"]


def _system(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "system"]


async def test_retry_feedback_is_in_the_redo_only(harness_factory) -> None:
    class RejectFirstAnswer:
        id = "reject-first"

        def process_output_step(self, args: Any) -> None:
            if args.retry_count == 0:
                args.abort("name the city", retry=True)

    # The rejected step, its redo (which calls a tool), and the step after the tool.
    h: Harness = harness_factory([Turn.say("It is sunny."), Turn.call("weather", {"city": "Oslo"}),
                                  Turn.say("Sunny in Oslo.")])
    agent = h.agent(output_processors=[RejectFirstAnswer()], max_processor_retries=1,
                    tools=[Tool("weather", lambda a, c: {"sky": "clear"})])
    result = await h.generate(agent, "weather?")
    assert result.text == "Sunny in Oslo."
    instructions = "You are a test agent."
    assert [_system(b) for b in h.bodies()] == [
        [instructions],
        [instructions, feedback_message("name the city")],
        [instructions],
    ]
