"""Where the server's provider keys may go.

The server's own key for a provider (``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``...) is sent only to
that provider's configured base URL: the SDK's default, ``OPENAI_BASE_URL`` /
``ANTHROPIC_BASE_URL``, or a base URL the operator lists as trusted. An agent whose own
``base_url`` is elsewhere gets no server key; it may name a ``ProviderCredential`` the operator
configured for that URL, whose key then goes there and nowhere else.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from urllib.parse import urlsplit

from ..core.errors import InvalidArgumentError

SDK_DEFAULT_BASE_URLS = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
}
BASE_URL_ENV = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL"}


@dataclass(frozen=True)
class ProviderCredential:
    """A key the operator keeps for agents whose base URL is not the provider's own."""

    id: str
    provider: str
    api_key_env: str
    """The environment variable holding the key (the config file holds no secret)."""
    base_urls: tuple[str, ...]
    """Glob patterns of the base URLs this key may be sent to."""

    def allows(self, url: str) -> bool:
        return any(fnmatchcase(normalize_base_url(url), normalize_base_url(p)) for p in self.base_urls)


@dataclass(frozen=True)
class ProviderTrust:
    trusted_base_urls: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Per provider: glob patterns of base URLs that may receive the server's own key."""
    credentials: dict[str, ProviderCredential] = field(default_factory=dict)

    def trusts(self, provider: str, url: str, env_base_url: str) -> bool:
        """True when ``url`` may receive the server's own ``provider`` key."""
        norm = normalize_base_url(url)
        own = {normalize_base_url(SDK_DEFAULT_BASE_URLS.get(provider, ""))}
        if env_base_url:
            own.add(normalize_base_url(env_base_url))
        if norm in own:
            return True
        return any(fnmatchcase(norm, normalize_base_url(p)) for p in self.trusted_base_urls.get(provider, ()))


def normalize_base_url(url: str) -> str:
    """Scheme and host lower-cased, no trailing slash: the form URLs are compared in."""
    url = url.strip()
    parts = urlsplit(url)
    if not parts.scheme:
        return url.rstrip("/")
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}{parts.path.rstrip('/')}" + (
        f"?{parts.query}" if parts.query else ""
    )


def check_base_url(url: str, field_path: str) -> None:
    """Refuse anything but an ``http(s)://host/...`` URL (``file:``, ``unix:``, bare words...)."""
    if not url:
        return
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise InvalidArgumentError(
            f"{field_path} {url!r} must be an http:// or https:// URL with a host, "
            "e.g. 'http://localhost:11434/v1'"
        )
    if parts.username or parts.password:
        raise InvalidArgumentError(f"{field_path} must not hold credentials; name a provider credential instead")
