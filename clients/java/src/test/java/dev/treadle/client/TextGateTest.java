package dev.treadle.client;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.treadle.v1.Chunk;
import dev.treadle.v1.Invocation;
import dev.treadle.v1.TextDeltaChunk;
import dev.treadle.v1.TextEndChunk;
import io.opentelemetry.context.Context;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class TextGateTest {
  static final Pattern EMAIL = Pattern.compile("[\\w.+-]+@[\\w-]+(\\.[\\w-]+)+");

  static ProcessOutputStreamArgs args(Chunk part) {
    HookArgs call = new HookArgs(Invocation.newBuilder().setRunId("r").build(), new HashMap<>(), new Writer(),
        () -> false, Context.root());
    return new ProcessOutputStreamArgs(call, part, List.of(part));
  }

  static Chunk delta(String text) {
    return Chunk.newBuilder().setTextDelta(TextDeltaChunk.newBuilder().setId("t").setText(text)).build();
  }

  static String texts(List<Chunk> chunks) {
    StringBuilder b = new StringBuilder();
    for (Chunk c : chunks) {
      b.append(c.hasTextDelta() ? c.getTextDelta().getText() : "|end");
    }
    return b.toString();
  }

  @Test
  void anEmailSplitAcrossDeltasIsRedactedWhole() {
    TextGate gate = TextGate.pattern(EMAIL, s -> EMAIL.matcher(s).replaceAll("[email]"));
    List<String> out = new ArrayList<>();
    for (String piece : List.of("write to jo", "hn@exa", "mple.com today")) {
      out.add(texts(gate.process(args(delta(piece)))));
    }
    out.add(texts(gate.process(args(Chunk.newBuilder().setTextEnd(TextEndChunk.newBuilder().setId("t")).build()))));
    // "today" could still start an address: it is held until the part ends.
    assertEquals(List.of("write to ", "", "[email] ", "today|end"), out);
    assertEquals("", gate.held("r"));
  }

  @Test
  void textThatCannotMatchPassesAtOnce() {
    TextGate gate = TextGate.word(s -> s.replace("darn", "d**n"));
    Chunk whole = delta("all fine ");
    assertEquals(List.of(whole), gate.process(args(whole))); // the chunk itself, unchanged
    assertEquals(List.of(), gate.process(args(delta("da")))); // a partial word is held
    assertEquals("da", gate.held("r"));
    assertEquals("d**n it ", texts(gate.process(args(delta("rn it ")))));
  }
}
