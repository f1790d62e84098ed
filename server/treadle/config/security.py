"""The security sections of the server config file (and ``--auth-file``).

::

    auth: {...}                      # see config/auth.py
    limits: {...}
    providers:
      openai:
        trustedBaseUrls: ["https://llm-gateway.internal/v1"]   # may receive OPENAI_API_KEY
    providerCredentials:
      - id: team-vllm                # agents name it in providerCredential
        provider: openai
        apiKeyEnv: TEAM_VLLM_KEY     # the key is read from this environment variable
        baseUrls: ["http://vllm.internal:8000/v1"]

``--auth-file`` holds an ``auth`` mapping (or just its ``credentials``...) and replaces the config
file's ``auth`` section.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..providers.router import SUPPORTED_PROVIDERS
from ..providers.trust import ProviderCredential, ProviderTrust, check_base_url
from ..core.errors import InvalidArgumentError
from .agent_file import AgentFileError, read_config_file
from .auth import AuthConfig, AuthConfigError, Limits, parse_auth, parse_limits
from .remote_servers import RemoteServer, parse_remote_servers


@dataclass(frozen=True)
class Security:
    auth: AuthConfig | None = None
    """None: no auth section, so the server is unauthenticated and must stay on loopback."""
    limits: Limits = field(default_factory=Limits)
    trust: ProviderTrust = field(default_factory=ProviderTrust)
    remote_servers: Mapping[str, RemoteServer] = field(default_factory=dict)
    """Other Treadle servers agents delegate to (``remoteServers``)."""


def load_security(config_file: Path | None, auth_file: Path | None = None) -> Security:
    """The sections of ``config_file``, with ``auth_file`` replacing its ``auth``; errors name the file."""
    data: Any = read_config_file(config_file) if config_file is not None else None
    data = data if isinstance(data, Mapping) else {}
    try:
        auth = parse_auth(data["auth"], f"{config_file}: auth") if "auth" in data else None
        limits = parse_limits(data["limits"], f"{config_file}: limits") if "limits" in data else Limits()
        trust = _trust(data, str(config_file))
        remote = parse_remote_servers(data.get("remoteServers"), str(config_file))
        if auth_file is not None:
            extra = read_config_file(auth_file)
            if isinstance(extra, Mapping) and "auth" in extra:
                extra = extra["auth"]
            auth = parse_auth(extra, f"{auth_file}")
    except AuthConfigError as e:
        raise AgentFileError(str(e)) from None
    return Security(auth, limits, trust, remote)


def _trust(data: Mapping[str, Any], where: str) -> ProviderTrust:
    trusted: dict[str, tuple[str, ...]] = {}
    providers = data.get("providers") or {}
    if not isinstance(providers, Mapping):
        raise AuthConfigError(f"{where}: providers must be a mapping of provider name to settings")
    for name, settings in providers.items():
        here = f"{where}: providers.{name}"
        if name not in SUPPORTED_PROVIDERS:
            raise AuthConfigError(f"{here}: unknown provider; supported: {', '.join(SUPPORTED_PROVIDERS)}")
        if not isinstance(settings, Mapping) or set(settings) - {"trustedBaseUrls"}:
            raise AuthConfigError(f"{here} takes only trustedBaseUrls")
        trusted[name] = _urls(settings.get("trustedBaseUrls") or [], f"{here}.trustedBaseUrls")
    creds: dict[str, ProviderCredential] = {}
    items = data.get("providerCredentials") or []
    if not isinstance(items, list):
        raise AuthConfigError(f"{where}: providerCredentials must be a list")
    for i, item in enumerate(items):
        here = f"{where}: providerCredentials[{i}]"
        if not isinstance(item, Mapping) or set(item) - {"id", "provider", "apiKeyEnv", "baseUrls"}:
            raise AuthConfigError(f"{here} takes id, provider, apiKeyEnv and baseUrls")
        cid, provider, env = item.get("id"), item.get("provider"), item.get("apiKeyEnv")
        if not isinstance(cid, str) or not cid or cid in creds:
            raise AuthConfigError(f"{here}.id must be a non-empty, unique string")
        if provider not in SUPPORTED_PROVIDERS:
            raise AuthConfigError(f"{here}.provider must be one of {', '.join(SUPPORTED_PROVIDERS)}")
        if not isinstance(env, str) or not env:
            raise AuthConfigError(f"{here}.apiKeyEnv must name the environment variable holding the key")
        urls = _urls(item.get("baseUrls") or [], f"{here}.baseUrls")
        if not urls:
            raise AuthConfigError(f"{here}.baseUrls must list where the key may be sent")
        creds[cid] = ProviderCredential(cid, str(provider), env, urls)
    return ProviderTrust(trusted, creds)


def _urls(items: Any, where: str) -> tuple[str, ...]:
    if not isinstance(items, list) or not all(isinstance(u, str) and u for u in items):
        raise AuthConfigError(f"{where} must be a list of base URLs")
    for u in items:
        try:
            check_base_url(u.replace("*", "x"), where)
        except InvalidArgumentError as e:
            raise AuthConfigError(str(e)) from None
    return tuple(items)
