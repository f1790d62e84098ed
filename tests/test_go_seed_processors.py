"""The tests of the framework's processor examples (``tests/test_seed_processors.py``), with the
processors written in Go on the Go SDK (``clients/go/internal/seedprocessors``), in a Go process.

The test bodies are the very ones of ``tests/test_seed_processors.py``, run through the remote
harness of ``tests/test_remote_seed_processors.py`` as ``tests/test_typescript_seed_processors.py``
does for TypeScript; only the launcher differs: the Go binary (built once per session) serves
the processors a test gives its agent and answers ``sync`` with what they recorded, named as
their Python twins name it. Each Go processor must give the same results as its Python twin.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import tests.test_seed_processors as seed
from tests.remote.procs import Child
from tests.support.go import GoBuild
from tests.test_remote_seed_processors import RemoteHarness, harness_factory  # noqa: F401

TESTS = (
    "test_lowercase_input_processor",
    "test_content_filter_blocks_input_before_the_model",
    "test_content_filter_stops_the_stream_at_the_blocked_chunk",
    "test_on_violation_is_called_on_abort_and_its_errors_are_swallowed",
    "test_word_counter_keeps_state_across_chunks_and_not_across_calls",
    "test_quality_guardrail_retries_with_feedback_then_accepts",
    "test_quality_guardrail_aborts_after_three_retries",
    "test_retry_without_budget_is_an_abort",
    "test_redact_tool_result_reaches_stream_and_next_step",
    "test_scan_tool_result_blocks_prompt_injection",
    "test_error_recovery_trims_and_retries_context_length",
    "test_moderation_collector_sees_data_parts",
    "test_input_step_adds_a_tool_that_the_model_sees_and_that_runs",
)
for _name in TESTS:
    globals()[_name] = getattr(seed, _name)


class GoHarness(RemoteHarness):
    """Serves the test's processors from the Go binary instead of a Python process."""

    binary: Path | None = None

    async def _ensure_attached(self) -> None:
        if self.child is not None or not self.local:
            return
        assert self.binary is not None
        proc = await asyncio.create_subprocess_exec(
            str(self.binary), self.target, "--seed-test", self._test,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        )
        self.child = Child(proc)
        await self.child.expect("ready")
        for pid in {p.id for p in self.local}:
            assert await self.app.processors.wait_attached(pid, 30)


HARNESS = GoHarness


@pytest.fixture(autouse=True)
def _go_launcher(go_build: GoBuild) -> None:
    GoHarness.binary = go_build("seedprocessors")
