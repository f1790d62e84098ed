"""Health-check latency while one caller sends the biggest request the default limits allow.

A ``treadle serve`` process of its own (an agent on the loopback OpenAI fake); the floor is the
health latency of the same server when idle, measured in the same run. Then ``Generate`` with
``--messages`` messages of ``--bytes`` each (defaults: ``limits.maxMessagesPerRequest`` and just
under ``limits.maxRequestBytes``) while a second caller checks health every 2 ms.

    .venv/bin/python bench/health_under_load.py [--messages 100] [--bytes 41800] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import grpc  # noqa: E402
from grpc_health.v1 import health_pb2, health_pb2_grpc  # noqa: E402

from tests.support import OpenAIServer, Turn  # noqa: E402
from treadle.v1 import agent_service_pb2, message_pb2  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def health_latencies(health: health_pb2_grpc.HealthStub, until: asyncio.Event) -> list[float]:
    out: list[float] = []
    while not until.is_set():
        start = time.perf_counter()
        await health.Check(health_pb2.HealthCheckRequest())
        out.append((time.perf_counter() - start) * 1000)
        await asyncio.sleep(0.002)
    return sorted(out)


async def main(messages: int, size: int, rounds: int) -> None:
    model = OpenAIServer([Turn.say("warm")] + [Turn.say("ok")] * rounds)
    data = tempfile.mkdtemp()
    config = Path(data) / "agents.json"
    config.write_text(json.dumps({"agents": [{"id": "echo", "model": "openai/m", "baseUrl": model.base_url}],
                                  "providers": {"openai": {"trustedBaseUrls": ["http://127.0.0.1:*"]}}}))
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "treadle.cli", "serve", "--listen", f"127.0.0.1:{port}",
                             "--config", str(config), "--data-dir", data],
                            env={**os.environ, "OPENAI_API_KEY": "sk-bench"},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        options = [("grpc.max_send_message_length", 16 << 20)]
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}", options=options) as channel:
            await asyncio.wait_for(channel.channel_ready(), 60)
            health = health_pb2_grpc.HealthStub(channel)
            generate = channel.unary_unary("/treadle.v1.AgentService/Generate", lambda b: b,
                                           agent_service_pb2.GenerateResponse.FromString)
            await generate(agent_service_pb2.GenerateRequest(agent_id="echo", prompt="warm up").SerializeToString())
            idle = asyncio.Event()
            asyncio.get_running_loop().call_later(1.0, idle.set)
            floor = await health_latencies(health, idle)
            print(f"floor: idle server, {len(floor)} health checks, p50 {floor[len(floor) // 2]:.2f} ms, "
                  f"max {floor[-1]:.2f} ms")
            text = message_pb2.Part(text=message_pb2.TextPart(text="x" * size))
            request = agent_service_pb2.GenerateRequest(agent_id="echo", messages=[
                message_pb2.Message(role=message_pb2.MESSAGE_ROLE_USER, content=message_pb2.MessageContent(
                    format=2, parts=[text])) for _ in range(messages)])
            body = request.SerializeToString()
            print(f"request: {messages} messages, {len(body)} bytes")
            for _ in range(rounds):
                done = asyncio.Event()
                poller = asyncio.create_task(health_latencies(health, done))
                start = time.perf_counter()
                try:
                    answer = await generate(body)
                    outcome = answer.text or answer.error.message[:80]
                except grpc.aio.AioRpcError as e:
                    outcome = f"{e.code().name}: {e.details()}"
                took = time.perf_counter() - start
                done.set()
                lat = await poller
                print(f"  {outcome!r}: Generate {took * 1000:.0f} ms; {len(lat)} health checks meanwhile, "
                      f"p50 {lat[len(lat) // 2]:.1f} ms, max {lat[-1]:.1f} ms "
                      f"({lat[-1] / floor[-1]:.1f}x the idle max)")
    finally:
        proc.terminate()
        proc.wait(20)
        model.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100)
    parser.add_argument("--bytes", type=int, default=41800)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    asyncio.run(main(args.messages, args.bytes, args.rounds))
