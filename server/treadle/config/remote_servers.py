"""The ``remoteServers`` section of the server config file: other Treadle servers that agents
reach as sub-agents (``subAgents: [{key, remote: {target: NAME, agentId}}]``).

::

    remoteServers:
      research:
        endpoint: research.internal:7000
        tokenEnv: RESEARCH_TOKEN        # the bearer token is read from this environment variable
        tls:                            # omitted: plaintext (loopback and private networks)
          caFile: /etc/treadle/ca.pem
          certFile: /etc/treadle/client.pem   # client certificate, when that server wants one
          keyFile: /etc/treadle/client.key

Endpoints and credentials live only here, never in an agent definition: whoever may create an
agent over the API can name a server, never point one at a new address or read its token.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .auth import AuthConfigError

_KEYS = {"endpoint", "tokenEnv", "tls"}
_TLS_KEYS = {"caFile", "certFile", "keyFile", "serverName"}


@dataclass(frozen=True)
class RemoteServer:
    name: str
    endpoint: str
    token_env: str = ""
    tls: bool = False
    ca_file: Path | None = None
    cert_file: Path | None = None
    key_file: Path | None = None
    server_name: str = ""


def parse_remote_servers(data: Any, where: str) -> dict[str, RemoteServer]:
    if data is None:
        return {}
    if not isinstance(data, Mapping):
        raise AuthConfigError(f"{where}: remoteServers must be a mapping of name to server")
    out: dict[str, RemoteServer] = {}
    for name, item in data.items():
        here = f"{where}: remoteServers.{name}"
        if not isinstance(item, Mapping) or set(item) - _KEYS:
            raise AuthConfigError(f"{here} takes endpoint, tokenEnv and tls")
        endpoint, token_env = item.get("endpoint"), item.get("tokenEnv", "")
        if not isinstance(endpoint, str) or ":" not in endpoint:
            raise AuthConfigError(f"{here}.endpoint must be host:port")
        if not isinstance(token_env, str):
            raise AuthConfigError(f"{here}.tokenEnv must name an environment variable")
        tls = item.get("tls")
        if tls is not None and (not isinstance(tls, Mapping) or set(tls) - _TLS_KEYS):
            raise AuthConfigError(f"{here}.tls takes caFile, certFile, keyFile and serverName")
        tls = tls or {}

        def path(key: str) -> Path | None:
            value = tls.get(key)
            if value is None:
                return None
            if not isinstance(value, str) or not value:
                raise AuthConfigError(f"{here}.tls.{key} must be a file path")
            return Path(value)

        out[str(name)] = RemoteServer(
            str(name), endpoint, token_env, tls=item.get("tls") is not None,
            ca_file=path("caFile"), cert_file=path("certFile"), key_file=path("keyFile"),
            server_name=str(tls.get("serverName") or ""),
        )
    return out
