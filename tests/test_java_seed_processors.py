"""The tests of the Mastra framework's processor examples, with the processors written in Java on
the Java SDK (``clients/java``) and running in a Java process.

``clients/java/src/test/java/dev/treadle/mastra`` holds ``LowercaseProcessor``, ``ContentFilter``,
``WordCounter``, ``QualityGuardrail``, ``RedactToolResult``, ``ScanToolResult``,
``ModerationCollector`` and ``ErrorRecoveryProcessor`` written as Java classes; ``ExamplesMain``
attaches the ones a test gives its agent. The test bodies are those of
``tests/test_seed_processors.py``, run through the same harness as the TypeScript set
(``tests/test_typescript_seed_processors.py``): each Java processor must give the same results
as its Python twin. As in TypeScript, ``QualityGuardrail`` reports its score as ``qualityScore``.
"""

from __future__ import annotations

import asyncio

from tests.java_build import java_build, java_command  # noqa: F401
from tests.remote.procs import Child
from tests.test_remote_seed_processors import harness_factory  # noqa: F401
from tests.test_typescript_seed_processors import TESTS, TypeScriptHarness, test_retry_without_budget_is_an_abort
import tests.test_seed_processors as seed

for _name in TESTS:
    globals()[_name] = getattr(seed, _name)
globals()["test_retry_without_budget_is_an_abort"] = test_retry_without_budget_is_an_abort


class JavaHarness(TypeScriptHarness):
    """Serves the test's processors from ``dev.treadle.mastra.ExamplesMain``; syncs as the TypeScript one."""

    async def _ensure_attached(self) -> None:
        if self.child is not None or not self.local:
            return
        proc = await asyncio.create_subprocess_exec(
            *java_command("dev.treadle.mastra.ExamplesMain", self.target, "--test", self._test),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        )
        self.child = Child(proc)
        await self.child.expect("ready")
        for pid in {p.id for p in self.local}:
            assert await self.app.processors.wait_attached(pid, 30)


HARNESS = JavaHarness
