"""What a pass-through ``processOutputStream`` processor costs per chunk on the Go SDK, as a
ratio to the Python SDK's, measured in the same run.

    .venv/bin/python bench/remote_processor_stream_go.py [--runs N] [--chunks N] [--modes M,...]

As ``remote_processor_stream_ts.py`` (whose measurement this reuses): one server in this process
streams ``--chunks`` text deltas from an in-process scripted model through an echo processor in
another process (``echo_processor.py`` on the Python SDK, ``clients/go/internal/benchecho`` on
the Go SDK, built first), per delivery mode, and prints the added microseconds per chunk, each
as a ratio to a bare gRPC round trip in this run, and the Go SDK's cost as a ratio to Python's.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.remote_processor_stream_ts import command as python_or_ts, compare, parse_args  # noqa: E402

GO_MODULE = ROOT / "clients" / "go"


def build(directory: Path) -> Path:
    out = directory / "benchecho"
    subprocess.run(["go", "build", "-o", str(out), "./internal/benchecho"], cwd=GO_MODULE, check=True)
    return out


if __name__ == "__main__":
    args = parse_args(__doc__)
    with tempfile.TemporaryDirectory() as tmp:
        binary = build(Path(tmp))

        def command(sdk: str, mode: str, target: str) -> tuple[list[str], Path]:
            if sdk == "go":
                return [str(binary), mode, target], GO_MODULE
            return python_or_ts(sdk, mode, target)

        asyncio.run(compare("go", "go", command, args.runs, args.chunks, [m for m in args.modes.split(",") if m]))
