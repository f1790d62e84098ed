"""A remote scorer in Python, on the SDK's ``serve_scorers``.

    python -m tests.remote.scorer_main TARGET [fail-first]

Serves ``py-polite`` (1 when the answer says please or thanks) and ``py-flaky`` (fails its first
call with an error, then scores 0.5). Prints ``ready`` after the welcome; exits when stdin closes.
"""

from __future__ import annotations

import asyncio
import sys

from treadle_client import Score, ScorerRun, scorer, serve_scorers

calls = {"py-flaky": 0}


@scorer("py-polite", description="Polite answers score 1.")
async def polite(run: ScorerRun) -> Score:
    said = any(word in run.answer.lower() for word in ("please", "thanks", "thank you"))
    return Score(1.0 if said else 0.0, "polite" if said else "curt", {"thread": run.thread_id})


@scorer("py-flaky")
def flaky(run: ScorerRun) -> float:
    calls["py-flaky"] += 1
    if calls["py-flaky"] == 1:
        raise RuntimeError("first call fails")
    return 0.5


async def main() -> None:
    attachment = await serve_scorers([polite, flaky], sys.argv[1])
    await attachment.ready()
    print("ready", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    await attachment.close()


if __name__ == "__main__":
    asyncio.run(main())
