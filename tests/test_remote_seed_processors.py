"""Every seed example test, with its processors running REMOTELY in another process.

The test functions are the very ones in ``tests/test_seed_processors.py`` (re-exported here, so
pytest collects them again with their parametrization); only the ``harness_factory`` fixture
differs. ``RemoteHarness.agent(...)`` replaces each processor object by a reference to its id,
which the server resolves to a ``RemoteProcessor`` over ``ProcessorService.Attach``. At the first
run it starts ``tests.remote.processor_main --seed-test NAME``, which rebuilds the same processors
by running the same test body up to its first run, and attaches them with the Python SDK.

Two things keep the in-process assertions meaningful without trusting them blindly:
- after every run the harness asks the processor process for the lists and dicts its processors
  mutated (``WordCounter.totals``, the collector test's ``seen`` and ``states``) and copies them
  into the local objects, which themselves never run a hook;
- at the end it checks that every processor id really handled invocations in the other process.

Tests whose agent has no processor run unchanged (there is nothing to move), which keeps
"every seed test" literal rather than hand-picked.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

import tests.test_seed_processors as seed
from tests.harness import Harness
from tests.remote.procs import Child, spawn
from tests.support import AnthropicServer, OpenAIServer, ScriptStep
from treadle.agents import Agent, ProcessorRef
from treadle.app import TreadleApp
from treadle.core.chunks import Chunk
from treadle.config import Settings
from treadle.loop import AgentLoop, GenerateResult
from treadle.core.messages import Message
from treadle.core.processor import HOOKS

LANES = ("input_processors", "output_processors", "error_processors")

# The seed tests, collected again from this module.
for _name, _test in vars(seed).items():
    if _name.startswith("test_") and callable(_test):
        globals()[_name] = _test


class SameIdView:
    """One of several processors an agent lists under the same id (sharing their state, as the
    seed test's Reporter does): the remote processor, limited to the hooks this one implements.
    Every hook call still goes to the remote processor."""

    def __init__(self, processor_id: str, hooks: set[str], resolve: Callable[[ProcessorRef], Any]) -> None:
        self.id = processor_id
        self._hooks = hooks
        self._resolve = resolve
        self._remote: Any = None

    def _target(self) -> Any:
        if self._remote is None:
            self._remote = self._resolve(ProcessorRef(self.id))
        return self._remote

    def implements_hook(self, hook: str) -> bool:
        return hook in self._hooks and self._target().implements_hook(hook)

    def __getattr__(self, name: str) -> Any:
        if name in HOOKS and name not in self._hooks:
            raise AttributeError(name)
        return getattr(self._target(), name)


class RemoteHarness(Harness):
    def __init__(self, server: Any, app: TreadleApp, target: str, test_name: str,
                 kwargs: dict[str, Any]) -> None:
        super().__init__(server)
        self.app = app
        self.target = target
        self.registry = app.registry  # resolves processor ids to remote processors
        self.loop = AgentLoop(self.registry, self.router, self.tracer_provider.get_tracer("treadle"))
        self._test = test_name
        self._kwargs = kwargs
        self.local: list[Any] = []
        self.child: Child | None = None
        self.invocations: dict[str, int] = {}

    def agent(self, **kw: Any) -> Agent:
        for lane in LANES:
            processors = kw.get(lane)
            if processors:
                self.local.extend(processors)
        ids = [p.id for p in self.local]
        for lane in LANES:
            if kw.get(lane):
                kw[lane] = [
                    SameIdView(p.id, {h for h in HOOKS if callable(getattr(p, h, None))},
                               self.registry.resolve_processor)
                    if ids.count(p.id) > 1 else ProcessorRef(p.id)
                    for p in kw[lane]
                ]
        return super().agent(**kw)

    async def _ensure_attached(self) -> None:
        if self.child is not None or not self.local:
            return
        self.child = await spawn("tests.remote.processor_main", self.target,
                                 "--seed-test", self._test, "--kwargs", json.dumps(self._kwargs))
        await self.child.expect("ready")
        for pid in {p.id for p in self.local}:
            assert await self.app.processors.wait_attached(pid, 30)

    async def _sync(self) -> None:
        if self.child is None:
            return
        await self.child.send("sync")
        report = json.loads((await self.child.expect("sync ")).removeprefix("sync "))
        from tests.remote.processor_main import apply_mirror

        for local, mirrored in zip(self.local, report["mirror"], strict=True):
            apply_mirror(local, mirrored)
        self.invocations = report["invocations"]

    async def settled(self, check: Callable[[], bool], timeout: float = 10) -> None:
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while not check():
            assert loop.time() < end, f"still false after {timeout}s"
            await asyncio.sleep(0.05)
            await self._sync()

    async def stream(self, agent: Agent, prompt: str | list[Message], **options: Any) -> list[Chunk]:
        await self._ensure_attached()
        try:
            return await super().stream(agent, prompt, **options)
        finally:
            await self._sync()

    async def generate(self, agent: Agent, prompt: str | list[Message], **options: Any) -> GenerateResult:
        await self._ensure_attached()
        try:
            return await super().generate(agent, prompt, **options)
        finally:
            await self._sync()


@pytest.fixture
async def harness_factory(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Callable[..., Harness]]:
    made: list[RemoteHarness] = []
    apps: list[TreadleApp] = []
    # A module that re-exports these tests may serve the processors from another language.
    harness_class = getattr(request.module, "HARNESS", RemoteHarness)
    callspec = getattr(request.node, "callspec", None)
    kwargs = dict(callspec.params) if callspec is not None else {}
    name = request.node.originalname

    async def start_app() -> tuple[TreadleApp, str]:
        app = TreadleApp(Settings(listen="127.0.0.1:0", example_agent=False,
                                  data_dir=tmp_path_factory.mktemp("data")), env={})
        apps.append(app)
        return app, f"127.0.0.1:{await app.start()}"

    app, target = await start_app()

    def make(script: list[ScriptStep], provider: str = "openai") -> Harness:
        kind = AnthropicServer if provider == "anthropic" else OpenAIServer
        harness = harness_class(kind(script), app, target, name, kwargs)
        made.append(harness)
        return harness

    yield make
    for h in made:
        if h.child is not None:
            await h.child.close()
        await h.router.aclose()
        h.server.close()
    for a in apps:
        await a.stop(0)
    for h in made:
        # Honesty: the hooks really ran in the other process, for every processor id.
        if h.local:
            assert h.child is not None, "the test never ran its agent"
            missing = {p.id for p in h.local} - {k for k, v in h.invocations.items() if v > 0}
            assert not missing, f"no invocation reached the processor process for {missing}"
