// Remote voice providers over `VoiceProviderService.Attach`: a provider speaks (text to 16-bit
// PCM) and/or listens (16-bit PCM to text); `serveVoices` serves providers to running servers
// until the handle is closed. Agents name a provider by its id in their `voice` settings.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { createClient, type Transport } from "@connectrpc/connect";
import type { TracerProvider } from "@opentelemetry/api";
import {
  type SynthesizeInvocation,
  type TranscribeInvocation,
  VoiceProviderService,
  type VoiceProviderServiceAttachRequest,
  VoiceProviderServiceAttachRequestSchema,
  type VoiceProviderServiceAttachResponse,
} from "./gen/treadle/v1/voice_service_pb.js";
import type { ConnectOptions } from "./internal/connect.js";
import { Handle, TOOL_PROTOCOL_VERSIONS, type Session, defaultInstanceId } from "./internal/link.js";
import { loadTracing, makeTracer, type Tracer } from "./internal/tracing.js";

export interface VoiceCallContext {
  agentId: string;
  /** Aborted when the server stops waiting (deadline, caller gone, stream gone). */
  abortSignal: AbortSignal;
}

export interface VoiceProvider {
  /** 1-64 letters, digits, `_`, `.` or `-`; agents name the provider by it. */
  id: string;
  /** The rate of the PCM it makes and wants (default 16000); the server converts. */
  sampleRate?: number;
  /** Its voices, for `GetSpeakers`. */
  speakers?: { voiceId: string; metadata?: Record<string, string | number | boolean> }[];
  /** Text to speech: 16-bit little-endian mono PCM, in one piece or several. */
  speak?(text: string, options: { speaker: string } & VoiceCallContext):
    Uint8Array | Promise<Uint8Array> | AsyncIterable<Uint8Array>;
  /** Speech to text: the whole utterance as 16-bit PCM; `phrases`, when given, are all it may hear. */
  listen?(audio: Uint8Array, options: { phrases: string[] } & VoiceCallContext): string | Promise<string>;
}

export interface ServeVoicesOptions extends ConnectOptions {
  target: string | string[];
  providers: VoiceProvider[];
  instanceId?: string;
  tracerProvider?: TracerProvider;
  backoff?: [number, number];
  log?: (message: string) => void;
}

export type VoiceHandle = Handle<VoiceProviderServiceAttachRequest, VoiceProviderServiceAttachResponse>;

type Send = (m: VoiceProviderServiceAttachRequest) => void;

function answer(message: MessageInitShape<typeof VoiceProviderServiceAttachRequestSchema>["message"]): VoiceProviderServiceAttachRequest {
  return create(VoiceProviderServiceAttachRequestSchema, { message });
}

class VoiceSession implements Session<VoiceProviderServiceAttachRequest, VoiceProviderServiceAttachResponse> {
  private readonly running = new Map<string, AbortController>();
  private closed = false;

  constructor(private readonly providers: Map<string, VoiceProvider>, private readonly instanceId: string,
    private readonly tracer: Tracer, private readonly log: (m: string) => void) {}

  handshake(): VoiceProviderServiceAttachRequest {
    return answer({
      case: "handshake",
      value: {
        protocolVersions: TOOL_PROTOCOL_VERSIONS, instanceId: this.instanceId,
        providers: [...this.providers.values()].map((p) => ({
          id: p.id, speechToText: typeof p.listen === "function", textToSpeech: typeof p.speak === "function",
          sampleRateHertz: p.sampleRate ?? 16000,
          speakers: (p.speakers ?? []).map((s) => ({ voiceId: s.voiceId, metadata: s.metadata ?? {} })),
        })),
      },
    });
  }

  onMessage(message: VoiceProviderServiceAttachResponse, send: Send): boolean {
    const m = message.message;
    if (m.case === "synthesize") void this.run(m.value, send, (c) => this.speak(m.value, c, send));
    else if (m.case === "transcribe") void this.run(m.value, send, (c) => this.listen(m.value, c, send));
    else if (m.case === "cancel") this.running.get(m.value.invocationId)?.abort(new Error(`cancelled by the server: ${m.value.reason}`));
    else if (m.case === "drain") this.log("server is draining; will reconnect when it closes the stream");
    return m.case === "welcome";
  }

  close(): void {
    this.closed = true;
    for (const c of this.running.values()) c.abort(new Error("the stream to the server ended"));
    this.running.clear();
  }

  private async run(call: SynthesizeInvocation | TranscribeInvocation, send: Send,
    work: (context: VoiceCallContext) => Promise<void>): Promise<void> {
    const controller = new AbortController();
    this.running.set(call.invocationId, controller);
    const timer = call.deadline === undefined ? undefined
      : setTimeout(() => controller.abort(new Error("the deadline passed")), Math.max(0, timestampMs(call.deadline) - Date.now()));
    const name = call.$typeName === "treadle.v1.SynthesizeInvocation" ? "voice.synthesize" : "voice.transcribe";
    await this.tracer.run(`${name} ${call.providerId}`, call.traceContext, { "treadle.voice.provider": call.providerId },
      async (span) => {
        try {
          await work({ agentId: call.agentId, abortSignal: controller.signal });
        } catch (e) {
          span.error(e);
          if (!this.closed && !controller.signal.aborted) {
            send(answer({ case: "error", value: { invocationId: call.invocationId, message: e instanceof Error ? e.message : String(e) } }));
          }
        }
      });
    clearTimeout(timer);
    this.running.delete(call.invocationId);
  }

  private async speak(call: SynthesizeInvocation, context: VoiceCallContext, send: Send): Promise<void> {
    const provider = this.providers.get(call.providerId);
    if (!provider?.speak) throw new Error(`provider ${call.providerId} does not speak here`);
    const made = await provider.speak(call.text, { speaker: call.speaker, ...context });
    const pieces: AsyncIterable<Uint8Array> | Uint8Array[] = made instanceof Uint8Array ? [made] : made;
    for await (const audio of pieces) {
      if (this.closed || context.abortSignal.aborted) return;
      send(answer({ case: "audio", value: { invocationId: call.invocationId, audio, last: false } }));
    }
    if (!this.closed && !context.abortSignal.aborted) {
      send(answer({ case: "audio", value: { invocationId: call.invocationId, audio: new Uint8Array(), last: true } }));
    }
  }

  private async listen(call: TranscribeInvocation, context: VoiceCallContext, send: Send): Promise<void> {
    const provider = this.providers.get(call.providerId);
    if (!provider?.listen) throw new Error(`provider ${call.providerId} does not listen here`);
    const text = await provider.listen(call.audio, { phrases: call.phrases, ...context });
    if (!this.closed && !context.abortSignal.aborted) {
      send(answer({ case: "transcript", value: { invocationId: call.invocationId, text } }));
    }
  }
}

function open(transport: Transport, requests: AsyncIterable<VoiceProviderServiceAttachRequest>, signal: AbortSignal) {
  return createClient(VoiceProviderService, transport).attach(requests, { signal });
}

/** Serve voice `providers` to every server in `target` until `await handle.close()`. */
export function serveVoices(options: ServeVoicesOptions): VoiceHandle {
  const byId = new Map<string, VoiceProvider>();
  for (const p of options.providers) {
    if (typeof p?.id !== "string" || !p.id) throw new TypeError("a voice provider needs a non-empty string `id`");
    if (typeof p.speak !== "function" && typeof p.listen !== "function") {
      throw new TypeError(`voice provider ${p.id} needs a \`speak\` or a \`listen\` function`);
    }
    if (byId.has(p.id)) throw new TypeError(`voice provider ${p.id} is given twice`);
    byId.set(p.id, p);
  }
  if (byId.size === 0) throw new TypeError("give at least one voice provider");
  const log = options.log ?? (() => {});
  const tracer = makeTracer(options.tracerProvider);
  const iid = options.instanceId ?? defaultInstanceId();
  return new Handle(options.target, open, () => new VoiceSession(byId, iid, tracer, log), {
    backoff: options.backoff, beforeFirst: loadTracing, log, tls: options.tls, token: options.token,
  });
}
