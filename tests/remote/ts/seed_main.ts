// The framework's TypeScript processor examples (./seed), attached with the SDK to a server, as
// the processors of one test of tests/test_seed_processors.py.
//
//     tsx tests/remote/ts/seed_main.ts TARGET --seed-test TEST
//
// Serves exactly the processors that test gives its agent (processors sharing an id are served
// as one, each hook going to its implementer). Prints `ready` after the welcome. On stdin, `sync`
// prints `sync {json}`: how many invocations each id handled, and, per processor in the test's
// order, the containers it recorded, named as the Python twin names them (see
// tests/remote/processor_main.py), so the test's assertions read what the TypeScript code did.
// Exits when stdin closes.
import { createInterface } from "node:readline";
import { attach, HOOKS, type Processor, type ProcessInputArgs, type ProcessOutputStreamArgs, type ProcessOutputResultArgs,
  type ProcessOutputStepArgs, type ProcessorViolation, type ProcessInputStepArgs } from "@treadle/client/processors";
import { ContentFilter } from "./seed/content_filter.js";
import { ErrorRecoveryProcessor } from "./seed/error_recovery.js";
import { LowercaseProcessor } from "./seed/lowercase.js";
import { ModerationCollector } from "./seed/moderation_collector.js";
import { QualityGuardrail } from "./seed/quality_guardrail.js";
import { RedactToolResult } from "./seed/redact_tool_result.js";
import { ScanToolResult } from "./seed/scan_tool_result.js";
import { WordCounter } from "./seed/word_counter.js";

/** The test's own helpers of the moderation example (they are not framework examples). */
class ModerationEmitter implements Processor {
  id = "moderation-emitter";

  async processOutputStep({ writer }: ProcessOutputStepArgs) {
    await writer.custom({ type: "data-moderation", data: { level: "warn", reason: "Possibly unsafe" } });
    await writer.custom({ type: "data-progress", data: { status: "Processing" }, transient: true });
  }
}

/** Adds the server's `lookup` tool to the first step, keeping the agent's tools. */
class AddToolProcessor implements Processor {
  id = "add-tool";

  async processInputStep({ stepNumber, tools }: ProcessInputStepArgs) {
    if (stepNumber === 0) return { tools: { ...tools, lookup: { name: "lookup" } } };
    return {};
  }
}

class Blind implements Processor {
  id = "blind";
  seen: string[] = [];

  async processOutputStream({ part }: ProcessOutputStreamArgs) {
    this.seen.push(part.type);
    return part;
  }
}

class Reporter implements Processor {
  id = "moderation-collector";
  states: unknown[][] = [];

  async processOutputResult({ state }: ProcessOutputResultArgs) {
    this.states.push([...(state.warnings ?? [])]);
  }
}

/** The content filter with the framework's `onViolation` side effect (the test's twin in Python). */
class AlertingContentFilter implements Processor {
  id = "alerting-filter";
  violations: Record<string, unknown>[] = [];

  constructor(private readonly blockedWords: string[]) {}

  async processInput({ messages, abort }: ProcessInputArgs) {
    for (const msg of messages) {
      const text = msg.content.parts.map((p) => (p.type === "text" ? p.text : "")).join(" ");
      for (const word of this.blockedWords) {
        if (text.includes(word)) abort("Blocked content detected in input", { metadata: { word } });
      }
    }
    return messages;
  }

  onViolation(v: ProcessorViolation) {
    this.violations.push({ processorId: v.processorId, message: v.message, detail: v.detail, hook: v.hook });
    throw new Error("the alert service is down"); // swallowed: the run is not affected
  }
}

/** `processInput` -> `process_input`: hook names as the Python twin records them. */
const snake = (s: unknown) => String(s).replace(/LLM|API/g, (m) => m[0] + m.slice(1).toLowerCase()).replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

interface Setup {
  /** The processors in the order the test gives them to its agent. */
  processors: Processor[];
  /** Per processor, what it recorded, by the Python twin's container name. */
  mirror(): Record<string, unknown>[];
}

const plain = (...processors: Processor[]): Setup => ({ processors, mirror: () => processors.map(() => ({})) });

const SETUPS: Record<string, () => Setup> = {
  test_lowercase_input_processor: () => plain(new LowercaseProcessor()),
  test_content_filter_blocks_input_before_the_model: () => plain(new ContentFilter(["secret"])),
  test_content_filter_stops_the_stream_at_the_blocked_chunk: () => plain(new ContentFilter(["secret"])),
  // WordCounter logs its totals ("Total words: N"); the test reads them from stdout.
  test_word_counter_keeps_state_across_chunks_and_not_across_calls: () => plain(new WordCounter()),
  test_quality_guardrail_retries_with_feedback_then_accepts: () => plain(new QualityGuardrail()),
  test_quality_guardrail_aborts_after_three_retries: () => plain(new QualityGuardrail()),
  test_retry_without_budget_is_an_abort: () => plain(new QualityGuardrail()),
  test_redact_tool_result_reaches_stream_and_next_step: () => plain(new RedactToolResult()),
  test_scan_tool_result_blocks_prompt_injection: () => plain(new ScanToolResult()),
  test_error_recovery_trims_and_retries_context_length: () => plain(new ErrorRecoveryProcessor()),
  test_input_step_adds_a_tool_that_the_model_sees_and_that_runs: () => plain(new AddToolProcessor()),
  test_on_violation_is_called_on_abort_and_its_errors_are_swallowed: () => {
    const filter = new AlertingContentFilter(["secret"]);
    return {
      processors: [filter],
      mirror: () => [{ "attr:violations": filter.violations.map((v) => ({ ...v, hook: snake(v.hook) })) }],
    };
  },
  test_moderation_collector_sees_data_parts: () => {
    const blind = new Blind();
    const reporter = new Reporter();
    return {
      processors: [new ModerationEmitter(), new ModerationCollector(), blind, reporter],
      mirror: () => [{}, {}, { "class:seen": blind.seen }, { "cell:process_output_result:states": reporter.states }],
    };
  },
};

type Hooked = Record<string, unknown>;

/** Processors sharing an id, served as one; every hook call is counted per id. */
function served(processors: Processor[], counts: Record<string, number>): object[] {
  const byId = new Map<string, Hooked>();
  for (const p of processors) {
    const merged = byId.get(p.id) ?? { id: p.id };
    byId.set(p.id, merged);
    for (const hook of Object.keys(HOOKS)) {
      const method = (p as unknown as Hooked)[hook];
      if (typeof method !== "function") continue;
      if (merged[hook]) throw new Error(`two processors with id ${p.id} implement ${hook}`);
      merged[hook] = (args: unknown) => {
        counts[p.id] = (counts[p.id] ?? 0) + 1;
        return method.call(p, args);
      };
      if (hook === "processOutputStream") merged.processDataParts = p.processDataParts === true;
    }
    if (typeof p.onViolation === "function") merged.onViolation = p.onViolation.bind(p);
  }
  return [...byId.values()];
}

async function main(): Promise<void> {
  const [target, flag, test] = process.argv.slice(2);
  const setup = flag === "--seed-test" && test ? SETUPS[test] : undefined;
  if (!target || !setup) {
    console.error(`usage: seed_main.ts TARGET --seed-test TEST (one of ${Object.keys(SETUPS).join(", ")})`);
    process.exit(2);
  }
  const { processors, mirror } = setup();
  const counts: Record<string, number> = {};
  const handle = attach({ target, processors: served(processors, counts), backoff: [50, 500] });
  await handle.ready(30_000);
  console.log("ready");
  for await (const line of createInterface({ input: process.stdin })) {
    if (line.trim() === "sync") console.log(`sync ${JSON.stringify({ invocations: counts, mirror: mirror() })}`);
  }
  await handle.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
