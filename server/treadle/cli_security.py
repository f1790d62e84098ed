"""The security flags of ``treadle serve`` and ``treadle chat``, kept out of ``cli.py``.

``serve``: ``--auth-file``, ``--tls-cert``, ``--tls-key``, ``--tls-client-ca``, ``--insecure``.
``chat``: ``--tls-ca`` (and ``--tls-cert``/``--tls-key`` for mutual TLS); the token comes from
``TREADLE_TOKEN``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from treadle_client import TLSConfig


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


def add_client_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tls-ca", metavar="PEM", type=Path,
                        help="connect over TLS, verifying the server with this CA")
    parser.add_argument("--tls-cert", metavar="PEM", type=Path, help="client certificate (mutual TLS)")
    parser.add_argument("--tls-key", metavar="PEM", type=Path, help="the private key of --tls-cert")


def client_options(args: argparse.Namespace) -> dict[str, Any]:
    """``AgentClient`` keyword arguments; the token is read from ``TREADLE_TOKEN`` by the client."""
    if args.tls_ca is None and args.tls_cert is None:
        return {}
    return {"tls": TLSConfig(ca=args.tls_ca, cert=args.tls_cert, key=args.tls_key)}
