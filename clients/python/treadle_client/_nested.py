"""Nested sub-agent output: a ``toolOutput`` chunk wraps a sub-agent's chunk, to any depth."""

from __future__ import annotations

from treadle.v1 import chunk_pb2


def nested(chunk: chunk_pb2.Chunk) -> tuple[list[str], chunk_pb2.Chunk]:
    """``(path, innermost chunk)`` of a ``toolOutput`` chunk: the tool names from the outermost
    sub-agent tool to the one whose run produced the chunk (``["agent-research", "agent-write"]``),
    and that run's chunk. Any other chunk is ``([], chunk)``: the run's own."""
    path = list(chunk.tool_output.path) if chunk.WhichOneof("chunk") == "tool_output" else []
    while chunk.WhichOneof("chunk") == "tool_output":
        chunk = chunk.tool_output.output
    return path, chunk
