"""``BatchParts``: merges small text deltas into fewer, larger chunks, for clients on slow links
that pay per message."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...core.chunks import Chunk, TextDelta
from ...core.args import ProcessOutputStreamArgs
from ._options import require


@dataclass(frozen=True)
class BatchPartsOptions:
    batch_size: int = 5
    """Deltas merged into one chunk."""
    max_chars: int | None = None
    """Send the batch early once it holds this many characters."""

    def __post_init__(self) -> None:
        require(self.batch_size >= 1, "option 'batchSize' must be >= 1")
        require(self.max_chars is None or self.max_chars >= 1, "option 'maxChars' must be >= 1")


class BatchParts:
    """Holds text deltas and sends them as one ``text-delta`` every ``batchSize`` deltas, and
    before any other chunk (so ``text-end`` always follows the whole text)."""

    name = "Batch parts"
    description = "Merges small text deltas into fewer, larger chunks."

    def __init__(self, *, batch_size: int = 5, max_chars: int | None = None, id: str = "batch-parts") -> None:
        self.id = id
        self.options = BatchPartsOptions(batch_size, max_chars)

    async def process_output_stream(self, args: ProcessOutputStreamArgs) -> Chunk | None:
        part, writer = args.part, args.writer
        if writer is None or not writer.can_write:
            return part  # nothing held can be released later here: pass through
        batch = args.state.setdefault("batch", {"id": "", "texts": []})
        if part.type == "text-delta":
            delta: TextDelta = part.payload
            if batch["texts"] and batch["id"] != delta.id:
                await writer.write(_merged(batch))
            batch["id"] = delta.id
            batch["texts"].append(delta.text)
            size = sum(map(len, batch["texts"]))
            o = self.options
            if len(batch["texts"]) >= o.batch_size or (o.max_chars is not None and size >= o.max_chars):
                return _merged(batch)
            return None
        if batch["texts"]:
            await writer.write(_merged(batch))
        return part


def _merged(batch: dict[str, Any]) -> Chunk:
    chunk = Chunk.of(TextDelta(batch["id"], "".join(batch["texts"])))
    batch["texts"] = []
    return chunk
