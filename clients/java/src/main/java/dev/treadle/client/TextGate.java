package dev.treadle.client;

import dev.treadle.v1.Chunk;
import dev.treadle.v1.TextDeltaChunk;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToIntFunction;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Holds a text part's deltas only while a guarded span is still open (protocol version 2).
 *
 * <p>A streaming guardrail (PII redaction, a banned phrase) must see a whole span before it
 * decides, but a span may arrive split across deltas ("jo", "hn@exa", "mple.com"). The gate
 * buffers a part's text only from the point where a span that is not yet complete begins, calls
 * the guard on the complete text before that point and releases it at once: text that cannot be
 * part of a match is never held. Whatever is still held is released (guarded) before the part's
 * {@code text-end}, or before any other chunk of the run.
 *
 * <pre>{@code
 * class EmailRedactor implements Processor {
 *   static final Pattern EMAIL = Pattern.compile("[\\w.+-]+@[\\w-]+(\\.[\\w-]+)+");
 *   final TextGate gate = TextGate.pattern(EMAIL, s -> EMAIL.matcher(s).replaceAll("[email]"));
 *   public String id() { return "email-redactor"; }
 *   public List<Chunk> processOutputStream(ProcessOutputStreamArgs args) { return gate.process(args); }
 * }
 * }</pre>
 */
public final class TextGate {
  private static final Pattern SENTENCE_END = Pattern.compile("[.!?…](?=\\s)|\\n");

  /**
   * A guard that also gets the hook's arguments of the chunk whose processing releases the span:
   * the run's {@code state()}, its {@code writer()} (a custom chunk about what it redacted) and
   * {@code abort(...)} (throw it), as in the hook itself.
   */
  @FunctionalInterface
  public interface RunGuard {
    String apply(ProcessOutputStreamArgs args, String text);
  }

  private final RunGuard guard;
  private final ToIntFunction<String> holdFrom;
  /** (run id, text part id) -> the text held back. */
  private final Map<String, Map<String, String>> held = new LinkedHashMap<>();

  private TextGate(RunGuard guard, ToIntFunction<String> holdFrom) {
    this.guard = guard;
    this.holdFrom = holdFrom;
  }

  private static RunGuard textOnly(UnaryOperator<String> guard) {
    return (args, text) -> guard.apply(text);
  }

  /** Holds a trailing partial word. */
  public static TextGate word(UnaryOperator<String> guard) {
    return wordWithArgs(textOnly(guard));
  }

  /** {@link #word}, with a guard that gets the run's context. */
  public static TextGate wordWithArgs(RunGuard guard) {
    return new TextGate(guard, TextGate::holdWord);
  }

  /** Holds a trailing partial sentence. */
  public static TextGate sentence(UnaryOperator<String> guard) {
    return sentenceWithArgs(textOnly(guard));
  }

  /** {@link #sentence}, with a guard that gets the run's context. */
  public static TextGate sentenceWithArgs(RunGuard guard) {
    return new TextGate(guard, TextGate::holdSentence);
  }

  /** Holds from the earliest place where a match of {@code boundary} could still be in progress. */
  public static TextGate pattern(Pattern boundary, UnaryOperator<String> guard) {
    return patternWithArgs(boundary, textOnly(guard));
  }

  /** {@link #pattern}, with a guard that gets the run's context. */
  public static TextGate patternWithArgs(Pattern boundary, RunGuard guard) {
    return new TextGate(guard, text -> holdPattern(boundary, text));
  }

  /** The text held for {@code runId} right now. */
  public synchronized String held(String runId) {
    return String.join("", held.getOrDefault(runId, Map.of()).values());
  }

  /** The body of a {@code processOutputStream} hook: the chunks that take {@code args.part()}'s place. */
  public synchronized List<Chunk> process(ProcessOutputStreamArgs args) {
    Chunk part = args.part();
    if (part.hasTextDelta()) {
      return delta(args, part);
    }
    List<Chunk> out = flush(args, part.hasTextEnd() ? part.getTextEnd().getId() : null);
    out.add(part);
    return out;
  }

  private List<Chunk> delta(ProcessOutputStreamArgs args, Chunk part) {
    String runId = args.runId();
    TextDeltaChunk d = part.getTextDelta();
    Map<String, String> run = held.computeIfAbsent(runId, k -> new LinkedHashMap<>());
    String before = run.remove(d.getId());
    String text = (before == null ? "" : before) + d.getText();
    int cut = holdFrom.applyAsInt(text);
    if (cut < text.length()) {
      run.put(d.getId(), text.substring(cut));
    }
    if (run.isEmpty()) {
      held.remove(runId);
    }
    if (cut == 0) {
      return new ArrayList<>();
    }
    String out = guard.apply(args, text.substring(0, cut));
    if (before == null && cut == text.length() && out.equals(d.getText())) {
      return List.of(part); // nothing was held and nothing changed: pass the chunk itself
    }
    List<Chunk> list = new ArrayList<>();
    if (!out.isEmpty()) {
      list.add(delta(d.getId(), out));
    }
    return list;
  }

  private List<Chunk> flush(ProcessOutputStreamArgs args, String textId) {
    String runId = args.runId();
    List<Chunk> out = new ArrayList<>();
    Map<String, String> run = held.get(runId);
    if (run == null) {
      return out;
    }
    for (Iterator<Map.Entry<String, String>> it = run.entrySet().iterator(); it.hasNext();) {
      Map.Entry<String, String> e = it.next();
      if (textId != null && !textId.equals(e.getKey())) {
        continue;
      }
      it.remove();
      String text = guard.apply(args, e.getValue());
      if (!text.isEmpty()) {
        out.add(delta(e.getKey(), text));
      }
    }
    if (run.isEmpty()) {
      held.remove(runId);
    }
    return out;
  }

  private static Chunk delta(String id, String text) {
    return Chunk.newBuilder().setTextDelta(TextDeltaChunk.newBuilder().setId(id).setText(text)).build();
  }

  static int holdWord(String text) {
    if (text.isEmpty() || Character.isWhitespace(text.charAt(text.length() - 1))) {
      return text.length();
    }
    for (int i = text.length() - 1; i >= 0; i--) {
      if (Character.isWhitespace(text.charAt(i))) {
        return i + 1;
      }
    }
    return 0;
  }

  static int holdSentence(String text) {
    int last = 0;
    Matcher m = SENTENCE_END.matcher(text);
    while (m.find()) {
      last = m.end();
    }
    return last;
  }

  /** The earliest start where a match is partial, or complete but reaching the end (it might grow). */
  static int holdPattern(Pattern pattern, String text) {
    Matcher m = pattern.matcher(text);
    int end = text.length();
    for (int i = 0; i < end; i++) {
      m.region(i, end);
      boolean matched = m.lookingAt();
      if (m.hitEnd()) {
        return i;
      }
      if (matched && m.end() > i) {
        i = m.end() - 1;
      }
    }
    return end;
  }
}
