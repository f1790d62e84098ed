"""``treadle processors serve NAME``: any built-in processor as a remote processor.

Attaches the built-in to a server over ``ProcessorService.Attach`` with the Python SDK, as any
user's processor process would, so guards can run as their own deployment, scaled apart from
the agent servers. Agents then name it by its id (the built-in's name unless ``--id`` is given).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
from typing import Any

from treadle_client import AttachError, attach, default_target

# The built-ins (and the server code they use) are imported when the command runs, so that
# other commands start without them.


def add_parser(sub: Any) -> None:
    """Register ``processors serve`` on the top-level subparsers."""
    processors = sub.add_parser("processors", help="built-in processors")
    processors.set_defaults(run=run)
    verbs = processors.add_subparsers(dest="processors_command", required=True)
    serve = verbs.add_parser("serve", help="serve a built-in processor to a server until SIGTERM or Ctrl-C")
    serve.add_argument("name", metavar="NAME", help="the built-in's name (pii, moderation, token-limiter, ...)")
    serve.add_argument("--options", metavar="JSON", default="{}", help="the built-in's options, as a JSON object")
    serve.add_argument("--id", default="", help="the processor id agents name (default: NAME)")
    serve.add_argument("--target", metavar="HOST:PORT", action="append",
                       help=f"server to attach to; repeat for several (default: {default_target()}; "
                            "set TREADLE_TARGET to change it)")


def run(args: argparse.Namespace) -> int:
    from .processors import builtin

    from .config import logs

    logs.setup()  # TREADLE_LOG_LEVEL and TREADLE_LOG_FORMAT, as for the server
    from .tracing import build_tracer_provider

    # Spans (the SDK's hook spans, a judge's model calls) go where OTEL_* says, as the server's do.
    provider = build_tracer_provider(service_name="treadle-processors")
    try:
        options = json.loads(args.options)
        processor = build(args.name, options, args.id, provider)
    except (ValueError, builtin.BuiltinError) as e:
        print(f"treadle processors serve: {e}", file=sys.stderr)
        return 2
    try:
        return asyncio.run(_serve(processor, args.target or [default_target()], provider))
    finally:
        if provider is not None:
            provider.shutdown()


def build(name: str, options: Any, processor_id: str = "", provider: Any = None) -> Any:
    """The built-in, with a provider router of its own for the model-backed ones."""
    from opentelemetry import trace

    from .processors import builtin
    from .providers.router import ModelRouter

    if not isinstance(options, dict):
        raise ValueError("--options must be a JSON object")
    tracer = provider.get_tracer("treadle") if provider is not None else trace.get_tracer("treadle")
    context = builtin.BuiltinContext(models=ModelRouter(), tracer=tracer)
    return builtin.build(name, options, id=processor_id, context=context)


async def _serve(processor: Any, targets: list[str], provider: Any) -> int:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    attachment = await attach([processor], targets, tracer_provider=provider)
    try:
        ready = asyncio.ensure_future(attachment.ready())
        stopping = asyncio.ensure_future(stop.wait())
        done, _ = await asyncio.wait([ready, stopping], return_when=asyncio.FIRST_COMPLETED)
        if ready in done:
            try:
                ready.result()
            except AttachError as e:
                print(f"treadle processors serve: {e}", file=sys.stderr)
                return 1
            print(f"serving {processor.id} ({type(processor).__name__}) on {', '.join(targets)}", flush=True)
            await stop.wait()
        else:
            ready.cancel()
        return 0
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
        await attachment.close()
        models = getattr(getattr(processor, "judge", None), "models", None)
        if models is not None:
            await models.aclose()
