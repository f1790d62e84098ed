"""``FallbackModel``: the agent's model, then its fallbacks, in order."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import aclosing

from ..core.chunks import Chunk
from ..core.errors import APICallError
from .base import LanguageModel, ModelRequest


class FallbackModel:
    """Tries each model in order until one starts streaming.

    A model is abandoned only when it raises ``APICallError`` before its first chunk: once a
    chunk has reached the caller, switching models would splice two answers together, so a later
    error propagates. When every model fails, the last error propagates, its message listing
    every model's error. ``provider`` and
    ``model_id`` are the primary's; the ``response-metadata`` chunk names the model that answered.
    """

    def __init__(self, models: Sequence[LanguageModel]) -> None:
        if not models:
            raise ValueError("FallbackModel needs at least one model")
        self._models = list(models)

    @property
    def models(self) -> list[LanguageModel]:
        return list(self._models)

    @property
    def provider(self) -> str:
        return self._models[0].provider

    @property
    def model_id(self) -> str:
        return self._models[0].model_id

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        last: APICallError | None = None
        failed: list[tuple[str, APICallError]] = []
        for model in self._models:
            started = False
            try:
                async with aclosing(model.stream(request)) as chunks:  # type: ignore[type-var]
                    async for chunk in chunks:
                        started = True
                        yield chunk
                return
            except APICallError as e:
                if started:
                    raise
                last = e
                failed.append((f"{model.provider}/{model.model_id}", e))
        assert last is not None
        if len(failed) > 1:  # every model failed: say what each one said, not only the last
            last.message = "every model failed: " + "; ".join(
                f"{m}{f' ({e.status_code})' if e.status_code else ''}: {e.message}" for m, e in failed)
        raise last
