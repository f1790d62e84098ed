"""Proto <-> domain for an agent's notification delivery policy (``Agent.notifications``)."""

from __future__ import annotations

from .. import agents as a
from ..core.errors import InvalidArgumentError
from ..v1 import notification_pb2
from ..wire.data import enum_to_pb, enum_to_py

_NACTION = notification_pb2.NotificationAction.DESCRIPTOR


def _rule_from_proto(pb: notification_pb2.NotificationRule, path: str) -> a.NotificationRule:
    action = enum_to_py(_NACTION, pb.action)
    if action is None:
        raise InvalidArgumentError(f"{path}.action is required")
    delay = pb.delay.ToTimedelta().total_seconds() if pb.HasField("delay") else 0.0
    if delay < 0:
        raise InvalidArgumentError(f"{path}.delay must not be negative")
    return a.NotificationRule(action, delay)  # type: ignore[arg-type]


def policy_from_proto(pb: notification_pb2.NotificationSettings, path: str = "agent.notifications") -> a.NotificationPolicy | None:
    if not pb.HasField("delivery_policy"):
        return None
    p, where = pb.delivery_policy, f"{path}.delivery_policy"
    for name in p.priorities:
        if name not in ("low", "medium", "high", "urgent"):
            raise InvalidArgumentError(f"{where}.priorities: {name!r} is not low, medium, high or urgent")
    return a.NotificationPolicy(
        default=_rule_from_proto(p.default, f"{where}.default") if p.HasField("default") else None,
        priorities={k: _rule_from_proto(v, f"{where}.priorities[{k}]") for k, v in p.priorities.items()},
        sources={k: _rule_from_proto(v, f"{where}.sources[{k}]") for k, v in p.sources.items()},
        decide=p.decide or None,
    )


def _rule_to_proto(rule: a.NotificationRule, out: notification_pb2.NotificationRule) -> None:
    out.action = enum_to_pb(_NACTION, rule.action)
    if rule.delay:
        out.delay.FromNanoseconds(int(rule.delay * 1e9))


def policy_to_proto(policy: a.NotificationPolicy | None, out: notification_pb2.NotificationSettings) -> None:
    if policy is None:
        return
    p = out.delivery_policy
    p.SetInParent()
    if policy.default is not None:
        _rule_to_proto(policy.default, p.default)
    for k, v in policy.priorities.items():
        _rule_to_proto(v, p.priorities[k])
    for k, v in policy.sources.items():
        _rule_to_proto(v, p.sources[k])
    if isinstance(policy.decide, str):
        p.decide = policy.decide
    elif policy.decide is not None:
        p.decide = getattr(policy.decide, "__name__", "")
