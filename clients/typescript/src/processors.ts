// `@treadle/client/processors`: the Mastra Processor interface, served remotely.
//
// A processor is an object with an `id` and the hook methods it implements; `attach()` declares
// exactly those hooks to the server and runs them when the server invokes them. Each hook gets
// the same arguments as in the framework: `abort()` throws, `state` persists across the hooks of
// one call, `writer.custom()` emits a `data-*` chunk.
import type { AbortOptions } from "./errors.js";
import type { CoreSystemMessage, MastraDBMessage, MessageList } from "./memory.js";
import type { HookName } from "./internal/hooks.js";
import type { ChunkType, FinishReason, ToolCall, Usage } from "./stream.js";

export { attach, type AttachOptions, type ProcessorHandle } from "./internal/processor_host.js";
export { HOOKS, type HookName } from "./internal/hooks.js";
export { AttachError } from "./internal/link.js";
export { TripWire } from "./errors.js";
export { MessageList } from "./memory.js";
export { RequestContext } from "./internal/request_context.js";
import type { RequestContext } from "./internal/request_context.js";

/** Throws a `TripWire`: the run stops with a `tripwire` chunk (or, with `retry`, redoes the step). */
export type AbortFn<TTripwireMetadata = unknown> = (reason?: string, options?: AbortOptions<TTripwireMetadata>) => never;

/** The processor's span: a child of the server span of the hook. */
export interface TracingContext {
  currentSpan?: unknown;
}

/** Emits custom `data-*` chunks; they reach the stream before the hook's outcome is applied. */
export interface ProcessorStreamWriter {
  custom(chunk: { type: `data-${string}` | string; data?: unknown; transient?: boolean; id?: string; [k: string]: unknown }): Promise<void>;
}

/** Results of a completed step. */
export interface StepResult {
  stepNumber?: number;
  text?: string;
  reasoningText?: string;
  toolCalls?: ToolCall[];
  toolResults?: { toolCallId: string; toolName: string; args?: unknown; result?: unknown; isError?: boolean }[];
  finishReason?: FinishReason;
  usage?: Usage;
  tripwire?: { reason: string; retry?: boolean; metadata?: unknown; processorId?: string };
  modelId?: string;
}

interface ProcessorArgsBase<TTripwireMetadata = unknown> {
  abort: AbortFn<TTripwireMetadata>;
  /** Retries processors have triggered in this call so far. */
  retryCount: number;
  /** This processor's state for this call, shared by all its hooks. */
  state: Record<string, any>;
  requestContext: RequestContext;
  tracingContext: TracingContext;
  writer: ProcessorStreamWriter;
  /** Aborted when the server stops waiting (deadline passed, run cancelled, stream gone). */
  abortSignal: AbortSignal;
  /** Which run this is. */
  runId: string;
  agentId: string;
  threadId?: string;
  resourceId?: string;
  processorIndex: number;
}

interface MessagesArgs {
  messages: MastraDBMessage[];
  messageList: MessageList;
}

export interface ProcessInputArgs<TTripwireMetadata = unknown> extends ProcessorArgsBase<TTripwireMetadata>, MessagesArgs {
  systemMessages: CoreSystemMessage[];
}

export type ToolChoice = "auto" | "none" | "required" | { type: "tool"; toolName: string };

export interface ToolDefinition {
  name: string;
  description?: string;
  inputSchema?: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
}

export interface ProcessInputStepArgs<TTripwireMetadata = unknown> extends ProcessorArgsBase<TTripwireMetadata>, MessagesArgs {
  stepNumber: number;
  steps: StepResult[];
  systemMessages: CoreSystemMessage[];
  /** `provider/model`. */
  model: string;
  toolChoice?: ToolChoice;
  activeTools: string[];
  tools: Record<string, ToolDefinition>;
  providerOptions: Record<string, any>;
  modelSettings: Record<string, any>;
  structuredOutput?: Record<string, any>;
}

export interface ProcessInputStepResult {
  model?: string;
  toolChoice?: ToolChoice;
  activeTools?: string[];
  /**
   * The step's tools become exactly these (`{...tools, lookup: ...}` adds one). Only the names
   * travel: each must be one of the step's tools, a tool registered on the server, or a tool an
   * attached tool service serves (`serveTools`).
   */
  tools?: Record<string, unknown> | (string | { name: string })[];
  messages?: MastraDBMessage[];
  messageList?: MessageList;
  systemMessages?: (CoreSystemMessage | string)[];
  providerOptions?: Record<string, any>;
  modelSettings?: Record<string, any>;
  structuredOutput?: Record<string, any>;
}

/** One message of the provider prompt (`LanguageModelV2Prompt` item). */
export type PromptMessage = Record<string, any>;

export interface ProcessLLMRequestArgs<TTripwireMetadata = unknown> extends ProcessorArgsBase<TTripwireMetadata> {
  prompt: PromptMessage[];
  model: string;
  stepNumber: number;
  steps: StepResult[];
}

export type ProcessLLMRequestResult = { prompt?: PromptMessage[]; response?: ChunkType[] } | undefined | void;

export interface ProcessLLMResponseArgs<TTripwireMetadata = unknown> extends ProcessorArgsBase<TTripwireMetadata> {
  chunks: ChunkType[];
  model: string;
  stepNumber: number;
  steps: StepResult[];
  fromCache: boolean;
}

export type ProcessLLMResponseResult = undefined | void;

export interface ProcessAPIErrorArgs<TTripwireMetadata = unknown> extends ProcessorArgsBase<TTripwireMetadata>, MessagesArgs {
  /** An `APICallError` (`APICallError.isInstance(error)`). */
  error: unknown;
  stepNumber: number;
  steps: StepResult[];
}

export interface ProcessAPIErrorResult {
  retry?: boolean;
}

export interface ProcessOutputStreamArgs<TTripwireMetadata = unknown> extends ProcessorArgsBase<TTripwireMetadata> {
  part: ChunkType;
  /** Every chunk of the stream so far, this one included. */
  streamParts: ChunkType[];
  messageList: MessageList;
}

export interface ProcessOutputStepArgs<TTripwireMetadata = unknown> extends ProcessorArgsBase<TTripwireMetadata>, MessagesArgs {
  stepNumber: number;
  finishReason: FinishReason;
  toolCalls: ToolCall[];
  text: string;
  usage: Usage;
  systemMessages: CoreSystemMessage[];
  steps: StepResult[];
  providerMetadata?: Record<string, any>;
}

export interface ProcessToolResultArgs<TTripwireMetadata = unknown> extends ProcessorArgsBase<TTripwireMetadata>, MessagesArgs {
  stepNumber: number;
  toolName: string;
  toolCallId: string;
  args: unknown;
  result: unknown;
  providerExecuted?: boolean;
  systemMessages: CoreSystemMessage[];
  steps: StepResult[];
}

/**
 * `transformToolPayload` (the framework's `hooks.transform`): return `payload` as `target` shows it
 * (`display`: streams and results; `transcript`: the history clients read) in `phase` (`input`,
 * `output` or `error`). Returning `undefined` or `null` shows `{message: "Tool <phase> payload
 * unavailable"}`. Runs only for agents that list the processor in `toolPayloadProcessors`.
 */
export interface TransformToolPayloadArgs<TTripwireMetadata = unknown> extends ProcessorArgsBase<TTripwireMetadata> {
  target: "display" | "transcript";
  phase: "input" | "output" | "error";
  toolName: string;
  toolCallId: string;
  payload: unknown;
}

export interface OutputResult {
  text: string;
  usage?: Usage;
  finishReason?: FinishReason;
  steps: StepResult[];
}

export interface ProcessOutputResultArgs<TTripwireMetadata = unknown> extends ProcessorArgsBase<TTripwireMetadata>, MessagesArgs {
  result: OutputResult;
}

/** `resolveAgent`: the agent as its variants resolved it for this call, in its proto JSON form
 * (`agent.model`, `agent.instructions`, `agent.tools`, ...); the request context is `requestContext`. */
export interface ResolveAgentArgs<TTripwireMetadata = unknown> extends ProcessorArgsBase<TTripwireMetadata> {
  agent: Record<string, any>;
}

/** What `resolveAgent` may override for one call; a list replaces the resolved list. */
export interface AgentOverrides {
  model?: string;
  instructions?: string | string[];
  tools?: string[];
  inputProcessors?: (string | { id: string })[];
  outputProcessors?: (string | { id: string })[];
  errorProcessors?: (string | { id: string })[];
  /** Call options in their proto JSON form, merged over the resolved defaults. */
  defaultOptions?: Record<string, unknown>;
}

export type MessagesResult =
  | MastraDBMessage[]
  | MessageList
  | { messages?: MastraDBMessage[]; systemMessages?: (CoreSystemMessage | string)[] };

export type ProcessInputResult = MessagesResult;
export type ProcessorMessageResult = Promise<MessagesResult | void | undefined> | MessagesResult | void | undefined;

type Awaitable<T> = T | Promise<T>;

/** `onDelegationStart`: the parent's model called the sub-agent tool `agent-<key>`. */
export interface OnDelegationStartArgs<TTripwireMetadata = unknown> extends ProcessorArgsBase<TTripwireMetadata> {
  key: string;
  subAgentId: string;
  toolCallId: string;
  prompt: string;
  instructions?: string;
  /** The step cap the delegation will use (unset: the sub-agent's own default). */
  maxSteps?: number;
  /** The parent's current step. */
  iteration: number;
}

export interface DelegationStartResult {
  /** `false` rejects: the tool returns `[Delegation Rejected] <rejectionReason>`. */
  proceed?: boolean;
  rejectionReason?: string;
  modifiedPrompt?: string;
  modifiedInstructions?: string;
  modifiedMaxSteps?: number;
}

/** `onDelegationComplete`: the sub-agent tool ended. */
export interface OnDelegationCompleteArgs<TTripwireMetadata = unknown> extends ProcessorArgsBase<TTripwireMetadata> {
  key: string;
  subAgentId: string;
  toolCallId: string;
  prompt: string;
  /** The tool's output (`{text, subAgentThreadId?, ...}`) when it succeeded. */
  result?: unknown;
  success: boolean;
  error?: string;
  /** Milliseconds. */
  duration: number;
}

export interface DelegationCompleteResult {
  /** Added as an assistant message after the tool results. */
  feedback?: string;
  /** End the parent's run after this step. */
  bail?: boolean;
}

/** What `onViolation` receives when the processor aborted a run (the framework's `ProcessorViolation`). */
export interface ProcessorViolation {
  processorId: string;
  message: string;
  /** The abort's metadata, when it gave any. */
  detail?: unknown;
  /** The hook that aborted (`"processInput"`, `"processOutputStream"`, ...). */
  hook?: string;
}

export interface Processor<TId extends string = string, TTripwireMetadata = unknown> {
  readonly id: TId;
  readonly name?: string;
  readonly description?: string;
  processorIndex?: number;
  /** When true, processOutputStream also receives `data-*` chunks. */
  processDataParts?: boolean;
  /** `transformToolPayload` only: the tools (by name) it is invoked for; every tool when unset. */
  toolNames?: string[];

  processInput?(args: ProcessInputArgs<TTripwireMetadata>): Awaitable<ProcessInputResult | void | undefined>;
  processInputStep?(
    args: ProcessInputStepArgs<TTripwireMetadata>,
  ): Awaitable<ProcessInputStepResult | MessageList | MastraDBMessage[] | void | undefined>;
  processLLMRequest?(args: ProcessLLMRequestArgs<TTripwireMetadata>): Awaitable<ProcessLLMRequestResult>;
  processLLMResponse?(args: ProcessLLMResponseArgs<TTripwireMetadata>): Awaitable<ProcessLLMResponseResult>;
  processAPIError?(args: ProcessAPIErrorArgs<TTripwireMetadata>): Awaitable<ProcessAPIErrorResult | void>;
  /** The chunk (unchanged or a replacement), `null` to drop it, or (protocol version 2) an array of chunks in its place. */
  processOutputStream?(args: ProcessOutputStreamArgs<TTripwireMetadata>): Promise<ChunkType | ChunkType[] | null | undefined>;
  processOutputStep?(args: ProcessOutputStepArgs<TTripwireMetadata>): ProcessorMessageResult;
  processToolResult?(args: ProcessToolResultArgs<TTripwireMetadata>): ProcessorMessageResult;
  processOutputResult?(args: ProcessOutputResultArgs<TTripwireMetadata>): ProcessorMessageResult;
  /** Before a sub-agent tool (`agent-<key>`) runs: reject it (`{proceed: false, rejectionReason}`) or change it. */
  onDelegationStart?(args: OnDelegationStartArgs<TTripwireMetadata>): Awaitable<DelegationStartResult | void | undefined>;
  /** After a sub-agent tool ran: `{feedback}` for the parent's memory, or `{bail: true}`. */
  onDelegationComplete?(args: OnDelegationCompleteArgs<TTripwireMetadata>): Awaitable<DelegationCompleteResult | void | undefined>;
  /** How one tool payload looks to clients; see `TransformToolPayloadArgs`. */
  transformToolPayload?(args: TransformToolPayloadArgs<TTripwireMetadata>): Awaitable<unknown>;
  /** Called after this processor aborted a run, from any hook: fire and forget, errors swallowed. */
  onViolation?(violation: ProcessorViolation): void | Promise<void>;
  /** Once per call, before memory loads, for the processor an agent names as its `resolver`: the
   * framework's function-valued model, instructions, tools, ...; `undefined` changes nothing. */
  resolveAgent?(args: ResolveAgentArgs<TTripwireMetadata>): Awaitable<AgentOverrides | void | undefined>;
}

/** Must implement processInput, processInputStep, processLLMRequest or processLLMResponse. */
export type InputProcessor = Processor &
  (
    | { processInput: NonNullable<Processor["processInput"]> }
    | { processInputStep: NonNullable<Processor["processInputStep"]> }
    | { processLLMRequest: NonNullable<Processor["processLLMRequest"]> }
    | { processLLMResponse: NonNullable<Processor["processLLMResponse"]> }
  );

/** Must implement processOutputStream, processOutputStep or processOutputResult. */
export type OutputProcessor = Processor &
  (
    | { processOutputStream: NonNullable<Processor["processOutputStream"]> }
    | { processOutputStep: NonNullable<Processor["processOutputStep"]> }
    | { processOutputResult: NonNullable<Processor["processOutputResult"]> }
  );

/** Must implement processAPIError. */
export type ErrorProcessor = Processor & { processAPIError: NonNullable<Processor["processAPIError"]> };

/** How a remote processor wants to be invoked; every field is optional (see `attach`). */
export interface RemoteOptions {
  /** Hooks to run fire-and-forget: the run never waits, and their answers are ignored. */
  observe?: HookName[];
  /** The timeout, in milliseconds, to ask for per hook. */
  timeouts?: Partial<Record<HookName, number>>;
  /** `processOutputStream`: one chunk per invocation, or every chunk ready (default). */
  streamDelivery?: "per-chunk" | "windowed";
  maxWindow?: number;
  /** `processOutputStream`: invocations of one run in flight at once (default 4). */
  maxInFlight?: number;
}
export { TextGate, type Boundary, type GateArgs, type Guard, type TextGateOptions } from "./text_gate.js";
