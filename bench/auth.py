"""What authentication adds: per call, and per remote processor invocation.

    .venv/bin/python bench/auth.py [--calls N] [--runs N] [--chunks N]

Two servers in this process, alike but for an ``auth`` section (20 credentials, the caller's
last, so every digest is compared), serve the same agent on an in-process scripted model (no
provider I/O blurs the numbers). Per call: the median latency of ``GetAgent`` (the cheapest call,
where the gate's share is largest) and of ``Generate``, from a client in this process, batches
alternating between the servers; on a busy machine those medians swing by more than auth
costs, so each line also times the gate's own work (authenticate, check the request, check the
scope) on each server and prints what auth adds as a share of the call. Per processor invocation: a run whose every chunk goes
through a remote lockstep echo processor in another process (attached with a token to the auth
server), microseconds per chunk: auth is checked once when the stream attaches, so an
invocation costs the same with and without it. Each line prints the ratio to the same run
without auth; the target is under 2%.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from treadle.api import auth, validate  # noqa: E402
from treadle.agents import Agent, ProcessorRef, RunRequest  # noqa: E402
from treadle.app import TreadleApp  # noqa: E402
from treadle.config import Settings  # noqa: E402
from treadle.config.auth import token_sha256  # noqa: E402
from treadle.core.messages import Message, SystemMessage  # noqa: E402
from treadle.testing import ScriptedModel, ScriptedModels, text_response  # noqa: E402
from treadle.v1 import agent_service_pb2  # noqa: E402
from treadle_client import AgentClient  # noqa: E402

TOKEN = "bench-token"


def _auth_file(directory: Path) -> Path:
    """20 credentials, the bench's last: every digest is compared on every call."""
    creds: list[dict[str, Any]] = [
        {"id": f"c{i}", "tokenSha256": token_sha256(f"other-{i}"), "agents": ["x"]} for i in range(19)]
    creds.append({"id": "bench", "tokenSha256": token_sha256(TOKEN), "agents": ["bench*"],
                  "processors": ["bench-echo"]})
    path = directory / "auth.yaml"
    path.write_text(yaml.safe_dump({"auth": {"credentials": creds}}))
    return path


async def _server(auth_file: Path | None, model: ScriptedModel, data_dir: Path) -> tuple[TreadleApp, str]:
    app = TreadleApp(Settings(listen="127.0.0.1:0", example_agent=False, auth_file=auth_file,
                              data_dir=data_dir), env={})
    app.loop.models = ScriptedModels(model)
    app.add_agent(Agent(id="bench", model="openai/bench", instructions=[SystemMessage("bench")]))
    app.add_agent(Agent(id="bench-guarded", model="openai/bench", instructions=[SystemMessage("bench")],
                        output_processors=[ProcessorRef("bench-echo")]))
    port = await app.start()
    return app, f"127.0.0.1:{port}"


async def _median_us(call: Callable[[], Awaitable[Any]], n: int) -> list[float]:
    out = []
    for _ in range(n):
        start = time.perf_counter()
        await call()
        out.append((time.perf_counter() - start) * 1e6)
    return out


class _Context:
    """What the gate reads from a call: its metadata and (no) client certificate."""

    def __init__(self, token: str) -> None:
        self._md = (("user-agent", "bench"), ("authorization", f"Bearer {token}"))

    def invocation_metadata(self) -> Any:
        return self._md

    def auth_context(self) -> dict[str, list[bytes]]:
        return {}


def _gate_us(app: TreadleApp, method: str, request: Any, n: int = 20000) -> float:
    """Microseconds the gate spends admitting one call (best of five rounds of ``n``)."""
    gate, context = app.gate, _Context(TOKEN)
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(n):
            cred = gate.authenticate(context)  # type: ignore[arg-type]
            auth.set_caller(cred)
            validate.check_message(request)
            gate.check(method, request, cred)
        best = min(best, (time.perf_counter() - start) / n * 1e6)
    auth.set_caller(None)
    return best


async def _per_call(clients: dict[str, AgentClient], models: dict[str, ScriptedModel], calls: int,
                    apps: dict[str, tuple[TreadleApp, str]]) -> None:
    requests = {
        "GetAgent": ("/treadle.v1.AgentService/GetAgent", agent_service_pb2.GetAgentRequest(id="bench")),
        "Generate": ("/treadle.v1.AgentService/Generate",
                     agent_service_pb2.GenerateRequest(agent_id="bench", prompt="go")),
    }
    print(f"{'per call':<22} {'no auth µs':>11} {'auth µs':>9} {'ratio':>7}   "
          f"{'gate: auth adds µs':>18} {'share of the call':>17}")
    for name in ("GetAgent", "Generate"):
        samples: dict[str, list[float]] = {"off": [], "on": []}
        for batch in range(12):
            for key in (("off", "on") if batch % 2 else ("on", "off")):
                client, model = clients[key], models[key]
                if name == "GetAgent":
                    async def call() -> Any:
                        return await client.get_agent("bench")
                else:
                    async def call() -> Any:
                        model.add(text_response(["hi"]))
                        return await client.generate("bench", "go")
                samples[key] += await _median_us(call, max(calls // 12, 5))
        off, on = statistics.median(samples["off"]), statistics.median(samples["on"])
        method, request = requests[name]
        added = _gate_us(apps["on"][0], method, request) - _gate_us(apps["off"][0], method, request)
        print(f"{name:<22} {off:>11.1f} {on:>9.1f} {on / off:>7.3f}   {added:>18.2f} {added / off:>16.2%}")


async def _per_invocation(apps: dict[str, tuple[TreadleApp, str]], models: dict[str, ScriptedModel],
                          runs: int, chunks: int) -> None:
    deltas = [f"w{i} " for i in range(chunks)]
    procs = []
    for key, (app, target) in apps.items():
        env = dict(os.environ, TREADLE_TOKEN=TOKEN if key == "on" else "")
        procs.append(await asyncio.create_subprocess_exec(
            sys.executable, str(ROOT / "bench" / "echo_processor.py"), "lockstep", target,
            stdout=subprocess.DEVNULL, env=env))
        assert await app.processors.wait_attached("bench-echo", 30), f"{key}: the processor did not attach"
    try:
        samples: dict[str, list[float]] = {"off": [], "on": []}
        for i in range(2 * (runs + 2)):
            key = ("off", "on")[i % 2]
            app, _ = apps[key]
            agent = app.registry.snapshot_agent("bench-guarded")
            models[key].add(text_response(deltas))
            start = time.perf_counter()
            out = [c async for c in app.loop.stream(agent, RunRequest([Message.user("go")]))]
            elapsed = time.perf_counter() - start
            assert out[-1].payload.reason == "stop", out[-1]
            if i >= 4:
                samples[key].append(elapsed / (len(out) - 1) * 1e6)
        off, on = statistics.median(samples["off"]), statistics.median(samples["on"])
        print(f"{'per processor chunk':<22} {off:>11.1f} {on:>9.1f} {on / off:>7.3f}")
    finally:
        for proc in procs:
            proc.kill()
            await proc.wait()


async def main(calls: int, runs: int, chunks: int) -> None:
    models = {"off": ScriptedModel(), "on": ScriptedModel()}
    directory = Path(tempfile.mkdtemp(prefix="treadle-bench-"))
    apps = {"off": await _server(None, models["off"], directory / "off"),
            "on": await _server(_auth_file(directory), models["on"], directory / "on")}
    clients = {"off": AgentClient(apps["off"][1], token=""), "on": AgentClient(apps["on"][1], token=TOKEN)}
    try:
        await clients["on"].get_agent("bench")  # the token works
        try:
            await AgentClient(apps["on"][1], token="wrong").get_agent("bench")
            raise AssertionError("a wrong token was accepted")
        except Exception as e:  # noqa: BLE001 - the refusal is what is checked
            assert "UNAUTHENTICATED" in str(e), e
        await _per_call(clients, models, calls, apps)
        await _per_invocation(apps, models, runs, chunks)
    finally:
        for client in clients.values():
            await client.close()
        for app, _ in apps.values():
            await app.stop(0)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=600)
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--chunks", type=int, default=200)
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)  # the no-auth server's warning is expected here
    asyncio.run(main(args.calls, args.runs, args.chunks))
