"""The web console: static pages served with a Connect (JSON) gateway to the server's own gRPC
API (see docs/console.md)."""

from .gateway import ConsoleGateway

__all__ = ["ConsoleGateway"]
