"""What a pass-through ``processOutputStream`` processor costs per chunk on the Java SDK, as a
ratio to the Python SDK's, measured in the same run.

    .venv/bin/python bench/remote_processor_stream_java.py [--runs N] [--chunks N] [--modes M,...]

As ``remote_processor_stream_ts.py`` (whose measurement this reuses): one server in this process
streams ``--chunks`` text deltas from an in-process scripted model through an echo processor in
another process (``echo_processor.py`` on the Python SDK, ``dev.treadle.bench.EchoProcessor``
on the Java SDK, compiled first with ``mvn test-compile`` in ``clients/java``), per delivery
mode, and prints the added microseconds per chunk, each as a ratio to a bare gRPC round trip in
this run, and the Java SDK's cost as a ratio to Python's.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.remote_processor_stream_ts import command as python_or_ts, compare, parse_args  # noqa: E402
from tests.java_build import JAVA_CLIENT, java_command  # noqa: E402


def command(sdk: str, mode: str, target: str) -> tuple[list[str], Path]:
    if sdk == "java":
        # The JIT's full tiers: a long-running processor, not a short test program.
        argv = java_command("dev.treadle.bench.EchoProcessor", mode, target)
        return [a for a in argv if a != "-XX:TieredStopAtLevel=1"], JAVA_CLIENT
    return python_or_ts(sdk, mode, target)


if __name__ == "__main__":
    args = parse_args(__doc__)
    java_command("dev.treadle.bench.EchoProcessor")  # builds before anything is timed
    asyncio.run(compare("java", "java", command, args.runs, args.chunks, [m for m in args.modes.split(",") if m]))
