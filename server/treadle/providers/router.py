"""``ModelRouter``: router strings (``provider/model``) to ``LanguageModel``s.

Credentials and base URLs come from the environment, read at ``resolve`` time:
``OPENAI_API_KEY`` / ``OPENAI_BASE_URL`` and ``ANTHROPIC_API_KEY`` (or ``ANTHROPIC_AUTH_TOKEN``) /
``ANTHROPIC_BASE_URL``. The base URL variables are left to the SDKs, which read them when no
``base_url`` is passed; a ``ModelConfig.base_url`` (an OpenAI-compatible server, say) wins.
SDK clients are cached per (provider, base URL, key, max retries) so connections are reused.
``local/<model>`` runs a GGUF model in this process (``local.py``); needs no credentials.
The server's keys go only to trusted base URLs (``trust``); see ``providers/trust.py``.
"""

from __future__ import annotations

import asyncio

import os
from collections.abc import AsyncIterator, Iterable, Mapping
from typing import Any

from ..core.chunks import Chunk
from ..core.errors import APICallError, FailedPreconditionError, InvalidArgumentError
from .base import LanguageModel, ModelConfig, ModelRequest
from .fallback import FallbackModel
from .local import LocalModels, preload_ids, validate_model_id
from .trust import BASE_URL_ENV, SDK_DEFAULT_BASE_URLS, ProviderTrust

SUPPORTED_PROVIDERS = ("openai", "anthropic", "local")

# Local OpenAI-compatible servers usually ignore the key, but the SDK insists on one.
PLACEHOLDER_API_KEY = "treadle-no-key"


def _provider(config: ModelConfig) -> tuple[str, str]:
    return parse_model_string(config.id)


def parse_model_string(model: str) -> tuple[str, str]:
    """``"openai/gpt-4o-mini"`` -> ``("openai", "gpt-4o-mini")``; the model part may hold ``/``."""
    provider, sep, model_id = model.partition("/")
    supported = ", ".join(SUPPORTED_PROVIDERS)
    if not sep or not provider or not model_id.strip():
        raise InvalidArgumentError(
            f"model {model!r} is not a router string 'provider/model' "
            f"(e.g. 'openai/gpt-4o-mini'); supported providers: {supported}"
        )
    if provider not in SUPPORTED_PROVIDERS:
        raise InvalidArgumentError(
            f"model {model!r} names unknown provider {provider!r}; supported providers: {supported}"
        )
    if provider == "local":
        validate_model_id(model_id)
    return provider, model_id


class ModelRouter:
    """Resolves ``ModelConfig``s; owns the SDK clients (close them with ``aclose``).

    ``env`` replaces ``os.environ`` for credential look-ups (the SDKs still read their own
    base URL variables from the process environment).
    """

    def __init__(
        self, env: Mapping[str, str] | None = None, local: LocalModels | None = None,
        trust: ProviderTrust | None = None,
    ) -> None:
        self._env = env
        self.trust = trust or ProviderTrust()
        """Where keys may go; the app sets it from the server config before serving."""
        self._clients: dict[tuple[Any, ...], Any] = {}
        self.local = local or LocalModels()
        """The loaded ``local/...`` models, one per file for this router's whole life."""

    def validate(self, model_string: str) -> None:
        """Raises ``InvalidArgumentError`` unless ``model_string`` names a supported provider."""
        parse_model_string(model_string)

    def resolve(self, config: ModelConfig) -> LanguageModel:
        """The model for ``config``, wrapped in a ``FallbackModel`` when it has fallbacks."""
        primary = self._resolve_one(config)
        if not config.fallbacks:
            return primary
        return FallbackModel([primary, *(self.resolve(f) for f in config.fallbacks)])

    async def preload(self, models: Iterable[str]) -> None:
        """Load the local models among ``models``, each in its own thread.

        llama.cpp silences a model load by pointing the process's stdout and stderr at
        /dev/null while it lasts, so nothing else may print meanwhile: the server loads before it
        serves and prints its start lines (a model loaded later, for an agent created over the
        API, silences the process the same way for a moment).
        """
        await asyncio.gather(*(asyncio.wrap_future(self.local.preload(m)) for m in preload_ids(models)))

    async def aclose(self) -> None:
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            await client.close()
        self.local.close()

    def check_access(self, config: ModelConfig) -> None:
        """``FailedPreconditionError`` when a model of ``config`` (fallbacks included) has a base
        URL that may not receive the server's key and names no provider credential for it."""
        self._credentials(*_provider(config), config)
        for fallback in config.fallbacks:
            self.check_access(fallback)

    def credentials(self, config: ModelConfig) -> dict[str, str]:
        """The SDK credentials a call to ``config``'s provider may send (the same trust rules as
        a model's), or ``FailedPreconditionError``; used by the OpenAI voice provider."""
        return self._credentials(*_provider(config), config)

    def _resolve_one(self, config: ModelConfig) -> LanguageModel:
        provider, model_id = parse_model_string(config.id)
        if provider == "local":  # in this process: no key, nothing sent anywhere
            return self.local.model(model_id)
        try:
            credentials = self._credentials(provider, model_id, config)
        except FailedPreconditionError as e:  # a model changed mid-run: fail the call, leak nothing
            return UnavailableModel(provider, model_id, str(e))
        if provider == "openai":
            return self._openai(config, model_id, credentials)
        return self._anthropic(config, model_id, credentials)

    def _credentials(self, provider: str, model_id: str, config: ModelConfig) -> dict[str, str]:
        """The SDK credentials for ``config``: the server's own only for a trusted base URL."""
        if provider == "local":
            return {}
        env_url = os.environ.get(BASE_URL_ENV[provider], "")
        if config.credential:
            cred = self.trust.credentials.get(config.credential)
            if cred is None or cred.provider != provider:
                raise FailedPreconditionError(
                    f"model {config.id!r}: provider credential {config.credential!r} is not configured "
                    f"for {provider} on this server (providerCredentials in the server config)"
                )
            url = config.base_url or env_url or SDK_DEFAULT_BASE_URLS[provider]
            if not cred.allows(url):
                raise FailedPreconditionError(
                    f"model {config.id!r}: provider credential {cred.id!r} may not be sent to {url}; "
                    f"it is configured for {', '.join(cred.base_urls)}"
                )
            key = self._getenv(cred.api_key_env)
            if not key:
                raise FailedPreconditionError(
                    f"model {config.id!r}: provider credential {cred.id!r} has no key: "
                    f"{cred.api_key_env} is not set on the server"
                )
            return {"api_key": key}
        own = self._server_credentials(provider)
        if not config.base_url or self.trust.trusts(provider, config.base_url, env_url):
            return own
        if own:
            raise FailedPreconditionError(
                f"model {config.id!r}: base_url {config.base_url} is not a trusted {provider} base URL, "
                f"so the server's {provider} key is not sent there; name a provider credential "
                f"configured for it, or have the operator list it in providers.{provider}.trustedBaseUrls"
            )
        return {}  # no server key exists to leak: a keyless compatible server gets the placeholder

    def _server_credentials(self, provider: str) -> dict[str, str]:
        if provider == "openai":
            key = self._getenv("OPENAI_API_KEY")
            return {"api_key": key} if key else {}
        if key := self._getenv("ANTHROPIC_API_KEY"):
            return {"api_key": key}
        if token := self._getenv("ANTHROPIC_AUTH_TOKEN"):
            return {"auth_token": token}
        return {}

    # The SDKs are imported on first use: each takes seconds to import, and a server on the
    # local model (or a client command) should not wait for them.

    def _openai(self, config: ModelConfig, model_id: str, credentials: dict[str, str]) -> LanguageModel:
        import openai

        from .openai import OpenAIChatModel

        key = credentials.get("api_key", "")
        if not key:
            # A local OpenAI-compatible server (per-agent base_url or OPENAI_BASE_URL) often needs
            # no key; the SDK refuses to start without one, so it gets a placeholder.
            if not (config.base_url or os.environ.get("OPENAI_BASE_URL")):
                return UnavailableModel(
                    "openai",
                    model_id,
                    "the server has no OPENAI_API_KEY: set it (or OPENAI_BASE_URL) in the environment "
                    "where the server runs and restart it, or give the agent a base_url of an "
                    "OpenAI-compatible server",
                )
            key = PLACEHOLDER_API_KEY
        cache_key = (
            "openai",
            config.base_url or os.environ.get("OPENAI_BASE_URL", ""),
            key,
            config.max_retries,
        )
        client = self._clients.get(cache_key)
        if client is None:
            kwargs = self._client_kwargs(config)
            client = self._clients[cache_key] = openai.AsyncOpenAI(api_key=key, **kwargs)
        # Compatible servers know max_tokens; OpenAI's own API wants max_completion_tokens.
        field = "max_tokens" if config.base_url else "max_completion_tokens"
        return OpenAIChatModel(model_id, client, max_tokens_field=field)

    def _anthropic(self, config: ModelConfig, model_id: str, credentials: dict[str, str]) -> LanguageModel:
        import anthropic

        from .anthropic import AnthropicModel

        if not credentials:
            if not (config.base_url or os.environ.get("ANTHROPIC_BASE_URL")):
                return UnavailableModel(
                    "anthropic",
                    model_id,
                    "the server has no ANTHROPIC_API_KEY: set it (or ANTHROPIC_BASE_URL) in the "
                    "environment where the server runs and restart it, or give the agent a base_url "
                    "of an Anthropic-compatible server",
                )
            credentials = {"api_key": PLACEHOLDER_API_KEY}
        cache_key = (
            "anthropic",
            config.base_url or os.environ.get("ANTHROPIC_BASE_URL", ""),
            tuple(credentials.items()),
            config.max_retries,
        )
        client = self._clients.get(cache_key)
        if client is None:
            kwargs = self._client_kwargs(config) | credentials
            client = self._clients[cache_key] = anthropic.AsyncAnthropic(**kwargs)
        return AnthropicModel(model_id, client)

    def _getenv(self, name: str) -> str:
        env = os.environ if self._env is None else self._env
        return env.get(name, "")

    @staticmethod
    def _client_kwargs(config: ModelConfig) -> dict[str, Any]:
        # Pass only what is set: an explicit base_url=None would hide the SDK's *_BASE_URL.
        kwargs: dict[str, Any] = {}
        if config.base_url:
            kwargs["base_url"] = config.base_url
        if config.max_retries is not None:
            kwargs["max_retries"] = config.max_retries
        return kwargs


class UnavailableModel:
    """A model that cannot be called (no credentials): every call raises ``APICallError``.

    Resolving succeeds so that a fallback model can still answer and ``processAPIError`` sees
    the failure like any other API error.
    """

    def __init__(self, provider: str, model_id: str, message: str) -> None:
        self._provider = provider
        self._model_id = model_id
        self._message = message

    @property
    def provider(self) -> str:
        return self._provider

    @property
    def model_id(self) -> str:
        return self._model_id

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        raise APICallError(
            self._message, provider=self._provider, model_id=self._model_id, status_code=None
        )
        yield  # pragma: no cover - makes this an async generator like the others
