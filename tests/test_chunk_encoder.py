"""``ChunkEncoder``: chunks written as bytes are byte for byte what protobuf serializes."""

from __future__ import annotations

import pytest

from tests.test_convert import SAMPLES
from treadle.core import chunks as ch
from treadle.v1 import agent_service_pb2
from treadle.wire.data import ChunkEncoder, chunk_to_proto

DELTAS = [
    ch.Chunk("text-delta", ch.TextDelta(part, text), run_id=run, from_=origin)  # type: ignore[arg-type]
    for run in ("", "run_1", "r" * 200)
    for origin in ("AGENT", "USER", "SYSTEM", "")
    for part in ("", "text_1", "é" * 100)
    for text in ("", "a", "héllo 👋", "x" * 60, "x" * 127, "x" * 128, "y" * 20000)
]
PLAIN = [  # what a run without provider metadata or tool calls sends: written without protobuf
    ch.TextStart("t1"), ch.TextEnd("t1"), ch.ReasoningEnd("r1", "sig"),
    ch.StepFinish("stop", ch.Usage(10, 20, 30), "Hello", [], "end_turn", "m1", 1, True),
    ch.Finish("tool-calls", ch.Usage(1, 2, 3, 4, 5), [ch.SkippedProcessor("p", "processOutputStream", "timeout", 3)]),
    ch.ErrorPayload("bad", "APICallError"), ch.Tripwire("no"), ch.Start(), ch.StepStart(),
]
OTHERS = [ch.Chunk(t, p, run_id="run_1") for t, p in SAMPLES.items()] + [
    ch.Chunk.of(p, run_id="run_2") for p in PLAIN] + [
    ch.Chunk("text-delta", ch.TextDelta("t", "x"), run_id="run_1", metadata={"k": [1, "two"]}),
    ch.Chunk.custom("data-progress", {"done": 3}, id="p1"),
]


def test_every_chunk_encodes_as_protobuf_serializes_it() -> None:
    encoder = ChunkEncoder()
    for chunk in DELTAS + OTHERS + DELTAS[::-1]:  # the run and part ids it remembers change
        assert encoder.encode(chunk) == chunk_to_proto(chunk).SerializeToString(), chunk


@pytest.mark.parametrize("chunks", [DELTAS, OTHERS, DELTAS + OTHERS], ids=["deltas", "others", "both"])
def test_appended_chunks_join_into_the_serialized_response(chunks: list[ch.Chunk]) -> None:
    encoder, pieces, size = ChunkEncoder(), [], 0
    for chunk in chunks:
        size += encoder.add(chunk, pieces)
    joined = b"".join(pieces)
    expected = agent_service_pb2.StreamResponse(chunks=[chunk_to_proto(c) for c in chunks])
    assert agent_service_pb2.StreamResponse.FromString(joined) == expected and size == len(joined)
    if chunks is DELTAS:  # no maps, whose order a copy may change: the very bytes
        assert joined == expected.SerializeToString()
