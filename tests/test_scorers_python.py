"""Scorers written in the server's Python code: an object given on a code agent, and one
registered with ``app.add_scorer`` that a config-style agent names by id."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from tests.conftest import StartApp
from treadle.agents import Agent, CallOptions, RunRequest, ScorerRef
from treadle.core.errors import InvalidArgumentError
from treadle.core.messages import Message
from treadle.scoring import ScoreResult, ScoringRun
from treadle.testing import ScriptedModel, ScriptedModels, text_response


class Keyword:
    def __init__(self, id: str, word: str) -> None:
        self.id, self.word = id, word
        self.seen: list[ScoringRun] = []

    async def score(self, run: ScoringRun) -> ScoreResult:
        self.seen.append(run)
        found = self.word in run.answer
        return ScoreResult(1.0 if found else 0.0, f"{self.word!r} {'found' if found else 'missing'}", {"n": len(run.answer)})


async def _scores(app: Any, count: int) -> list[Any]:
    deadline = time.monotonic() + 30
    while True:
        rows = [r for r in await app.scoring.store.statuses() if r.status == "succeeded"]
        if len(rows) >= count:
            return rows
        assert time.monotonic() < deadline, rows
        await asyncio.sleep(0.02)


async def test_python_scorers_score_runs_in_the_server(start_app: StartApp) -> None:
    model = ScriptedModel([text_response("Paris it is"), text_response("Lyon")])
    given, registered = Keyword("given", "Paris"), Keyword("registered", "Lyon")

    def setup(app: Any) -> None:
        app.loop.models = ScriptedModels(model)
        app.add_scorer(registered)
        app.add_agent(Agent(id="geo", model="openai/x", scorers=[ScorerRef(scorer=given), ScorerRef(id="registered")]))

    running = await start_app(setup=setup)
    app = running.app
    agent = app.registry.get_agent("geo")
    for prompt in ("one", "two"):
        await app.loop.generate(agent, RunRequest([Message.user(prompt)], CallOptions(request_context={"k": prompt})))
    rows = await _scores(app, 4)
    got = {(r.scorer_id, r.payload["inputMessages"][0]["content"]): (r.score, r.reason) for r in rows}
    assert {(k[0], v) for k, v in got.items()} == {
        ("given", (1.0, "'Paris' found")), ("given", (0.0, "'Paris' missing")),
        ("registered", (0.0, "'Lyon' missing")), ("registered", (1.0, "'Lyon' found"))}
    assert sorted(r.request_context["k"] for r in given.seen) == ["one", "two"]


async def test_a_code_agents_builtin_scorer_is_checked_when_added(start_app: StartApp) -> None:
    running = await start_app()
    with pytest.raises(InvalidArgumentError) as bad:
        running.app.add_agent(Agent(id="geo", model="openai/x", scorers=[ScorerRef(builtin="regex-match")]))
    assert "scorers[0]: option 'pattern' is required" in str(bad.value)


async def test_scoring_on_demand_answers_with_the_score_while_other_replicas_poll(start_app: StartApp) -> None:
    """Another replica's worker claims every due row after each of this replica's writes (the
    worst moment it could poll): the row scored on demand is never due, so the answer is its score."""
    given = Keyword("given", "Paris")

    def setup(app: Any) -> None:
        app.add_agent(Agent(id="geo", model="openai/x", scorers=[ScorerRef(scorer=given)]))

    app = (await start_app(setup=setup)).app
    store, write = app.scoring.store, app.scoring.store.db.write
    stolen: list[Any] = []

    async def write_then_poll(work: Any, *args: Any) -> Any:
        result = await write(work, *args)
        if work.__qualname__.startswith("ScoreStore.") and not work.__qualname__.startswith("ScoreStore.claim"):
            stolen.extend(await store.claim("another-replica", 60_000_000, 10))
        return result

    store.db.write = write_then_poll
    run = ScoringRun(run_id="run_1", agent_id="geo", input_messages=[Message.user("Capital of France?")],
                     output=[Message.assistant("Paris")])
    for _ in range(2):  # and again: the row scored before is taken over, not left to a worker
        [score] = await app.scoring.score_now(app.registry.get_agent("geo"), run, None, [])
        assert (score.run_id, score.score, score.reason, score.source) == ("run_1", 1.0, "'Paris' found", "test")
    assert stolen == [] and len(given.seen) == 2
