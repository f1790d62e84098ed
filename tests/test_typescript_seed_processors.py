"""The seed tests of the framework's TypeScript processor examples, with the processors running
in a TypeScript process on the TypeScript SDK (``@treadle/client``).

The examples under ``tests/remote/ts/seed`` are the framework's own, with only their import lines
changed; ``tests/remote/ts/seed_main.ts`` attaches the ones a test gives its agent. The test
bodies are the very ones of ``tests/test_seed_processors.py``, run through the remote harness of
``tests/test_remote_seed_processors.py``: each TypeScript processor must give the same results as
its Python twin. The one difference is a name: the TypeScript ``QualityGuardrail`` reports its
score as ``qualityScore`` (the Python port says ``quality_score``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import tests.test_seed_processors as seed
from tests.harness import Harness
from tests.remote.procs import Child
from tests.seed_processors import QualityGuardrail, WordCounter
from tests.test_remote_seed_processors import RemoteHarness, harness_factory  # noqa: F401

ROOT = Path(__file__).resolve().parent.parent
TS_CLIENT = ROOT / "clients" / "typescript"
TSX = TS_CLIENT / "node_modules" / ".bin" / "tsx"
NODE_TSX = ("node", "--import", "tsx")
"""Node with tsx's loader (run from ``TS_CLIENT``): one process, where the ``tsx`` launcher makes two."""
SEED_MAIN = ROOT / "tests" / "remote" / "ts" / "seed_main.ts"

TESTS = (
    "test_lowercase_input_processor",
    "test_content_filter_blocks_input_before_the_model",
    "test_content_filter_stops_the_stream_at_the_blocked_chunk",
    "test_on_violation_is_called_on_abort_and_its_errors_are_swallowed",
    "test_word_counter_keeps_state_across_chunks_and_not_across_calls",
    "test_quality_guardrail_retries_with_feedback_then_accepts",
    "test_quality_guardrail_aborts_after_three_retries",
    "test_redact_tool_result_reaches_stream_and_next_step",
    "test_scan_tool_result_blocks_prompt_injection",
    "test_error_recovery_trims_and_retries_context_length",
    "test_moderation_collector_sees_data_parts",
    "test_input_step_adds_a_tool_that_the_model_sees_and_that_runs",
)
for _name in TESTS:
    globals()[_name] = getattr(seed, _name)


class TypeScriptHarness(RemoteHarness):
    """Serves the test's processors from ``seed_main.ts`` instead of a Python process."""

    async def _ensure_attached(self) -> None:
        if self.child is not None or not self.local:
            return
        if not TSX.exists():
            pytest.fail("clients/typescript/node_modules is missing; run `npm ci --prefix clients/typescript`")
        proc = await asyncio.create_subprocess_exec(
            *NODE_TSX, str(SEED_MAIN), self.target, "--seed-test", self._test, cwd=TS_CLIENT,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        )
        self.child = Child(proc)
        await self.child.expect("ready")
        for pid in {p.id for p in self.local}:
            assert await self.app.processors.wait_attached(pid, 30)

    async def _sync(self) -> None:
        await super()._sync()
        if self.child is None:
            return
        # The TypeScript WordCounter logs its total at each finish chunk, as the example does.
        totals = [int(line.removeprefix("Total words: ")) for line in self.child.lines
                  if line.startswith("Total words: ")]
        for p in self.local:
            if isinstance(p, WordCounter):
                p.totals[:] = totals


HARNESS = TypeScriptHarness


async def test_retry_without_budget_is_an_abort(harness_factory) -> None:  # noqa: F811
    h: Harness = harness_factory([seed.Turn.say("short")])
    agent = h.agent(output_processors=[QualityGuardrail(seed._quality)])  # no max_processor_retries
    result = await h.generate(agent, "explain")
    assert len(h.bodies()) == 1
    assert result.tripwire is not None and result.tripwire.retry is True
    assert result.tripwire.metadata == {"qualityScore": 0.2}
    assert result.finish_reason == "other"
