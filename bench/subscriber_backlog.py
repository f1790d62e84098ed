"""Server memory with subscribers that never read, while a run streams 100 MiB into their thread.

A ``treadle serve`` process of its own (an agent on the loopback OpenAI fake, 1,600 deltas of
64 KiB). The floor is the same run with no subscriber, in the same invocation; then the run again
on another thread with ``--subscribers`` subscribers that subscribe and never read. Prints the
server's RSS growth of each, and after the subscribers leave. ``limits.maxSubscriberBacklogBytes``
(8 MiB by default) bounds what one slow subscriber may hold; past it, it is cut off with
RESOURCE_EXHAUSTED.

    .venv/bin/python bench/subscriber_backlog.py [--subscribers 100]
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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import grpc  # noqa: E402

from tests.support import OpenAIServer, Turn  # noqa: E402
from treadle.v1 import signal_pb2, thread_service_pb2, thread_service_pb2_grpc  # noqa: E402

DELTA, COUNT = 64 << 10, 1600  # 100 MiB


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def run_once(stub: thread_service_pb2_grpc.ThreadServiceStub, thread: str) -> None:
    sent = await stub.SendMessage(signal_pb2.SendMessageRequest(
        agent_id="echo", resource_id="bench", thread_id=thread, message=signal_pb2.SignalMessage(contents="go")))
    while True:  # bounded by the fake's one answer; polled through the API as a user would
        runs = await stub.ListRuns(thread_service_pb2.ListRunsRequest(resource_id="bench", thread_id=thread))
        mine = [r for r in runs.runs if r.id == sent.accepted.run_id]
        if mine and mine[0].status != thread_service_pb2.RUN_STATUS_RUNNING:
            return
        await asyncio.sleep(0.2)


async def main(subscribers: int) -> None:
    model = OpenAIServer([Turn.say(["z" * DELTA] * COUNT), Turn.say(["z" * DELTA] * COUNT)])
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
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            await asyncio.wait_for(channel.channel_ready(), 60)
            stub = thread_service_pb2_grpc.ThreadServiceStub(channel)
            before = rss_mib(proc.pid)
            await run_once(stub, "floor")
            floor = rss_mib(proc.pid) - before
            print(f"floor: 100 MiB run with no subscriber: RSS {before:.0f} -> {before + floor:.0f} MiB (+{floor:.0f})")
            calls = []
            for _ in range(subscribers):
                call = stub.SubscribeToThread(signal_pb2.SubscribeToThreadRequest(resource_id="bench", thread_id="slow"))
                await call.read()  # subscribed (its first event), then never read again
                calls.append(call)
            base = rss_mib(proc.pid)
            await run_once(stub, "slow")
            after = rss_mib(proc.pid)
            for call in calls:
                call.cancel()
            await asyncio.sleep(2)  # the server notices the cancellations
            left = rss_mib(proc.pid)
            print(f"{subscribers} non-reading subscribers: RSS {base:.0f} -> {after:.0f} MiB (+{after - base:.0f}; "
                  f"{(after - base) / max(floor, 1):.2f}x the floor's growth); after they left {left:.0f} MiB")
    finally:
        proc.terminate()
        proc.wait(20)
        model.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subscribers", type=int, default=100)
    asyncio.run(main(parser.parse_args().subscribers))
