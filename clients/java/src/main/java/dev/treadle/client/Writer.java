package dev.treadle.client;

import dev.treadle.v1.DataChunk;
import java.util.ArrayList;
import java.util.List;

/** Emits custom {@code data-*} chunks (the Mastra {@code writer.custom(...)}); they travel in the hook's answer. */
public final class Writer {
  private final List<DataChunk> chunks = new ArrayList<>();

  /** Emits a chunk named {@code name} (it must start with {@code data-}) with a JSON-compatible payload. */
  public void custom(String name, Object data) {
    custom(name, data, false, "");
  }

  /**
   * Emits a chunk; a {@code transient} one is streamed only, never stored; a later chunk with the
   * same name and a non-empty {@code id} replaces it.
   */
  public synchronized void custom(String name, Object data, boolean transientChunk, String id) {
    if (name == null || !name.startsWith("data-")) {
      throw new IllegalArgumentException("a custom chunk's name must start with \"data-\", got " + name);
    }
    chunks.add(DataChunk.newBuilder().setName(name).setData(Json.toValue(data))
        .setTransient(transientChunk).setId(id == null ? "" : id).build());
  }

  synchronized List<DataChunk> written() {
    return List.copyOf(chunks);
  }
}
