"""Python client SDK for Treadle.

::

    async with AgentClient("127.0.0.1:50051") as client:
        async for chunk in client.stream("assistant", "hello"):
            if chunk.WhichOneof("chunk") == "text_delta":
                print(chunk.text_delta.text, end="", flush=True)

Responses are the generated ``treadle.v1`` messages; failures raise ``grpc.aio.AioRpcError``
with the server's status code and message. ``treadle_client.typed.AgentClient`` (the
``dataclasses`` extra) makes the same calls with betterproto2 dataclasses instead.

Remote processors are classes with the Mastra framework's hook methods, attached to running servers::

    attachment = await attach([ContentFilter(["secret"])], "127.0.0.1:50051")
    await attachment.ready()

and remote tools are ``Tool`` objects (``treadle_client.Tool``, or functions decorated with
``treadle_client.tool``) served with ``serve_tools``; remote scorers (``@scorer``) with
``serve_scorers``; voice providers (speech to text, text to speech) with ``serve_voices``. ``run_processors``
and ``run_tools`` do the same for scripts, until SIGTERM or Ctrl-C. See ``clients/python/README.md``.
"""

from treadle.core.tool import Tool, ToolContext, tool

from ._agents import DEFAULT_TARGET, AgentClient, default_target
from ._attach import AttachError, Attachment
from ._blocking import run_processors, run_scorers, run_tools
from ._connect import TOKEN_ENV, TLSConfig
from ._nested import nested
from ._processors import attach
from ._text_gate import TextGate
from ._signals import ThreadSubscription
from ._tools import serve_tools
from ._scorers import Score, Scorer, ScorerRun, scorer, serve_scorers
from ._voices import serve_voices

__all__ = [
    "DEFAULT_TARGET",
    "AgentClient",
    "AttachError",
    "Attachment",
    "TextGate",
    "attach",
    "default_target",
    "nested",
    "run_processors",
    "run_scorers",
    "run_tools",
    "Score",
    "Scorer",
    "ScorerRun",
    "scorer",
    "serve_scorers",
    "serve_tools",
    "serve_voices",
    "TLSConfig",
    "TOKEN_ENV",
    "ThreadSubscription",
    "Tool",
    "ToolContext",
    "tool",
]
