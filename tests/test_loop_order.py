"""Where the loop's chunks and hooks fall, as the Mastra framework orders them (README, "Behaviour
notes"), one test each against the scripted OpenAI wire server.
"""

from __future__ import annotations

from typing import Any

from tests.harness import Harness, harness_factory, of_type, types  # noqa: F401
from tests.support import Turn
from treadle.core.chunks import Chunk
from treadle.tools import Tool

HEAD = ["start", "step-start", "response-metadata", "text-start"]


class WordCounter:
    """The docs' Word Counter: counts on text deltas, reports on ``finish``; and a summary chunk
    written from ``process_output_result``."""

    id = "word-counter"

    def __init__(self) -> None:
        self.log: list[str] = []

    def process_output_stream(self, args: Any) -> Chunk:
        part = args.part
        args.state["words"] = args.state.get("words", 0)
        if part.type == "text-delta":
            args.state["words"] += len(part.payload.text.split())
        if part.type == "finish":
            self.log.append(f"finish: {args.state['words']} words, {part.payload.reason}")
        return part

    async def process_output_result(self, args: Any) -> None:
        self.log.append("process_output_result")
        await args.writer.custom({"type": "data-summary", "data": {"words": args.state["words"]}})


async def test_processors_see_finish_before_process_output_result_and_the_client_gets_it_last(
    harness_factory,
) -> None:
    h: Harness = harness_factory([Turn.call("t", {}), Turn.say(["one two ", "three"])])
    counter = WordCounter()
    chunks = await h.stream(h.agent(output_processors=[counter], tools=[Tool("t", lambda a, c: 1)]), "go")
    # The tool-calls step's finish is not shown (as in the framework); the answer's is, once.
    assert counter.log == ["finish: 3 words, stop", "process_output_result"]
    assert types(chunks)[-5:] == ["text-delta", "text-end", "step-finish", "data-summary", "finish"]
    assert types(chunks).count("finish") == 1
    assert chunks[-1].payload.reason == "stop"


async def test_a_run_cut_by_max_steps_still_shows_processors_a_finish_first(harness_factory) -> None:
    h: Harness = harness_factory([Turn.call("t", {})])
    counter = WordCounter()
    chunks = await h.stream(h.agent(output_processors=[counter], tools=[Tool("t", lambda a, c: 1)]), "go",
                            max_steps=1)
    assert counter.log == ["finish: 0 words, tool-calls", "process_output_result"]
    assert types(chunks)[-3:] == ["step-finish", "data-summary", "finish"]


class Cache:
    """Records a step's chunks in ``process_llm_response`` and replays them from
    ``process_llm_request`` on the next call with the same prompt."""

    id = "cache"

    def __init__(self) -> None:
        self.stored: dict[str, list[Chunk]] = {}
        self.seen: list[tuple[bool, str]] = []

    def process_llm_request(self, args: Any) -> Any:
        key = str(args.prompt)
        args.state["key"] = key
        return {"response": self.stored[key]} if key in self.stored else None

    def process_llm_response(self, args: Any) -> None:
        self.seen.append((args.from_cache, args.chunks[-1].type))
        if not args.from_cache:
            self.stored[args.state["key"]] = list(args.chunks)


async def test_process_llm_response_gets_the_finish_so_a_cache_replays_the_step_exactly(harness_factory) -> None:
    h: Harness = harness_factory([Turn.say(["cached ", "answer"])])  # one provider call for two runs
    cache = Cache()
    agent = h.agent(input_processors=[cache])
    first = await h.generate(agent, "question")
    second = await h.generate(agent, "question")
    assert len(h.bodies()) == 1
    assert cache.seen == [(False, "finish"), (True, "finish")]
    [finish] = [c for c in cache.stored.popitem()[1] if c.type == "finish"]
    assert (finish.payload.reason, finish.payload.total_usage) == ("stop", first.usage)
    assert (second.text, second.finish_reason, second.usage) == (first.text, first.finish_reason, first.usage)


async def test_when_api_error_retries_run_out_the_error_comes_inside_the_failed_step(harness_factory) -> None:
    class Retry:
        id = "retry"

        def process_api_error(self, args: Any) -> Any:
            return {"retry": True}

    h: Harness = harness_factory([Turn.fail(400, "nope"), Turn.fail(400, "nope again")])
    chunks = await h.stream(h.agent(error_processors=[Retry()]), "go", max_processor_retries=1)
    assert types(chunks) == ["start", "step-start", "step-finish", "step-start", "error", "step-finish", "finish"]
    [error] = of_type(chunks, "error")
    assert error.payload.details["statusCode"] == 400 and "nope again" in error.payload.message
    assert [c.payload.reason for c in of_type(chunks, "step-finish")] == ["error", "error"]
    assert chunks[-1].payload.reason == "error"


async def test_every_stream_starts_with_start_and_ends_with_finish_also_after_a_tripwire(harness_factory) -> None:
    class StopInput:
        id = "stop-input"

        def process_input(self, args: Any) -> None:
            args.abort("no")

    class StopAtSecondDelta:
        id = "stop-stream"

        def process_output_stream(self, args: Any) -> Any:
            if args.part.type == "text-delta" and args.part.payload.text == "b":
                args.abort("enough")
            return args.part

    h: Harness = harness_factory([Turn.say(["a", "b", "c"])])
    assert types(await h.stream(h.agent(input_processors=[StopInput()]), "go")) == ["start", "tripwire", "finish"]
    chunks = await h.stream(h.agent(output_processors=[StopAtSecondDelta()]), "go")
    assert types(chunks) == [*HEAD, "text-delta", "tripwire", "finish"]
    result_h: Harness = harness_factory([Turn.say(["a", "b", "c"])])
    result = await result_h.generate(result_h.agent(output_processors=[StopAtSecondDelta()]), "go")
    # The step rejected mid-stream counts in ``steps``, with its tripwire and no text.
    assert [(s.step_number, s.text, s.tripwire.reason if s.tripwire else None) for s in result.steps] == [
        (0, "", "enough"),
    ]
