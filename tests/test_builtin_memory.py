"""Built-ins with memory, on both engines: what they leave in the thread."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.harness import Harness, harness_factory  # noqa: F401
from tests.support import Turn
from tests.support.databases import Database
from treadle.agents import MemoryOptions
from treadle.memory import PageRequest, SqlStore, open_store
from treadle.core.messages import Message
from treadle.processors.builtin import PII

U1T1 = {"memory": MemoryOptions("u1", "t1")}
PREFILL_400 = "This model does not support assistant message prefill. The conversation must end with a user message."


@pytest.fixture
async def store(database: Database) -> AsyncIterator[SqlStore]:
    s = await open_store(database.url)
    yield s
    await s.close()


async def stored(store: SqlStore) -> list[tuple[str, str]]:
    return [(m.role, m.text) for m in (await store.list_messages("t1", PageRequest(1000, 1 << 30))).items]


async def test_the_prefill_reminder_is_kept_as_a_signal_not_as_the_users_words(harness_factory, store) -> None:
    h: Harness = harness_factory([Turn.fail(400, PREFILL_400), Turn.say("recovered")], "anthropic")
    h.loop.memory = store
    result = await h.generate(h.agent(), [Message.user("Write a haiku"), Message.assistant("Autumn")], **U1T1)
    assert result.text == "recovered"
    assert await stored(store) == [
        ("user", "Write a haiku"), ("assistant", "Autumn"),
        ("signal", "<system-reminder>continue</system-reminder>"), ("assistant", "recovered"),
    ]


async def test_pii_redacted_input_and_output_are_what_the_thread_keeps(harness_factory, store) -> None:
    h: Harness = harness_factory([Turn.say(["Noted, I will write to bo", "b@example.org today."])])
    h.loop.memory = store
    await h.generate(h.agent(input_processors=[PII()], output_processors=[PII()]),
                     "my address is bob@example.org", **U1T1)
    assert await stored(store) == [
        ("user", "my address is [EMAIL]"), ("assistant", "Noted, I will write to [EMAIL] today."),
    ]
