// `@treadle/client`: the agent client, remote processors and tools, and the generated code.
//
// The processor interface lives in `@treadle/client/processors` (with `@treadle/client/memory`,
// `@treadle/client/stream` and `@treadle/client/errors` for the types it uses), named and shaped
// as in the Mastra Processor API, so processors written for it port by changing imports.
export {
  AgentClient, AgentRef, generateResultOf, type AgentClientOptions, type CallOptionsLike, type GenerateResult, type RunOptions,
  type RunStep, type SkippedProcessorInfo, type ToolResultInfo,
} from "./agents.js";
export { ThreadCalls, type CallControl, type CreateThreadOptions, type PageOptions, type ThreadKey, type UpdateThreadOptions } from "./threads.js";
export {
  SignalCalls, ThreadSubscription, type AgentSignal, type Attributes, type CreatedAgentSignal, type IfActive, type IfIdle,
  type ListNotificationsOptions, type MessageInput, type NotificationDeliveryDecision, type NotificationInput, type NotificationOptions,
  type NotificationRecord, type SendAgentSignalAccepted, type SendAgentSignalResult, type SendNotificationSignalResult,
  type SendStateSignalResult, type SignalContents, type SignalOptions, type SignalSend, type StateSignalInput, type StreamOptions,
} from "./signals.js";
export { TOKEN_ENV, type ConnectOptions, type Pem, type TlsOptions } from "./internal/connect.js";
export { attach, AttachError, type AttachOptions, type ProcessorHandle } from "./processors.js";
export { serveScorers, createScorer, type Scorer, type ScorerRun, type ScoreResult, type ServeScorersOptions, type ScorerHandle } from "./scorers.js";
export { serveTools, createTool, type Tool, type ToolExecutionContext, type ServeToolsOptions, type ToolHandle } from "./tools.js";
export { serveVoices, type ServeVoicesOptions, type VoiceCallContext, type VoiceHandle, type VoiceProvider } from "./voices.js";

// The generated code and what a program needs to speak it directly.
export { create, fromJson, toJson, type MessageInitShape } from "@bufbuild/protobuf";
export { Code, ConnectError, createClient } from "@connectrpc/connect";
export { createGrpcTransport } from "@connectrpc/connect-node";

export * from "./gen/treadle/v1/agent_pb.js";
export * from "./gen/treadle/v1/agent_service_pb.js";
export * from "./gen/treadle/v1/agent_version_service_pb.js";
export * from "./gen/treadle/v1/chunk_pb.js";
export * from "./gen/treadle/v1/message_pb.js";
export * from "./gen/treadle/v1/notification_pb.js";
export * from "./gen/treadle/v1/processor_service_pb.js";
export * from "./gen/treadle/v1/prompt_pb.js";
export * from "./gen/treadle/v1/remote_pb.js";
export * from "./gen/treadle/v1/score_service_pb.js";
export * from "./gen/treadle/v1/signal_pb.js";
export * from "./gen/treadle/v1/thread_service_pb.js";
export * from "./gen/treadle/v1/tool_service_pb.js";
export * from "./gen/treadle/v1/voice_service_pb.js";
