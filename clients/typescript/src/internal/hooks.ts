// One invocation, processor side: the wire's `Invocation` -> the hook's arguments (over a local
// MessageList rebuilt from the snapshot), and the hook's return value and edits -> the answer.
import { create, toJson } from "@bufbuild/protobuf";
import { AgentSchema, CallOptionsSchema, ModelSettingsSchema, ProcessorListSchema, ProcessorRefSchema, SystemMessagesSchema, StructuredOutputSchema, ToolChoiceMode, ToolNamesSchema, type ToolChoice as ProtoToolChoice } from "../gen/treadle/v1/agent_pb.js";
import { StepResultSchema, ToolCallSchema, UsageSchema, FinishReasonSchema } from "../gen/treadle/v1/chunk_pb.js";
import {
  type ChunkOutcome,
  ChunkOutcomeSchema,
  DelegationCompleteOutcomeSchema,
  DelegationStartOutcomeSchema,
  type Invocation,
  type InvocationResult,
  InvocationResultSchema,
  AgentOverridesSchema,
  type MessageListSnapshot,
  OutputResultSchema,
  type ReplaceOutcome,
  ReplaceOutcomeSchema,
  StepOverridesSchema,
} from "../gen/treadle/v1/processor_service_pb.js";
import { PromptMessageSchema, ToolDefinitionSchema } from "../gen/treadle/v1/prompt_pb.js";
import { APICallError, TripWire } from "../errors.js";
import { type MastraDBMessage, MessageList } from "../memory.js";
import type { ChunkType } from "../stream.js";
import {
  chunkFromProto,
  chunkToProto,
  listFromSnapshot,
  replacementOf,
  systemReplacementOf,
} from "./convert.js";
import { type Plain, enumToString, fromPlain, jsToValue, toPlain, valueToJs } from "./plain.js";

/** The hook methods, in the order the framework documents them, with their wire numbers. */
export const HOOKS = {
  processInput: 1,
  processInputStep: 2,
  processLLMRequest: 3,
  processLLMResponse: 4,
  processAPIError: 5,
  processOutputStream: 6,
  processOutputStep: 7,
  processToolResult: 8,
  processOutputResult: 9,
  onDelegationStart: 13,
  onDelegationComplete: 14,
  transformToolPayload: 16,
  resolveAgent: 15,
} as const;

export type HookName = keyof typeof HOOKS;

/** The `Invocation.args` branch of each hook (the wire's camelCase of `process_llm_request`...). */
export const ARGS_CASE: Record<HookName, Invocation["args"]["case"]> = {
  processInput: "processInput",
  processInputStep: "processInputStep",
  processLLMRequest: "processLlmRequest",
  processLLMResponse: "processLlmResponse",
  processAPIError: "processApiError",
  processOutputStream: "processOutputStream",
  processOutputStep: "processOutputStep",
  processToolResult: "processToolResult",
  processOutputResult: "processOutputResult",
  onDelegationStart: "onDelegationStart",
  onDelegationComplete: "onDelegationComplete",
  transformToolPayload: "transformToolPayload",
  resolveAgent: "resolveAgent",
};

export const HOOK_BY_NUMBER = new Map<number, HookName>(Object.entries(HOOKS).map(([k, v]) => [v, k as HookName]));

/** What every hook gets besides its own arguments. */
export type Common = Record<string, unknown>;

const steps = (xs: { $typeName: string }[]) => xs.map((s) => toPlain(StepResultSchema, s as never));

function snapshotOf(inv: Invocation): MessageListSnapshot | undefined {
  const v = inv.args.value as { messageList?: MessageListSnapshot } | undefined;
  return v?.messageList;
}

/** The arguments of a non-stream hook, and the local list it edits. */
export function buildArgs(inv: Invocation, common: Common): { args: Plain; list: MessageList } {
  const snap = snapshotOf(inv);
  const list = listFromSnapshot(snap, inv.threadId, inv.resourceId);
  const systemMessages = list.getSystemMessages();
  const base = { ...common, messageList: list, stepNumber: inv.stepNumber };
  const a = inv.args;
  switch (a.case) {
    case "processInput":
      return { args: { ...base, messages: list.get.input.db(), systemMessages }, list };
    case "processInputStep": {
      const x = a.value;
      const tools = Object.fromEntries(x.tools.map((t) => [t.name, toPlain(ToolDefinitionSchema, t)]));
      return {
        args: {
          ...base, messages: list.get.all.db(), systemMessages, steps: steps(x.steps), model: x.model,
          toolChoice: toolChoiceFromProto(x.toolChoice), activeTools: [...x.activeTools], tools,
          providerOptions: x.providerOptions ?? {}, modelSettings: x.modelSettings ? toPlain(ModelSettingsSchema, x.modelSettings) : {},
          structuredOutput: x.structuredOutput ? toPlain(StructuredOutputSchema, x.structuredOutput) : undefined,
        },
        list,
      };
    }
    case "processLlmRequest":
      return {
        args: { ...base, prompt: a.value.prompt.map((p) => toPlain(PromptMessageSchema, p)), model: a.value.model, steps: steps(a.value.steps) },
        list,
      };
    case "processLlmResponse":
      return {
        args: {
          ...base, chunks: a.value.chunks.map(chunkFromProto), model: a.value.model, steps: steps(a.value.steps), fromCache: a.value.fromCache,
        },
        list,
      };
    case "processApiError": {
      const e = a.value.error;
      const error = new APICallError({
        message: e?.message ?? "", statusCode: e?.statusCode || undefined, data: valueToJs(e?.body),
        isRetryable: e?.isRetryable ?? false, provider: e?.provider ?? "", modelId: e?.modelId ?? "",
      });
      return { args: { ...base, error, messages: list.get.all.db(), steps: steps(a.value.steps) }, list };
    }
    case "processOutputStep": {
      const x = a.value;
      return {
        args: {
          ...base, messages: list.get.all.db(), systemMessages, finishReason: enumToString(FinishReasonSchema, x.finishReason) ?? "unknown",
          toolCalls: x.toolCalls.map((t) => toPlain(ToolCallSchema, t)), text: x.text,
          usage: x.usage ? toPlain(UsageSchema, x.usage) : {}, steps: steps(x.steps), providerMetadata: x.providerMetadata,
        },
        list,
      };
    }
    case "processToolResult": {
      const x = a.value;
      return {
        args: {
          ...base, messages: list.get.all.db(), systemMessages, toolName: x.toolName, toolCallId: x.toolCallId,
          args: valueToJs(x.args), result: valueToJs(x.result), providerExecuted: x.providerExecuted || undefined, steps: steps(x.steps),
        },
        list,
      };
    }
    case "transformToolPayload": {
      const x = a.value;
      return {
        args: { ...common, target: x.target, phase: x.phase, toolName: x.toolName, toolCallId: x.toolCallId, payload: valueToJs(x.payload) },
        list,
      };
    }
    case "processOutputResult":
      return {
        args: { ...base, messages: list.get.response.db(), result: a.value.result ? toPlain(OutputResultSchema, a.value.result) : { text: "", steps: [] } },
        list,
      };
    case "onDelegationStart": {
      const x = a.value;
      return {
        args: {
          ...common, key: x.key, subAgentId: x.subAgentId, toolCallId: x.toolCallId, prompt: x.prompt,
          instructions: x.instructions || undefined, maxSteps: x.maxSteps || undefined, iteration: x.iteration,
        },
        list,
      };
    }
    case "onDelegationComplete": {
      const x = a.value;
      const ms = x.duration ? Number(x.duration.seconds) * 1000 + x.duration.nanos / 1e6 : 0;
      return {
        args: {
          ...common, key: x.key, subAgentId: x.subAgentId, toolCallId: x.toolCallId, prompt: x.prompt,
          result: valueToJs(x.result), success: x.success, error: x.error || undefined, duration: ms,
        },
        list,
      };
    }
    case "resolveAgent":
      // The agent as its variants resolved it for this call, in its proto JSON form.
      return { args: { ...common, agent: a.value.agent ? toJson(AgentSchema, a.value.agent) : {} }, list };
    default:
      throw new TypeError(`invocation ${inv.invocationId}: no arguments for hook ${inv.hook}`);
  }
}

function toolChoiceFromProto(t: ProtoToolChoice | undefined): unknown {
  const c = t?.choice;
  if (!c?.case) return undefined;
  if (c.case === "toolName") return { type: "tool", toolName: c.value };
  const names: Partial<Record<ToolChoiceMode, string>> = { [ToolChoiceMode.AUTO]: "auto", [ToolChoiceMode.NONE]: "none", [ToolChoiceMode.REQUIRED]: "required" };
  return names[c.value];
}

function toolChoiceToProto(t: unknown): ProtoToolChoice {
  const modes: Record<string, ToolChoiceMode> = { auto: ToolChoiceMode.AUTO, none: ToolChoiceMode.NONE, required: ToolChoiceMode.REQUIRED };
  if (typeof t === "string" && t in modes) return { $typeName: "treadle.v1.ToolChoice", choice: { case: "mode", value: modes[t]! } };
  const named = t as { type?: string; toolName?: string };
  if (named?.type === "tool" && typeof named.toolName === "string") {
    return { $typeName: "treadle.v1.ToolChoice", choice: { case: "toolName", value: named.toolName } };
  }
  throw new TypeError(`toolChoice must be "auto", "none", "required" or {type: "tool", toolName}, got ${JSON.stringify(t)}`);
}

// --- answers ----------------------------------------------------------------------------------

export function abortResult(invocationId: string, e: TripWire): InvocationResult {
  return create(InvocationResultSchema, {
    invocationId,
    outcome: { case: "abort", value: abortOutcome(e) },
  });
}

function abortOutcome(e: TripWire) {
  return { reason: e.message, retry: e.options.retry === true, metadata: jsToValue(e.options.metadata) };
}


export function errorResult(invocationId: string, e: unknown): InvocationResult {
  return create(InvocationResultSchema, { invocationId, outcome: { case: "error", value: { message: errorMessage(e) } } });
}

export function errorMessage(e: unknown): string {
  if (e instanceof Error) return e.message || e.name;
  return String(e);
}

const STEP_KEYS = new Set(["model", "toolChoice", "activeTools", "tools", "providerOptions", "modelSettings", "structuredOutput"]);

/** What a message hook returned, applied to the local list as the server's chain runner would. */
function applyMessagesReturned(returned: unknown, list: MessageList, shown: string[]): void {
  if (returned === undefined || returned === null || returned === list) return;
  if (returned instanceof MessageList) throw new TypeError("returned a different MessageList; edit and return the one it was given");
  let messages: unknown;
  let system: unknown;
  if (Array.isArray(returned)) messages = returned;
  else if (typeof returned === "object") {
    const r = returned as { messages?: unknown; systemMessages?: unknown; messageList?: unknown };
    if (r.messageList !== undefined && r.messageList !== list) throw new TypeError("returned a different MessageList; edit and return the one it was given");
    messages = r.messages;
    system = r.systemMessages;
  } else throw new TypeError(`returned an unsupported ${typeof returned}`);
  if (Array.isArray(messages) && messages.length > 0) {
    // an empty array means "no change", as in the framework's docs
    list.applyReturned(messages as MastraDBMessage[], shown);
  } else if (messages !== undefined && !Array.isArray(messages)) throw new TypeError("`messages` must be an array");
  if (system !== undefined) {
    if (!Array.isArray(system)) throw new TypeError("`systemMessages` must be an array");
    list.replaceAllSystemMessages(system);
  }
}

function shownIds(hook: HookName, snap: MessageListSnapshot | undefined): string[] {
  const view = hook === "processInput" ? 2 : hook === "processOutputResult" ? 3 : undefined; // MessageSource INPUT / RESPONSE
  return (snap?.messages ?? []).filter((m) => view === undefined || m.source === view).map((m) => m.message?.id ?? "");
}

/** The names of a `processInputStep` `tools` result: an object's keys (`{...tools, lookup}`) or an array of names or of tools with a `name`. */
function stepToolNames(tools: unknown): string[] {
  if (tools === null) return [];
  if (Array.isArray(tools)) {
    return tools.map((t, i) => {
      const name = typeof t === "string" ? t : (t as { name?: unknown } | null)?.name;
      if (typeof name !== "string" || !name) throw new TypeError(`processInputStep tools[${i}] has no name`);
      return name;
    });
  }
  if (typeof tools === "object") return Object.keys(tools as object);
  throw new TypeError("processInputStep tools must be an object of tools or an array of names");
}

/** The answer to a non-stream hook that returned `returned` (throws TypeError for a value the hook may not return). */
export function encodeResult(hook: HookName, inv: Invocation, returned: unknown, list: MessageList): InvocationResult {
  const out = create(InvocationResultSchema, { invocationId: inv.invocationId });
  if (hook === "onDelegationStart" || hook === "onDelegationComplete") return delegationResult(hook, out, returned);
  if (hook === "transformToolPayload") {
    // Nothing returned: the server shows the placeholder (it fails closed).
    const payload = returned === undefined || returned === null ? undefined : jsToValue(returned);
    out.outcome = { case: "transformed", value: { $typeName: "treadle.v1.TransformedPayload", payload } };
    return out;
  }
  if (hook === "resolveAgent") {
    out.outcome = returned === undefined || returned === null
      ? { case: "unchanged", value: { $typeName: "treadle.v1.UnchangedOutcome" } }
      : { case: "agentOverrides", value: agentOverrides(returned) };
    return out;
  }
  const replace: ReplaceOutcome = create(ReplaceOutcomeSchema);
  let changed = false;
  let retry = false;
  if (hook === "processInputStep" && returned && typeof returned === "object" && !Array.isArray(returned) && !(returned instanceof MessageList)) {
    const r = returned as Plain;
    if (Object.keys(r).some((k) => STEP_KEYS.has(k))) {
      const s = create(StepOverridesSchema);
      if (typeof r.model === "string") s.model = r.model;
      else if (r.model !== undefined) throw new TypeError("model must be a `provider/model` string");
      if (r.toolChoice !== undefined) s.toolChoice = toolChoiceToProto(r.toolChoice);
      if (r.activeTools !== undefined) s.activeTools = { $typeName: "treadle.v1.ActiveTools", names: [...(r.activeTools as string[])] };
      if (r.tools !== undefined) s.tools = { $typeName: "treadle.v1.StepTools", names: stepToolNames(r.tools) };
      if (r.providerOptions !== undefined) s.providerOptions = r.providerOptions as never;
      if (r.modelSettings !== undefined) s.modelSettings = fromPlain(ModelSettingsSchema, r.modelSettings as Plain) as never;
      if (r.structuredOutput !== undefined) s.structuredOutput = fromPlain(StructuredOutputSchema, r.structuredOutput as Plain) as never;
      replace.stepOverrides = s;
      changed = true;
    }
    returned = r.messages !== undefined || r.systemMessages !== undefined ? { messages: r.messages, systemMessages: r.systemMessages } : undefined;
  } else if (hook === "processLLMRequest") {
    const r = returned as { prompt?: Plain[]; response?: ChunkType[] } | undefined;
    if (r?.prompt !== undefined) {
      replace.prompt = { $typeName: "treadle.v1.PromptReplacement", messages: r.prompt.map((p) => fromPlain(PromptMessageSchema, p) as never) };
      changed = true;
    }
    if (r?.response !== undefined) {
      replace.cachedResponse = { $typeName: "treadle.v1.CachedResponse", chunks: r.response.map(chunkToProto) };
      changed = true;
    }
    returned = undefined;
  } else if (hook === "processAPIError") {
    retry = (returned as { retry?: boolean } | undefined)?.retry === true;
    returned = undefined;
  } else if (hook === "processLLMResponse") {
    returned = undefined;
  }
  const snap = snapshotOf(inv);
  applyMessagesReturned(returned, list, shownIds(hook, snap));
  const messages = snap ? replacementOf(list, snap) : undefined;
  if (retry) {
    out.outcome = { case: "retry", value: { $typeName: "treadle.v1.RetryOutcome", messages } };
    return out;
  }
  if (messages) {
    replace.messages = messages;
    changed = true;
  }
  const system = snap ? systemReplacementOf(list, snap) : undefined;
  if (system) {
    replace.systemMessages = { $typeName: "treadle.v1.SystemMessages", messages: system };
    changed = true;
  }
  out.outcome = changed ? { case: "replace", value: replace } : { case: "unchanged", value: { $typeName: "treadle.v1.UnchangedOutcome" } };
  return out;
}

/** A delegation hook's answer: `{proceed, rejectionReason, modified*}` or `{feedback, bail}`. */
function delegationResult(hook: "onDelegationStart" | "onDelegationComplete", out: InvocationResult, returned: unknown): InvocationResult {
  if (returned === undefined || returned === null) {
    out.outcome = { case: "unchanged", value: { $typeName: "treadle.v1.UnchangedOutcome" } };
    return out;
  }
  if (typeof returned !== "object") throw new TypeError(`${hook} must return an object or nothing`);
  const r = returned as Record<string, unknown>;
  if (hook === "onDelegationStart") {
    const value = create(DelegationStartOutcomeSchema, {
      reject: r.proceed === false, rejectionReason: typeof r.rejectionReason === "string" ? r.rejectionReason : "",
    });
    if (typeof r.modifiedPrompt === "string") value.modifiedPrompt = r.modifiedPrompt;
    if (typeof r.modifiedInstructions === "string") value.modifiedInstructions = r.modifiedInstructions;
    if (typeof r.modifiedMaxSteps === "number") value.modifiedMaxSteps = r.modifiedMaxSteps;
    out.outcome = { case: "delegationStart", value };
  } else {
    const value = create(DelegationCompleteOutcomeSchema, {
      feedback: typeof r.feedback === "string" ? r.feedback : "", bail: r.bail === true,
    });
    out.outcome = { case: "delegationComplete", value };
  }
  return out;
}

const OVERRIDES = new Set(["model", "instructions", "tools", "inputProcessors", "outputProcessors", "errorProcessors", "defaultOptions"]);

/** What `resolveAgent` returned: `{model?, instructions?, tools?, inputProcessors?, outputProcessors?, errorProcessors?, defaultOptions?}`. */
function agentOverrides(returned: unknown) {
  if (typeof returned !== "object" || Array.isArray(returned)) throw new TypeError("resolveAgent returns undefined or an object of overrides");
  const r = returned as Record<string, unknown>;
  const unknown = Object.keys(r).filter((k) => !OVERRIDES.has(k));
  if (unknown.length) throw new TypeError(`resolveAgent returned unknown overrides: ${unknown.join(", ")} (use ${[...OVERRIDES].join(", ")})`);
  const o = create(AgentOverridesSchema);
  if (r.model !== undefined) {
    if (typeof r.model !== "string") throw new TypeError("model must be a `provider/model` string");
    o.model = r.model;
  }
  if (r.instructions !== undefined) {
    const items = typeof r.instructions === "string" ? [r.instructions] : (r.instructions as unknown[]);
    o.instructions = create(SystemMessagesSchema, {
      messages: items.map((x) => ({ content: typeof x === "string" ? x : String((x as { content?: unknown }).content ?? "") })),
    });
  }
  if (r.tools !== undefined) o.tools = create(ToolNamesSchema, { names: stepToolNames(r.tools) });
  for (const lane of ["inputProcessors", "outputProcessors", "errorProcessors"] as const) {
    const v = r[lane];
    if (v === undefined) continue;
    if (!Array.isArray(v)) throw new TypeError(`${lane} must be an array of processor ids`);
    o[lane] = create(ProcessorListSchema, {
      processors: v.map((p) => create(ProcessorRefSchema, typeof p === "string" ? { id: p } : (p as { id: string }))),
    });
  }
  if (r.defaultOptions !== undefined) o.defaultOptions = fromPlain(CallOptionsSchema, r.defaultOptions as Plain) as never;
  return o;
}

// --- stream outcomes ----------------------------------------------------------------------------

/** What happens to one stream chunk. `replace` holds a list (`list`: the hook returned an
 * array): protocol version 1 carries exactly one chunk per outcome, version 2 zero or more (hold
 * and release). */
export type ChunkDecision =
  | { kind: "unchanged" }
  | { kind: "replace"; chunks: ChunkType[]; list?: boolean }
  | { kind: "drop" }
  | { kind: "abort"; error: TripWire }
  | { kind: "error"; message: string };

/** The decision for one chunk, from what the hook returned or threw. `before` is the part's
 * JSON before the hook ran: a part edited in place and returned is a replacement. */
export function decide(part: ChunkType, before: string, returned: unknown, thrown: unknown, threw: boolean): ChunkDecision {
  if (threw) {
    if (TripWire.isInstance(thrown)) return { kind: "abort", error: thrown };
    return { kind: "error", message: errorMessage(thrown) };
  }
  if (returned === null || returned === undefined) return { kind: "drop" };
  // A list replaces the chunk by its chunks (zero or more: hold and release); see chunkOutcome.
  if (Array.isArray(returned)) return { kind: "replace", chunks: returned as ChunkType[], list: true };
  if (returned === part && JSON.stringify(part) === before) return { kind: "unchanged" };
  return { kind: "replace", chunks: [returned as ChunkType] };
}

export function chunkOutcome(d: ChunkDecision, protocolVersion: number): ChunkOutcome {
  switch (d.kind) {
    case "unchanged":
      return create(ChunkOutcomeSchema, { outcome: { case: "unchanged", value: {} } });
    case "drop":
      return create(ChunkOutcomeSchema, { outcome: { case: "drop", value: {} } });
    case "abort":
      return create(ChunkOutcomeSchema, { outcome: { case: "abort", value: abortOutcome(d.error) } });
    case "error":
      return create(ChunkOutcomeSchema, { outcome: { case: "error", value: { message: d.message } } });
    case "replace":
      // Version 2 carries a list (zero or more chunks: hold and release); version 1 exactly one
      // chunk per outcome, so there no chunks is a drop and several an error.
      if (protocolVersion >= 2 && d.list) {
        return create(ChunkOutcomeSchema, { outcome: { case: "chunks", value: { chunks: d.chunks.map(chunkToProto) } } });
      }
      if (d.chunks.length === 0) return create(ChunkOutcomeSchema, { outcome: { case: "drop", value: {} } });
      if (d.chunks.length > 1) {
        throw new TypeError(`protocol version ${protocolVersion} replaces a chunk by one chunk, not ${d.chunks.length} (the server speaks only version 1)`);
      }
      return create(ChunkOutcomeSchema, { outcome: { case: "replace", value: chunkToProto(d.chunks[0]!) } });
  }
}

