"""Tokens per second of the embedded model, bare and through a Treadle server.

    .venv/bin/python bench/local_model.py [--model local/smollm2-135m-instruct] [--runs N] [--tokens N]

The floor is llama.cpp itself in this run: ``Llama.create_chat_completion`` streamed in this
process (on a worker thread, as the server runs it), on the same model file and prompt. Then the same answers through a server's ``Stream``
RPC (the agent loop, the model's worker thread, gRPC to a client in this process). For each it
prints the median tokens per second and the time to the first token; the ratio says what the
server adds on top of the model.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from treadle.agents import Agent  # noqa: E402
from treadle.app import TreadleApp  # noqa: E402
from treadle.config import Settings  # noqa: E402
from treadle.core.messages import SystemMessage  # noqa: E402
from treadle.providers.local import load_llama, model_path  # noqa: E402
from treadle_client import AgentClient  # noqa: E402

SYSTEM = "You are a helpful, concise assistant."
PROMPT = "Describe Paris in three sentences."


def bare(model_id: str, runs: int, tokens: int) -> tuple[list[float], list[float]]:
    """The floor, generated on a thread of its own as the server's engine does: llama.cpp streamed
    from a Python process's main thread ran up to ten times slower here (1-3 tokens/s against
    25-50 on a busy 2-core machine), which made the server look faster than llama.cpp itself."""
    with ThreadPoolExecutor(1) as worker:
        return worker.submit(_bare, model_id, runs, tokens).result()


def _bare(model_id: str, runs: int, tokens: int) -> tuple[list[float], list[float]]:
    llama = load_llama(model_path(model_id))
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": PROMPT}]
    rates, firsts = [], []
    for _ in range(runs + 1):
        start, first, count = time.perf_counter(), 0.0, 0
        for event in llama.create_chat_completion(messages=messages, stream=True, max_tokens=tokens, seed=1):
            if event["choices"][0]["delta"].get("content"):
                count += 1
                first = first or time.perf_counter() - start
        rates.append(count / (time.perf_counter() - start - first) if count > 1 else 0.0)
        firsts.append(first)
    return rates[1:], firsts[1:]  # the first run warms the caches


async def served(model: str, runs: int, tokens: int) -> tuple[list[float], list[float]]:
    app = TreadleApp(Settings(listen="127.0.0.1:0", example_agent=False), env={})
    app.add_agent(Agent(id="bench", model=model, instructions=[SystemMessage(SYSTEM)]))
    port = await app.start()
    rates, firsts = [], []
    options = {"modelSettings": {"maxOutputTokens": tokens, "seed": 1}}
    try:
        async with AgentClient(f"127.0.0.1:{port}") as client:
            for _ in range(runs + 1):
                start, first, count = time.perf_counter(), 0.0, 0
                async for chunk in client.stream("bench", PROMPT, options=options):
                    if chunk.HasField("text_delta"):
                        count += 1
                        first = first or time.perf_counter() - start
                rates.append(count / (time.perf_counter() - start - first) if count > 1 else 0.0)
                firsts.append(first)
    finally:
        await app.stop(0)
    return rates[1:], firsts[1:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="local/smollm2-135m-instruct")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=96)
    args = parser.parse_args()
    floor, floor_first = bare(args.model.removeprefix("local/"), args.runs, args.tokens)
    rate, first = asyncio.run(served(args.model, args.runs, args.tokens))
    f, r = statistics.median(floor), statistics.median(rate)
    print(f"{args.model}: {args.runs} runs of up to {args.tokens} tokens")
    print(f"floor  llama.cpp in process  {f:6.1f} tokens/s  first token {statistics.median(floor_first) * 1e3:6.0f} ms")
    print(f"server Stream over gRPC      {r:6.1f} tokens/s  first token {statistics.median(first) * 1e3:6.0f} ms")
    print(f"ratio  server / floor        {r / f:6.2f}")


if __name__ == "__main__":
    main()
