"""The gRPC edge: servicers, the server, and proto <-> domain conversion.

Only this package (with ``app.py`` and ``testing/``) touches grpc or the generated code.
"""

from .agent_service import AgentServicer
from .server import GrpcServer, ServerOptions

__all__ = ["AgentServicer", "GrpcServer", "ServerOptions"]
