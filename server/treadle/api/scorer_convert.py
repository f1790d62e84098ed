"""``Agent.scorers`` proto <-> domain, checked as the agent is created or loaded."""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format

from ..agents import ScorerRef
from ..core.errors import InvalidArgumentError
from ..scoring.service import check_scorer
from ..v1 import agent_pb2
from ..wire.data import dict_to_struct, enum_to_pb, enum_to_py, opt_struct

_POLICY = agent_pb2.FailurePolicy.DESCRIPTOR


def scorers_from_proto(refs: Any, path: str) -> list[ScorerRef]:
    out: list[ScorerRef] = []
    for i, r in enumerate(refs):
        where = f"{path}[{i}]"
        if not r.id and not r.builtin:
            raise InvalidArgumentError(f"{where}.id is required (or builtin, to name a built-in scorer)")
        timeout = r.timeout.ToNanoseconds() / 1e9 if r.HasField("timeout") else None
        ratio = r.sampling.ratio if r.sampling.WhichOneof("kind") == "ratio" else None
        if ratio is not None and not 0 < ratio <= 1:
            raise InvalidArgumentError(f"{where}.sampling.ratio must be in (0, 1], got {ratio}")
        group = json_format.MessageToDict(r.filter) if r.HasField("filter") else None
        ref = ScorerRef(id=r.id, builtin=r.builtin, options=opt_struct(r, "options"), ratio=ratio,
                        filter=group or None, timeout=timeout,
                        failure_policy=enum_to_py(_POLICY, r.failure_policy) or "fail_closed")  # type: ignore[arg-type]
        check_scorer(ref, where)
        out.append(ref)
    return out


def scorers_to_proto(refs: list[ScorerRef], out: Any) -> None:
    for ref in refs:
        pb: agent_pb2.ScorerRef = out.add(id=ref.scorer_id if not ref.builtin else ref.id, builtin=ref.builtin)
        if ref.options is not None:
            dict_to_struct(ref.options, pb.options)
        if ref.ratio is not None:
            pb.sampling.ratio = ref.ratio
        if ref.filter:
            json_format.ParseDict(ref.filter, pb.filter)
        if ref.timeout is not None:
            pb.timeout.FromNanoseconds(int(ref.timeout * 1e9))
        if ref.failure_policy != "fail_closed":
            pb.failure_policy = enum_to_pb(_POLICY, ref.failure_policy)


def filter_config_shape(group: Any) -> Any:
    """A scorer filter written as per-request variants write their rules (``{operator: AND|OR,
    conditions: [condition | group]}``, fields naming request-context keys) in the scorers' own
    form (``{match: all|any, conditions, groups}``, fields ``threadId``, ``resourceId`` or
    ``requestContext.<path>``); any other value is returned as it is."""
    if not isinstance(group, dict) or "match" in group or "field" in group or "operator" not in group:
        return group
    op = str(group["operator"])
    leaves: list[Any] = []
    groups: list[Any] = []
    for condition in group.get("conditions") or ():
        if isinstance(condition, dict) and "field" not in condition and "operator" in condition:
            groups.append(filter_config_shape(condition))
        elif isinstance(condition, dict):
            field = str(condition.get("field") or "")
            if field not in ("threadId", "resourceId") and not field.startswith("requestContext."):
                condition = {**condition, "field": f"requestContext.{field}"}
            leaves.append(condition)
        else:
            leaves.append(condition)
    match = {"AND": "all", "OR": "any"}.get(op.upper(), op)
    return {"match": match, "conditions": leaves, "groups": groups}
