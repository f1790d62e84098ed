// serveVoices checks what it is given before it connects anywhere (serving itself is tested
// against a real server by tests/test_voice_docs.py).
import assert from "node:assert/strict";
import { test } from "node:test";
import { serveVoices, type VoiceProvider } from "../src/voices.js";

const speak = () => new Uint8Array(2);

test("serveVoices refuses providers it could not serve", () => {
  const cases: [VoiceProvider[], RegExp][] = [
    [[], /give at least one voice provider/],
    [[{ id: "", speak }], /non-empty string `id`/],
    [[{ id: "mute" }], /voice provider mute needs a `speak` or a `listen` function/],
    [[{ id: "twice", speak }, { id: "twice", listen: () => "" }], /voice provider twice is given twice/],
  ];
  for (const [providers, message] of cases) {
    assert.throws(() => serveVoices({ target: "127.0.0.1:1", providers }), message);
  }
});
