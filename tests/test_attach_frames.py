"""Batches on the processor stream (protocol version 3): what the writer sends for what is queued."""

from __future__ import annotations

from treadle.v1 import processor_service_pb2 as pb
from treadle.wire.frames import INVOCATIONS, MAX_BATCH, RESULTS


def _inv(i: int) -> bytes:
    return pb.Invocation(invocation_id=str(i), run_id="r").SerializeToString()


def _decoded(frames: list[object]) -> list[list[str] | str]:
    out: list[list[str] | str] = []
    for f in frames:
        if isinstance(f, bytes):
            m = pb.ProcessorServiceAttachResponse.FromString(f)
            kind = m.WhichOneof("message")
            invs = [m.invocation] if kind == "invocation" else list(m.invocations.invocations)
            out.append([i.invocation_id for i in invs])
        else:
            out.append(f.WhichOneof("message"))  # type: ignore[attr-defined]
    return out


def test_consecutive_invocations_go_in_one_message_in_order_and_others_keep_their_place() -> None:
    cancel = pb.ProcessorServiceAttachResponse(cancel={"invocation_id": "1"})
    items = [_inv(1), _inv(2), cancel, _inv(3), None]
    frames = list(INVOCATIONS.frames(items, True, 1 << 20))
    assert frames[-1] is None
    assert _decoded(frames[:-1]) == [["1", "2"], "cancel", ["3"]]
    # Before version 3: one message per invocation, the same order.
    assert _decoded(list(INVOCATIONS.frames(items[:-1], False, 1 << 20))) == [["1"], ["2"], "cancel", ["3"]]


def test_a_batch_stays_within_its_count_and_size() -> None:
    many = [_inv(i) for i in range(MAX_BATCH + 3)]
    assert [len(b) for b in _decoded(list(INVOCATIONS.frames(many, True, 1 << 30)))] == [MAX_BATCH, 3]
    size = len(many[0]) + 8
    assert [len(b) for b in _decoded(list(INVOCATIONS.frames(many[:10], True, 4 * size)))] == [4, 4, 2]


def test_answers_are_framed_as_result_or_results() -> None:
    answers = [pb.InvocationResult(invocation_id=str(i), unchanged={}).SerializeToString() for i in range(3)]
    [one] = RESULTS.frames(answers, True, 1 << 20)
    assert [r.invocation_id for r in pb.ProcessorServiceAttachRequest.FromString(one).results.results] == ["0", "1", "2"]
    singles = [pb.ProcessorServiceAttachRequest.FromString(f).result.invocation_id for f in RESULTS.frames(answers, False, 1 << 20)]
    assert singles == ["0", "1", "2"]
