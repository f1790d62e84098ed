package dev.treadle.client;

import dev.treadle.v1.Chunk;
import java.util.List;

/**
 * Arguments of {@code processOutputStream}: one chunk ({@link #part()}) and every chunk of the
 * run before it ({@link #streamParts()}), kept by the SDK.
 */
public final class ProcessOutputStreamArgs extends HookArgs {
  private final Chunk part;
  private final List<Chunk> streamParts;

  ProcessOutputStreamArgs(HookArgs call, Chunk part, List<Chunk> streamParts) {
    super(call);
    this.part = part;
    this.streamParts = streamParts;
  }

  /** The chunk this call decides about. */
  public Chunk part() {
    return part;
  }

  /** The run's chunks so far, this one included. */
  public List<Chunk> streamParts() {
    return streamParts;
  }
}
