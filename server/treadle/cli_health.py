"""``treadle health``: asks a server's ``grpc.health.v1`` whether it serves, for probes (a
container's HEALTHCHECK, a systemd or Kubernetes check, a load balancer script).

Exit status 0 when the server answers ``SERVING``; 1 when it answers anything else (``NOT_SERVING``
while it drains at shutdown) or cannot be reached within ``--timeout``. One line on standard
output says which.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from treadle_client import default_target
from treadle_client._connect import Connect

from . import cli_security


def add_parser(sub: Any) -> None:
    health = sub.add_parser("health", help="exit 0 when the server serves (for probes), 1 otherwise",
                            description="Check a server's grpc.health.v1 status. Exit status 0: SERVING; "
                                        "1: not serving, or not reachable.")
    health.add_argument("--target", metavar="HOST:PORT", default=None,
                        help=f"server address (default: {default_target()}; set TREADLE_TARGET to change it)")
    health.add_argument("--timeout", metavar="SECONDS", type=float, default=5.0,
                        help="how long to wait for the answer (default 5)")
    health.add_argument("--service", default="", help="a service name to check (default: the whole server)")
    cli_security.add_client_arguments(health)
    health.set_defaults(run=lambda args: asyncio.run(_check(args)))


async def _check(args: argparse.Namespace) -> int:
    target = args.target or default_target()
    connect = Connect(cli_security.client_options(args).get("tls"))
    channel = connect.channel(target)
    try:
        stub = health_pb2_grpc.HealthStub(channel)
        reply = await stub.Check(health_pb2.HealthCheckRequest(service=args.service), timeout=args.timeout, metadata=connect.metadata)
    except grpc.aio.AioRpcError as e:
        print(f"{target}: not reachable: {e.code().name}: {e.details()}", file=sys.stderr)
        return 1
    finally:
        await channel.close()
    status = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
    print(f"{target}: {status}")
    return 0 if reply.status == health_pb2.HealthCheckResponse.SERVING else 1
