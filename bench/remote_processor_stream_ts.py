"""What a pass-through ``processOutputStream`` processor costs per chunk on the TypeScript SDK, as
a ratio to the Python SDK's, measured in the same run.

    .venv/bin/python bench/remote_processor_stream_ts.py [--runs N] [--chunks N] [--modes M,...]

As ``remote_processor_stream.py``: one server in this process streams ``--chunks`` text deltas
from an in-process scripted model through an echo processor in another process
(``echo_processor.py`` on the Python SDK, ``echo_processor.mts`` on the TypeScript SDK), per
delivery mode. It prints the added microseconds per chunk against the same run without a
processor, each as a ratio to the floor (a bare gRPC round trip in this run), and the TypeScript
SDK's cost as a ratio to the Python SDK's.
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.grpc_floor import bidi_round_trip_us  # noqa: E402
from bench.remote_processor_stream import MODES, _time_runs  # noqa: E402
from treadle.agents import Agent, ProcessorRef  # noqa: E402
from treadle.app import TreadleApp  # noqa: E402
from treadle.config import Settings  # noqa: E402
from treadle.core.messages import SystemMessage  # noqa: E402
from treadle.testing import ScriptedModel, ScriptedModels  # noqa: E402

TS_CLIENT = ROOT / "clients" / "typescript"


def command(sdk: str, mode: str, target: str) -> tuple[list[str], Path]:
    if sdk == "python":
        return [sys.executable, str(ROOT / "bench" / "echo_processor.py"), mode, target], ROOT
    # node with tsx's loader, not the tsx launcher: one process, so killing it detaches it
    return ["node", "--import", "tsx", str(ROOT / "bench" / "echo_processor.mts"), mode, target], TS_CLIENT


Command = Callable[[str, str, str], tuple[list[str], Path]]
"""(sdk, mode, target) -> the echo processor's argv and working directory."""


async def main(runs: int, n_chunks: int, modes: list[str]) -> None:
    await compare("ts", "typescript", command, runs, n_chunks, modes)


async def compare(label: str, sdk: str, command: Command, runs: int, n_chunks: int, modes: list[str]) -> None:
    """Prints, per mode, the Python SDK's and ``sdk``'s cost per chunk and their ratio."""
    floor = await bidi_round_trip_us()
    deltas = [f"w{i} " for i in range(n_chunks)]
    model = ScriptedModel()
    app = TreadleApp(Settings(listen="127.0.0.1:0", example_agent=False))
    app.loop.models = ScriptedModels(model)
    target = f"127.0.0.1:{await app.start()}"

    def agent(processors: list[ProcessorRef]) -> Agent:
        return Agent(id="bench", model="scripted/bench", instructions=[SystemMessage("bench")],
                     output_processors=processors)

    versions: dict[str, set[int]] = {}

    async def added_us(sdk: str, mode: str, base: float, count: int) -> float:
        argv, cwd = command(sdk, mode, target)
        proc = await asyncio.create_subprocess_exec(*argv, cwd=cwd, stdout=subprocess.DEVNULL)
        try:
            assert await app.processors.wait_attached("bench-echo", 60)
            versions.setdefault(sdk, set()).update(c.version for c in app.processors.connections())
            t, _ = await _time_runs(app, agent([ProcessorRef("bench-echo")]), model, runs, deltas)
            return (t - base) / count * 1e6
        finally:
            if proc.returncode is None:
                proc.terminate()
                try:
                    await asyncio.wait_for(proc.wait(), 10)
                except TimeoutError:
                    proc.kill()
            await proc.wait()
            while app.processors.declaration("bench-echo") is not None:
                await asyncio.sleep(0.01)  # wait for the server to see the stream gone

    try:
        base, count = await _time_runs(app, agent([]), model, runs, deltas)
        print(f"floor: bare gRPC bidi round trip {floor:.1f} µs")
        print(f"baseline: {base * 1e3:.1f} ms per run of {count} chunks without a processor")
        print(f"{'mode':<10} {'python µs/chunk':>16} {'x floor':>8} {label + ' µs/chunk':>12} {'x floor':>8} "
              f"{label + '/python':>10}")
        for mode in modes:
            py = await added_us("python", mode, base, count)
            other = await added_us(sdk, mode, base, count)
            print(f"{mode:<10} {py:>16.1f} {py / floor:>8.2f} {other:>12.1f} {other / floor:>8.2f} {other / py:>10.2f}")
        print("protocol versions the server chose: " + ", ".join(f"{k} {sorted(v)}" for k, v in versions.items()))
    finally:
        await app.stop(0)


def parse_args(doc: str | None) -> argparse.Namespace:
    """The SDK benches' flags: --runs, --chunks, --modes."""
    parser = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--chunks", type=int, default=200)
    parser.add_argument("--modes", default=",".join(MODES), help=f"comma-separated, of {', '.join(MODES)}")
    return parser.parse_args()


if __name__ == "__main__":
    args = parse_args(__doc__)
    asyncio.run(main(args.runs, args.chunks, [m for m in args.modes.split(",") if m]))
