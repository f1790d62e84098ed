"""A processor process for the tests, attached with the Python SDK.

    python -m tests.remote.processor_main TARGET NAME...          # seed processors by name
    python -m tests.remote.processor_main TARGET --seed-test TEST [--kwargs JSON]
    python -m tests.remote.processor_main TARGET NAME... --blocking   # run_processors, until SIGTERM

The second form serves exactly the processors an in-process seed test builds: it runs that test's
body from ``tests/test_seed_processors.py`` with a harness that only records the processors handed
to ``agent(...)`` and stops at the first run. Processors sharing an id (the seed test's Reporter
reads the collector's state that way) are served as one processor with the union of their hooks.

Prints ``ready`` after every target's welcome. On stdin, ``sync`` prints ``sync {json}``: the
lists and dicts the processors mutated (instance and class attributes, and closure cells of
their methods) and how many invocations each id handled, so a test can assert in-process on what
the remote processor did. Exits when stdin closes.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import inspect
import json
import sys
import types
from collections import Counter
from typing import Any

from opentelemetry.sdk.trace import TracerProvider

from tests import seed_processors as sp
from treadle.core.processor import HOOKS
from treadle_client import attach, run_processors

NAMED: dict[str, Any] = {
    "lowercase": sp.LowercaseProcessor,
    "dynamic-model": sp.DynamicModelProcessor,
    "reasoning-transformer": sp.ReasoningTransformer,
    "content-filter": lambda: sp.ContentFilter(["secret"]),
    "word-counter": sp.WordCounter,
    "redact-tool-result": sp.RedactToolResult,
    "scan-tool-result": sp.ScanToolResult,
    "error-recovery": sp.ErrorRecoveryProcessor,
    "moderation-collector": sp.ModerationCollector,
    "moderation-emitter": sp.ModerationEmitter,
}

LANES = ("input_processors", "output_processors", "error_processors")


class _Collected(Exception):
    pass


class _RecordingHarness:
    """Stands in for ``tests.harness.Harness``: records the processors, stops at the first run."""

    def __init__(self, sink: list[Any]) -> None:
        self._sink = sink
        self.server = self
        self.registry = self  # the server's tools stay with the server

    def add_tool(self, tool: Any) -> None:
        pass

    def add(self, *steps: Any) -> None:
        pass

    def agent(self, **kw: Any) -> dict[str, Any]:
        for lane in LANES:
            self._sink.extend(p for p in kw.get(lane) or [] if not isinstance(p, str))
        return kw

    async def generate(self, *args: Any, **kw: Any) -> Any:
        raise _Collected

    async def stream(self, *args: Any, **kw: Any) -> Any:
        raise _Collected


async def processors_of_seed_test(name: str, kwargs: dict[str, Any]) -> list[Any]:
    """The processors, in lane order, that the seed test ``name`` gives its agent."""
    # The real harness imports both provider SDKs (1.5 s); the bodies only need the names until
    # their first run, which never happens here.
    stub = types.ModuleType("tests.harness")
    stub.Harness = stub.harness_factory = stub.of_type = stub.text_of = stub.types = None  # type: ignore[attr-defined]
    sys.modules.setdefault("tests.harness", stub)
    from tests import test_seed_processors

    found: list[Any] = []
    test = getattr(test_seed_processors, name)
    try:
        await test(lambda *a, **k: _RecordingHarness(found), **kwargs)
    except _Collected:
        pass
    return found


class Merged:
    """Several processors that share an id, served as one: each hook goes to its implementer."""

    def __init__(self, parts: list[Any]) -> None:
        self.id = parts[0].id
        for part in parts:
            for hook in HOOKS:
                method = getattr(part, hook, None)
                if callable(method):
                    if hasattr(self, hook):
                        raise ValueError(f"two processors with id {self.id!r} implement {hook}")
                    setattr(self, hook, method)
                    if hook == "process_output_stream":
                        self.process_data_parts = getattr(part, "process_data_parts", False)


def serve_as(processors: list[Any]) -> list[Any]:
    by_id: dict[str, list[Any]] = {}
    for p in processors:
        by_id.setdefault(p.id, []).append(p)
    return [ps[0] if len(ps) == 1 else Merged(ps) for ps in by_id.values()]


def count_invocations(processors: list[Any], counts: Counter[str]) -> None:
    """Wrap each hook method on the instance so ``sync`` can report how many ran here."""
    for p in processors:
        for hook in HOOKS:
            method = getattr(p, hook, None)
            if not callable(method):
                continue

            @functools.wraps(method)
            async def counted(args: Any, _m: Any = method, _id: str = p.id) -> Any:
                counts[_id] += 1
                result = _m(args)
                return await result if inspect.isawaitable(result) else result

            setattr(p, hook, counted)


# --- the mirror ----------------------------------------------------------------------------------


def containers(obj: Any) -> dict[str, Any]:
    """Every list or dict reachable from ``obj``'s attributes, class attributes and the closure
    cells of its class's methods, by a path that names the same container in another process."""
    out: dict[str, Any] = {}
    for name, value in vars(obj).items():
        if isinstance(value, list | dict):
            out[f"attr:{name}"] = value
    for name, value in vars(type(obj)).items():
        if name.startswith("__"):
            continue
        if isinstance(value, list | dict):
            out[f"class:{name}"] = value
        fn = getattr(value, "__func__", value)
        for var, cell in zip(getattr(getattr(fn, "__code__", None), "co_freevars", ()),
                             getattr(fn, "__closure__", None) or (), strict=False):
            try:
                content = cell.cell_contents
            except ValueError:
                continue
            if isinstance(content, list | dict):
                out[f"cell:{name}:{var}"] = content
    return out


def apply_mirror(obj: Any, mirrored: dict[str, Any]) -> None:
    """Make ``obj``'s containers hold what the remote copy's held (in place, so aliases see it)."""
    local = containers(obj)
    for path, value in mirrored.items():
        target = local.get(path)
        if isinstance(target, list):
            target[:] = value
        elif isinstance(target, dict):
            target.clear()
            target.update(value)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("target")
    parser.add_argument("names", nargs="*")
    parser.add_argument("--seed-test")
    parser.add_argument("--kwargs", default="{}")
    parser.add_argument("--blocking", action="store_true",
                        help="serve with run_processors until SIGTERM (no stdin protocol)")
    opts = parser.parse_args()
    if opts.blocking:
        run_processors([NAMED[n]() for n in opts.names], opts.target, backoff=(0.05, 0.5))
        return
    if opts.seed_test:
        processors = asyncio.run(processors_of_seed_test(opts.seed_test, json.loads(opts.kwargs)))
    else:
        processors = [NAMED[n]() for n in opts.names]
    counts: Counter[str] = Counter()
    served = serve_as(processors)
    count_invocations(served, counts)
    asyncio.run(serve(processors, served, counts, opts.target))


async def serve(processors: list[Any], served: list[Any], counts: Counter[str], target: str) -> None:
    attachment = await attach(served, target, tracer_provider=TracerProvider(), backoff=(0.05, 0.5))
    await attachment.ready(timeout=30)
    print("ready", flush=True)
    loop = asyncio.get_running_loop()
    while line := await loop.run_in_executor(None, sys.stdin.readline):
        if line.strip() == "sync":
            report = {"invocations": dict(counts),
                      "mirror": [containers(p) for p in processors]}
            print("sync " + json.dumps(report, default=repr), flush=True)
    await attachment.close()


if __name__ == "__main__":
    main()
