"""Scores and remote scorers under auth: reading and computing scores needs an admin credential;
attaching a scorer id needs the ``processors`` scope, with the processors' identity rules."""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from tests.security_env import channel_for, md, secured  # noqa: F401
from treadle.v1 import score_service_pb2 as spb, score_service_pb2_grpc


async def test_scores_need_an_admin(secured: Any, channel_for: Any) -> None:  # noqa: F811
    running, _ = await secured()
    stub = score_service_pb2_grpc.ScoreServiceStub(channel_for(running))
    for call, request in ((stub.ListScores, spb.ListScoresRequest()), (stub.AggregateScores, spb.AggregateScoresRequest()),
                          (stub.ScoreRun, spb.ScoreRunRequest(run_id="run_x"))):
        with pytest.raises(grpc.aio.AioRpcError) as denied:
            await call(request, metadata=md("web-app"), timeout=10)
        assert denied.value.code() == grpc.StatusCode.PERMISSION_DENIED
        assert "needs an admin credential; 'web-app' is not admin" in (denied.value.details() or "")
    listed = await stub.ListScores(spb.ListScoresRequest(), metadata=md("ops"), timeout=10)
    assert list(listed.scores) == []
    with pytest.raises(grpc.aio.AioRpcError) as unauthenticated:
        await stub.ListScores(spb.ListScoresRequest(), timeout=10)
    assert unauthenticated.value.code() == grpc.StatusCode.UNAUTHENTICATED


async def _attach(channel: grpc.aio.Channel, who: str, *ids: str) -> spb.ScorerServiceAttachResponse:
    call = score_service_pb2_grpc.ScorerServiceStub(channel).Attach(iter([spb.ScorerServiceAttachRequest(
        handshake=spb.ScorerHandshake(protocol_versions=[1], scorers=[spb.ScorerDeclaration(id=i) for i in ids]))]),
        metadata=md(who))
    first = await call.read()
    call.cancel()
    assert isinstance(first, spb.ScorerServiceAttachResponse)
    return first


@pytest.mark.parametrize(("who", "ids", "says"), [
    ("guard-team", ["pii-guard", "other"], "its 'processors' scope does not include it"),
    ("rival", ["pii-guard"], "is named for credential 'guard-team'"),
    ("web-app", ["anything"], "its 'processors' scope does not include it"),
])
async def test_a_scorer_id_needs_the_processors_scope(
        secured: Any, channel_for: Any, who: str, ids: list[str], says: str) -> None:  # noqa: F811
    running, _ = await secured()
    with pytest.raises(grpc.aio.AioRpcError) as denied:
        await _attach(channel_for(running), who, *ids)
    assert denied.value.code() == grpc.StatusCode.PERMISSION_DENIED and says in (denied.value.details() or "")


async def test_the_owner_of_a_scorer_id_attaches_it(secured: Any, channel_for: Any) -> None:  # noqa: F811
    running, _ = await secured()
    welcome = await _attach(channel_for(running), "guard-team", "pii-guard")
    assert [d.id for d in welcome.welcome.scorers] == ["pii-guard"]
