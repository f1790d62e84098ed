// TextGate: holds a text part's deltas only while a guarded span is still open (the Python
// SDK's tests, on the same inputs), and the partial matching of regular expressions under it.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { TextGate } from "../src/processors.js";
import type { ChunkType } from "../src/stream.js";
import { partialMatcher, rewrite } from "../src/internal/partial_regexp.js";

const EMAIL = /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g;

/** What the gate released for each delta, then for text-end. */
async function gateRun(gate: TextGate, texts: string[], runId = "r1"): Promise<string[][]> {
  const out: string[][] = [];
  for (const t of [...texts, undefined]) {
    const part: ChunkType = t === undefined
      ? { runId, from: "AGENT", type: "text-end", payload: { id: "t1" } }
      : { runId, from: "AGENT", type: "text-delta", payload: { id: "t1", text: t } };
    const result = await gate.process({ part, runId });
    const chunks = Array.isArray(result) ? result : [result];
    out.push(chunks.map((c) => (c.type === "text-delta" ? c.payload.text : "<end>")));
  }
  return out;
}

describe("TextGate", () => {
  test("releases at once what cannot be part of a match", async () => {
    const gate = new TextGate((s) => s, { boundary: EMAIL });
    // Spaces and punctuation close every possible address: nothing is held past them.
    assert.deepEqual(await gateRun(gate, ["Hello, ", "world! ", "Bye. "]), [["Hello, "], ["world! "], ["Bye. "], ["<end>"]]);
    // A word could still become an address: held until the next delta shows it does not.
    assert.deepEqual(await gateRun(gate, ["Hi th", "ere. "]), [["Hi "], ["there. "], ["<end>"]]);
  });

  test("redacts an address split across deltas, releasing the rest as it comes", async () => {
    const gate = new TextGate((s) => s.replace(EMAIL, "[email]"), { boundary: EMAIL });
    const released = await gateRun(gate, ["Write to ", "jane.d", "oe@exam", "ple.com", " or call."]);
    // "call." could still start an address: it waits for the text-end
    assert.deepEqual(released, [["Write to "], [], [], [], ["[email] or "], ["call.", "<end>"]]);
    assert.equal(gate.held("r1"), "");
    // what is still held when the part ends is released, guarded, before the text-end
    assert.deepEqual(await gateRun(gate, ["mail jo@ex", "ample.org"]), [["mail "], [], ["[email]", "<end>"]]);
  });

  test("word and sentence boundaries guard whole spans", async () => {
    const spans: string[] = [];
    const words = new TextGate((s) => {
      spans.push(s);
      return s.replace("darn", "****");
    }, { boundary: "word" });
    assert.deepEqual(await gateRun(words, ["oh da", "rn it"]), [["oh "], ["**** "], ["it", "<end>"]]);
    assert.deepEqual(spans, ["oh ", "darn ", "it"]);
    const sentences = new TextGate((s) => (s.includes("bad") ? s.toUpperCase() : s), { boundary: "sentence" });
    assert.deepEqual(await gateRun(sentences, ["A good one. A b", "ad one. Ok"]), [["A good one."], [" A BAD ONE."], [" Ok", "<end>"]]);
  });

  test("runs are held apart; another chunk of the run releases what is held; the guard may be async", async () => {
    const gate = new TextGate(async (s) => s.toUpperCase());
    await gate.process({ runId: "a", part: { runId: "a", from: "AGENT", type: "text-delta", payload: { id: "t", text: "x hel" } } });
    await gate.process({ runId: "b", part: { runId: "b", from: "AGENT", type: "text-delta", payload: { id: "t", text: "yo" } } });
    assert.deepEqual([gate.held("a"), gate.held("b")], ["hel", "yo"]);
    const finish: ChunkType = { runId: "a", from: "AGENT", type: "finish", payload: { reason: "stop" } };
    const out = await gate.process({ runId: "a", part: finish });
    assert.deepEqual(out, [{ runId: "a", from: "AGENT", type: "text-delta", payload: { id: "t", text: "HEL" } }, finish]);
    assert.equal(gate.held("b"), "yo");
    gate.endRun("b");
    assert.equal(gate.held("b"), "");
  });

  test("an unknown boundary is refused", () => {
    assert.throws(() => new TextGate((s) => s, { boundary: "line" as never }), /boundary must be/);
  });
});

describe("partial matching", () => {
  test("the end of the text may stand for any remaining atom", () => {
    assert.equal(rewrite("ab+c"), "(?:a|$)(?:b|$)+(?:c|$)");
    assert.equal(rewrite("(?:x|[a-z]{2})\\d"), "(?:(?:x|$)|(?:[a-z]|$){2})(?:\\d|$)");
    assert.equal(rewrite("a(?=b)"), "(?:a|$)(?:(?=b)|$)");
  });

  test("every prefix of an address is held from where the address starts, whatever the flags and groups", () => {
    const patterns = [EMAIL, /(?<user>[a-z.]+)@(?<host>[a-z]+(?:\.[a-z]+)+)/i, /\b[\w.]+@\w+\.(?:com|org)\b/u];
    for (const pattern of patterns) {
      const search = partialMatcher(pattern);
      for (let k = 1; k <= "Jane.Doe@example.com".length; k++) {
        const text = `Write to ${"Jane.Doe@example.com".slice(0, k)}`;
        const m = search(text, 0);
        assert.equal(m?.start, 9, `${pattern} on ${JSON.stringify(text)}`);
        assert.equal(m?.end, text.length);
      }
      assert.deepEqual(search("Write to Jane.Doe@example.com now", 0), { start: 9, end: 29, partial: false });
    }
  });

  test("complete, partial and no matches", () => {
    const search = partialMatcher(EMAIL);
    assert.deepEqual(search("mail jo@ex.com now", 0), { start: 5, end: 14, partial: false });
    assert.deepEqual(search("mail jo@e", 0), { start: 5, end: 9, partial: true });
    assert.deepEqual(search("mail jo@ex.com now", 14), { start: 15, end: 18, partial: true }); // "now" may become one
    assert.deepEqual(search("mail jo@ex.com!", 14), { start: 15, end: 15, partial: true }); // only the empty end
    assert.equal(partialMatcher(/abc/)("xyz", 0)?.start, 3);
    assert.equal(partialMatcher(new RegExp("[[a-z]--[aeiou]]+!", "v"))("xa bc", 0)?.start, 3);
  });
});
