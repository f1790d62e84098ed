"""The scorers' filter language and the deterministic built-ins, on values (no I/O)."""

from __future__ import annotations

from typing import Any

import pytest

from treadle.core.errors import InvalidArgumentError
from treadle.core.messages import Message, MessageContent, TextPart, ToolInvocationPart
from treadle.scoring import builtins, rules, sampled
from treadle.scoring.builtins import ScoringRun
from treadle.scoring.service import filter_fields

RECORD = {"threadId": "t1", "resourceId": "u1",
          "requestContext": {"tier": "pro", "seats": 12, "tags": ["beta", "eu"], "user": {"country": "FR"}}}


def cond(field: str, operator: str, value: Any = None) -> dict[str, Any]:
    return {"field": field, "operator": operator, "value": value}


@pytest.mark.parametrize(("condition", "holds"), [
    (cond("requestContext.tier", "equals", "pro"), True),
    (cond("requestContext.tier", "not_equals", "pro"), False),
    (cond("requestContext.user.country", "in", ["FR", "DE"]), True),
    (cond("requestContext.user.country", "not_in", ["FR", "DE"]), False),
    (cond("requestContext.tags", "contains", "beta"), True),
    (cond("requestContext.tier", "contains", "r"), True),
    (cond("requestContext.tags", "not_contains", "us"), True),
    (cond("requestContext.seats", "greater_than", 10), True),
    (cond("requestContext.seats", "less_than_or_equal", 12.0), True),
    (cond("requestContext.seats", "greater_than", "10"), True),  # a number in a string is a number
    (cond("requestContext.seats", "greater_than", "ten"), False),  # incomparable: never matches
    (cond("requestContext.tags", "greater_than", 1), False),
    (cond("requestContext.missing", "exists"), False),
    (cond("requestContext.missing", "not_exists"), True),
    (cond("requestContext.missing", "equals", None), False),
    (cond("threadId", "equals", "t1"), True),
])
def test_each_operator(condition: dict[str, Any], holds: bool) -> None:
    assert rules.matches({"conditions": [condition]}, RECORD) is holds


def test_groups_combine_with_all_and_any_and_nest() -> None:
    yes, no = cond("threadId", "equals", "t1"), cond("threadId", "equals", "t2")
    assert rules.matches({"conditions": [yes, no]}, RECORD) is False
    assert rules.matches({"match": "any", "conditions": [yes, no]}, RECORD) is True
    assert rules.matches({"conditions": [yes], "groups": [{"match": "any", "conditions": [no, yes]}]}, RECORD)
    assert rules.matches(None, RECORD) and rules.matches({}, RECORD)


@pytest.mark.parametrize(("group", "says"), [
    ({"match": "some"}, "match must be 'all' or 'any'"),
    ({"conditions": [cond("requestContext.x", "between", 1)]}, "operator 'between' is unknown"),
    ({"conditions": [cond("requestContext.x", "in", 1)]}, "must be a list"),
    ({"conditions": [{"field": "requestContext.x", "operator": "equals"}]}, "value is required"),
    ({"conditions": [cond("requestContext.", "exists")]}, "is not a field"),
    ({"groups": [{"groups": [{"groups": [{}]}]}]}, "at most 3 deep"),
])
def test_malformed_groups_are_named(group: dict[str, Any], says: str) -> None:
    with pytest.raises(ValueError, match=".*") as e:
        rules.check_group(group, "filter", filter_fields)
    assert says in str(e.value)


def test_sampling_is_deterministic_and_nested() -> None:
    keys = [f"{i:032x}" for i in range(2000)]
    half = {k for k in keys if sampled(0.5, k)}
    tenth = {k for k in keys if sampled(0.1, k)}
    assert tenth <= half and 800 < len(half) < 1200 and 120 < len(tenth) < 280
    assert half == {k for k in keys if sampled(0.5, k)}
    assert all(sampled(None, k) and sampled(1.0, k) for k in keys[:10])


def run_with(answer: str, *tools: str, schema: dict[str, Any] | None = None) -> ScoringRun:
    parts: list[Any] = [ToolInvocationPart(f"c{i}", t, {}, "result", "ok") for i, t in enumerate(tools)]
    parts.append(TextPart(answer))
    return ScoringRun(run_id="r", agent_id="a", input_messages=[Message.user("q")],
                      output=[Message(id="m", role="assistant", content=MessageContent(parts=parts))],
                      structured_output=schema)


@pytest.mark.parametrize(("name", "options", "run", "score"), [
    ("exact-match", {"expected": "paris", "ignoreCase": True}, run_with(" Paris "), 1.0),
    ("exact-match", {"expected": "Paris", "trim": False}, run_with(" Paris"), 0.0),
    ("regex-match", {"pattern": r"\d{4}"}, run_with("in 1789"), 1.0),
    ("json-schema", {}, run_with('{"city": "Paris"}', schema={"type": "object", "required": ["city"]}), 1.0),
    ("json-schema", {}, run_with('{"town": "Paris"}', schema={"type": "object", "required": ["city"]}), 0.0),
    ("json-schema", {}, run_with('{"city": "Paris"}'), 0.0),  # no schema anywhere
    ("tool-called", {"tool": "weather"}, run_with("sunny", "weather"), 1.0),
    ("tool-not-called", {"tool": "weather"}, run_with("sunny", "weather"), 0.0),
    ("answer-length", {"max": 3}, run_with("four"), 0.0),
    ("pii", {"types": ["card"]}, run_with("mail a@b.example"), 0.0),
    ("pii", {}, run_with("call +33 1 23 45 67 89"), 1.0),
])
async def test_deterministic_builtins(name: str, options: dict[str, Any], run: ScoringRun, score: float) -> None:
    result = await builtins.run_builtin(name, options, run, None, None)  # type: ignore[arg-type]
    assert result.score == score, result.reason


@pytest.mark.parametrize(("name", "options", "says"), [
    ("exact-match", {"expect": "x"}, "unknown option 'expect'"),
    ("answer-length", {"min": 5, "max": 1}, "'max' must be >= 'min'"),
    ("pii", {"types": ["ssn"]}, "unknown type(s) ['ssn']"),
    ("json-schema", {"schema": {"type": 3}}, "not a valid JSON schema"),
    ("tool-called", {}, "option 'tool' is required"),
    ("llm-judge", {"model": "gpt", "instructions": "x"}, "must be 'provider/model'"),
])
def test_bad_options_are_named(name: str, options: dict[str, Any], says: str) -> None:
    with pytest.raises(ValueError) as e:
        builtins.parse(name, options)
    assert says in str(e.value)


def test_an_agents_scorers_round_trip_through_their_stored_form() -> None:
    from google.protobuf import json_format

    from treadle.api.convert import agent_from_dict, agent_to_proto

    data = {"id": "geo", "model": "openai/gpt-4o-mini", "scorers": [
        {"builtin": "exact-match", "options": {"expected": "Paris"}, "sampling": {"ratio": 0.25},
         "filter": {"match": "any", "conditions": [{"field": "requestContext.tier", "operator": "in", "value": ["pro"]}],
                    "groups": [{"conditions": [{"field": "threadId", "operator": "exists"}]}]}},
        {"id": "remote", "timeout": "2.500s", "failurePolicy": "FAILURE_POLICY_FAIL_OPEN"}]}
    agent = agent_from_dict(data, source="api")
    stored = json_format.MessageToDict(agent_to_proto(agent))
    again = agent_from_dict({k: v for k, v in stored.items() if k not in ("source", "createTime", "updateTime")},
                            source="api")
    assert again.scorers == agent.scorers
    first, second = again.scorers
    assert (first.scorer_id, first.ratio, first.options) == ("exact-match", 0.25, {"expected": "Paris"})
    assert rules.matches(first.filter, {"requestContext": {"tier": "pro"}})
    assert rules.matches(first.filter, {"threadId": "t1", "requestContext": {}})
    assert not rules.matches(first.filter, {"requestContext": {"tier": "free"}})
    assert (second.scorer_id, second.timeout, second.failure_policy) == ("remote", 2.5, "fail_open")


def test_a_filter_may_be_written_as_per_request_variants_write_their_rules() -> None:
    from treadle.api.convert import agent_from_dict

    agent = agent_from_dict({"id": "geo", "model": "openai/gpt-4o-mini", "scorers": [
        {"builtin": "answer-length", "filter": {"operator": "OR", "conditions": [
            {"field": "tier", "operator": "equals", "value": "pro"},
            {"operator": "AND", "conditions": [{"field": "threadId", "operator": "exists"},
                                               {"field": "region", "operator": "in", "value": ["eu"]}]}]}}]},
        source="api")
    [scorer] = agent.scorers
    assert rules.matches(scorer.filter, {"requestContext": {"tier": "pro"}})
    assert rules.matches(scorer.filter, {"threadId": "t1", "requestContext": {"region": "eu"}})
    assert not rules.matches(scorer.filter, {"requestContext": {"region": "eu"}})
    assert not rules.matches(scorer.filter, {"threadId": "t1", "requestContext": {"tier": "free"}})
    with pytest.raises(InvalidArgumentError, match="match must be 'all' or 'any', got 'XOR'"):
        agent_from_dict({"id": "geo", "model": "openai/gpt-4o-mini", "scorers": [
            {"builtin": "answer-length", "filter": {"operator": "XOR", "conditions": []}}]}, source="api")
