"""How a client reaches a server: TLS (or plaintext on loopback) and the bearer token.

The token comes from ``token=`` or, when that is None, from ``TREADLE_TOKEN``; it travels as
``authorization: Bearer <token>`` metadata on every call. ``TLSConfig`` takes PEM bytes or file
paths: ``ca`` to verify the server (None: the system's roots), ``cert`` and ``key`` for a client
certificate (mutual TLS).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import grpc

MAX_MESSAGE_BYTES = 16 << 20
TOKEN_ENV = "TREADLE_TOKEN"

Pem = bytes | str | os.PathLike[str]


@dataclass(frozen=True)
class TLSConfig:
    ca: Pem | None = None
    """PEM of the CA that signed the server's certificate (bytes, or a file path)."""
    cert: Pem | None = None
    """The client certificate, for servers that require one (mutual TLS)."""
    key: Pem | None = None
    server_name: str | None = None
    """The name the server's certificate must carry, when not the target's host."""

    def credentials(self) -> grpc.ChannelCredentials:
        if (self.cert is None) != (self.key is None):
            raise ValueError("a client certificate needs both cert and key")
        return grpc.ssl_channel_credentials(
            root_certificates=_pem(self.ca), private_key=_pem(self.key), certificate_chain=_pem(self.cert)
        )


@dataclass(frozen=True)
class Connect:
    """What every channel and call of one client needs."""

    tls: TLSConfig | None = None
    token: str | None = None

    @property
    def metadata(self) -> tuple[tuple[str, str], ...]:
        token = self.token if self.token is not None else os.environ.get(TOKEN_ENV, "")
        return (("authorization", f"Bearer {token}"),) if token else ()

    def channel(self, target: str) -> grpc.aio.Channel:
        options: list[tuple[str, int | str]] = [
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
            ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
        ]
        if self.tls is None:
            return grpc.aio.insecure_channel(target, options=options)
        if self.tls.server_name:
            options.append(("grpc.ssl_target_name_override", self.tls.server_name))
        return grpc.aio.secure_channel(target, self.tls.credentials(), options=options)


def _pem(value: Pem | None) -> bytes | None:
    if value is None or isinstance(value, bytes):
        return value
    return Path(value).read_bytes()
