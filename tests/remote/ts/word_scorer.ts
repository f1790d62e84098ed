// A remote scorer in TypeScript, on the SDK's serveScorers.
//
//     tsx tests/remote/ts/word_scorer.ts TARGET      # TARGET: host:port of the server
//
// Serves scorer `ts-words`: 1 when the answer has at most 3 words, else 3 / words; the details
// say what it saw of the run. Prints `ready` after the welcome; exits when stdin closes.
import { serveScorers, createScorer } from "@treadle/client/scorers";

const [target] = process.argv.slice(2);
if (!target) {
  console.error("usage: word_scorer.ts TARGET");
  process.exit(2);
}

const words = createScorer({
  id: "ts-words",
  description: "Short answers score higher.",
  score(run) {
    const n = run.answer.split(/\s+/).filter(Boolean).length;
    return {
      score: n <= 3 ? 1 : 3 / n,
      reason: `${n} words`,
      details: { question: run.question, system: run.systemMessages.map((s) => s.content), tier: run.requestContext.tier ?? null },
    };
  },
});

const handle = serveScorers({ target, scorers: [words], log: (m) => console.error(m) });
await handle.ready();
console.log("ready");
process.stdin.resume();
process.stdin.on("end", async () => {
  await handle.close();
  process.exit(0);
});
