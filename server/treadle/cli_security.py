"""The security flags of ``treadle serve`` and ``treadle chat``, kept out of ``cli.py``.

``serve``: ``--auth-file``, ``--tls-cert``, ``--tls-key``, ``--tls-client-ca``, ``--insecure``.
``chat``: ``--tls-ca`` (and ``--tls-cert``/``--tls-key`` for mutual TLS); the token comes from
``TREADLE_TOKEN``.
"""

from __future__ import annotations

import argparse
import os
import socket
from pathlib import Path
from typing import Any

import grpc

from treadle_client import TOKEN_ENV, TLSConfig


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--auth-file", metavar="FILE", type=Path,
                        help="credentials (an 'auth:' section) replacing the config file's")
    parser.add_argument("--tls-cert", metavar="PEM", type=Path, help="serve TLS with this certificate chain")
    parser.add_argument("--tls-key", metavar="PEM", type=Path, help="the private key of --tls-cert")
    parser.add_argument("--tls-client-ca", metavar="PEM", type=Path,
                        help="require client certificates signed by this CA (mutual TLS)")
    parser.add_argument("--insecure", action="store_true", default=None,
                        help="allow a non-loopback --listen without auth (anyone may call everything)")


def serve_overrides(args: argparse.Namespace) -> dict[str, Any]:
    return {name: getattr(args, name) for name in ("auth_file", "tls_cert", "tls_key", "tls_client_ca", "insecure")}


def add_client_arguments(parser: argparse.ArgumentParser, default: Any = None) -> None:
    """``default=argparse.SUPPRESS`` for a parent parser shared by a command and its verbs."""
    parser.add_argument("--tls-ca", metavar="PEM", type=Path, default=default,
                        help="connect over TLS, verifying the server with this CA")
    parser.add_argument("--tls-cert", metavar="PEM", type=Path, default=default,
                        help="client certificate (mutual TLS)")
    parser.add_argument("--tls-key", metavar="PEM", type=Path, default=default, help="the private key of --tls-cert")


def client_options(args: argparse.Namespace) -> dict[str, Any]:
    """``AgentClient`` keyword arguments; the token is read from ``TREADLE_TOKEN`` by the client."""
    ca, cert, key = (getattr(args, name, None) for name in ("tls_ca", "tls_cert", "tls_key"))
    if ca is None and cert is None:
        return {}
    return {"tls": TLSConfig(ca=ca, cert=cert, key=key)}


def rpc_error(command: str, error: grpc.aio.AioRpcError, target: str, args: argparse.Namespace | None = None) -> str:
    """The line a client command prints for a failed call: the status, the server's message, and
    what to do about it."""
    code, details = error.code(), error.details() or ""
    hint = ""
    if code == grpc.StatusCode.UNAVAILABLE:
        hint = f" ({_unavailable_hint(target, args)})"
    elif code == grpc.StatusCode.UNAUTHENTICATED:
        hint = (" (set TREADLE_TOKEN to a token this server accepts)" if not os.environ.get(TOKEN_ENV)
                else " (the token in TREADLE_TOKEN is not one this server accepts)")
    return f"treadle {command}: {code.name}: {details}{hint}"


def _unavailable_hint(target: str, args: argparse.Namespace | None) -> str:
    """No server there, or one that closed the connection: a TLS server (or one that wants a
    client certificate) does that to a client that does not speak what it needs. gRPC's message
    does not say which (``Socket closed``), so the port is asked directly."""
    if not _accepts_connections(target):
        return f"is `treadle serve` running at {target}? --target or TREADLE_TARGET names another server"
    tls = args is not None and getattr(args, "tls_ca", None) is not None
    cert = args is not None and getattr(args, "tls_cert", None) is not None
    if not tls:
        return (f"a server runs at {target} but closed the connection: if it serves TLS, pass --tls-ca "
                "(and --tls-cert and --tls-key when it asks for client certificates)")
    if not cert:
        return (f"the server at {target} closed the TLS connection: it may ask for a client certificate "
                "(mutual TLS): pass --tls-cert and --tls-key")
    return (f"the server at {target} refused the TLS connection: is --tls-cert signed by the CA the server "
            "trusts (its --tls-client-ca), and --tls-ca the CA of the server's certificate?")


def _accepts_connections(target: str) -> bool:
    host, _, port = target.rpartition(":")
    try:
        with socket.create_connection((host.strip("[]") or "127.0.0.1", int(port)), timeout=2):
            return True
    except (OSError, ValueError):
        return False
