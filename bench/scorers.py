"""What scorers add to a run's request path, and how fast the queue scores runs.

    .venv/bin/python bench/scorers.py [--runs N] [--queue N]

In process, over gRPC on loopback, with a scripted model (no provider I/O) and SQLite:

1. ``Stream`` of the same answer on an agent without scorers and on one with four (three
   built-ins and a remote scorer that takes 50 ms), interleaved, ``--runs`` each: the median and
   p90 time to the stream's last chunk. Target: no measurable difference (the stream's end does
   not wait for the queue, let alone the scoring). Measured twice: "isolated" (each run starts
   once the one before is scored: what scoring adds to the run itself) and "back-to-back" (the
   next run shares this process's CPU with the scoring of the previous ones).
2. ``--queue`` runs of an agent whose only scorer is remote (a Python scorer attached with
   ``serve_scorers``, in this process): runs/s from the first run's start until every score is
   stored, against runs/s with no scorer.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import grpc  # noqa: E402

from treadle.agents import Agent, ScorerRef  # noqa: E402
from treadle.app import TreadleApp  # noqa: E402
from treadle.config.settings import Settings  # noqa: E402
from treadle.core.messages import SystemMessage  # noqa: E402
from treadle.testing import ScriptedModel, ScriptedModels, text_response  # noqa: E402
from treadle.v1 import agent_service_pb2, agent_service_pb2_grpc, score_service_pb2, score_service_pb2_grpc  # noqa: E402
from treadle_client import Score, ScorerRun, scorer, serve_scorers  # noqa: E402

ANSWER = ["The ", "capital ", "of ", "France ", "is ", "Paris."]


@scorer("slow-remote")
async def slow(run: ScorerRun) -> Score:
    await asyncio.sleep(0.05)
    return Score(1.0, "slow")


@scorer("fast-remote")
def fast(run: ScorerRun) -> float:
    return 1.0 if "Paris" in run.answer else 0.0


async def _time_stream(stub: agent_service_pb2_grpc.AgentServiceStub, agent: str) -> float:
    start = time.perf_counter()
    async for _ in stub.Stream(agent_service_pb2.StreamRequest(agent_id=agent, prompt="Capital of France?")):
        pass
    return time.perf_counter() - start


async def _scored(scores: score_service_pb2_grpc.ScoreServiceStub, agent: str) -> int:
    aggregates = (await scores.AggregateScores(score_service_pb2.AggregateScoresRequest(agent_id=agent))).aggregates
    return sum(a.count for a in aggregates)


async def main(runs: int, queue: int) -> None:
    model = ScriptedModel()
    with tempfile.TemporaryDirectory() as data:
        app = TreadleApp(Settings(listen="127.0.0.1:0", example_agent=False, data_dir=Path(data)), env={})
        app.loop.models = ScriptedModels(model)
        system = [SystemMessage("bench")]
        app.add_agent(Agent(id="plain", model="openai/bench", instructions=system))
        app.add_agent(Agent(id="scored", model="openai/bench", instructions=system, scorers=[
            ScorerRef(builtin="exact-match", options={"expected": "The capital of France is Paris."}),
            ScorerRef(builtin="regex-match", options={"pattern": "Paris"}),
            ScorerRef(builtin="pii"), ScorerRef(id="slow-remote")]))
        app.add_agent(Agent(id="queued", model="openai/bench", instructions=system,
                            scorers=[ScorerRef(id="fast-remote")]))
        port = await app.start()
        target = f"127.0.0.1:{port}"
        attachment = await serve_scorers([slow, fast], target)
        await attachment.ready()
        async with grpc.aio.insecure_channel(target) as channel:
            stub = agent_service_pb2_grpc.AgentServiceStub(channel)
            scores = score_service_pb2_grpc.ScoreServiceStub(channel)
            done = 0
            for mode in ("isolated", "back-to-back"):
                times: dict[str, list[float]] = {"plain": [], "scored": []}
                for i in range(runs + 5):
                    for agent in ("plain", "scored") if i % 2 else ("scored", "plain"):
                        model.add(text_response(ANSWER))
                        elapsed = await _time_stream(stub, agent)
                        if i >= 5:  # warm-up
                            times[agent].append(elapsed)
                        if agent == "scored":
                            done += 4
                        while mode == "isolated" and await _scored(scores, "scored") < done:
                            await asyncio.sleep(0.01)  # the next run starts once this one is scored
                print(f"{mode} (the next run starts {'once the last is scored' if mode == 'isolated' else 'at once'}):")
                for agent, samples in times.items():
                    samples.sort()
                    print(f"  {agent:>7}: median {statistics.median(samples) * 1e3:.2f} ms, "
                          f"p90 {samples[int(len(samples) * 0.9)] * 1e3:.2f} ms to the stream's end ({len(samples)} runs)")
                ratio = statistics.median(times["scored"]) / statistics.median(times["plain"])
                print(f"  scored/plain median: {ratio:.3f}")
            deadline = time.monotonic() + 60
            while await _scored(scores, "scored") < done and time.monotonic() < deadline:
                await asyncio.sleep(0.05)

            for agent in ("plain", "queued"):
                model.add(*[text_response(ANSWER) for _ in range(queue)])
                start = time.perf_counter()
                await asyncio.gather(*[_time_stream(stub, agent) for _ in range(queue)])
                while agent == "queued" and await _scored(scores, "queued") < queue:
                    if time.perf_counter() - start > 120:
                        raise SystemExit("the queue did not drain in 120 s")
                    await asyncio.sleep(0.02)
                took = time.perf_counter() - start
                what = "runs scored by a remote scorer" if agent == "queued" else "runs without scorers"
                print(f"{queue} {what}: {took:.2f} s, {queue / took:.0f} runs/s")
        await attachment.close()
        await app.stop(0)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--queue", type=int, default=200)
    args = parser.parse_args()
    asyncio.run(main(args.runs, args.queue))
