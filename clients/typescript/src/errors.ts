// `@treadle/client/errors`: the errors processors see and throw.

const API_CALL_ERROR = Symbol.for("treadle.error.APICallError");
const TRIPWIRE = Symbol.for("treadle.error.TripWire");

/** A failed provider call, as `processAPIError` receives it (the AI SDK's `APICallError`). */
export class APICallError extends Error {
  readonly [API_CALL_ERROR] = true;
  /** The HTTP status code; undefined when the call never got a response. */
  readonly statusCode: number | undefined;
  /** The response body, parsed as JSON when it was JSON. */
  readonly responseBody: string | undefined;
  readonly data: unknown;
  readonly isRetryable: boolean;
  /** The provider (`openai`, `anthropic`) and the model called. */
  readonly provider: string;
  readonly modelId: string;

  constructor(options: {
    message: string; statusCode?: number; data?: unknown; isRetryable?: boolean; provider?: string; modelId?: string;
  }) {
    super(options.message);
    this.name = "AI_APICallError";
    this.statusCode = options.statusCode;
    this.data = options.data;
    this.responseBody = options.data === undefined ? undefined
      : typeof options.data === "string" ? options.data : JSON.stringify(options.data);
    this.isRetryable = options.isRetryable ?? false;
    this.provider = options.provider ?? "";
    this.modelId = options.modelId ?? "";
  }

  /** True for an `APICallError`, also one made by another copy of this package. */
  static isInstance(error: unknown): error is APICallError {
    return typeof error === "object" && error !== null && (error as Record<symbol, unknown>)[API_CALL_ERROR] === true;
  }
}

export interface AbortOptions<TMetadata = unknown> {
  /** Redo the step with the reason as feedback to the model (within `maxProcessorRetries`). */
  retry?: boolean;
  /** Structured data attached to the tripwire chunk. */
  metadata?: TMetadata;
}

/** What `abort()` throws: the run stops (or the step is retried) with a `tripwire` chunk. */
export class TripWire<TMetadata = unknown> extends Error {
  readonly [TRIPWIRE] = true;
  readonly options: AbortOptions<TMetadata>;

  constructor(reason: string, options: AbortOptions<TMetadata> = {}) {
    super(reason);
    this.name = "TripWire";
    this.options = options;
  }

  static isInstance(error: unknown): error is TripWire {
    return typeof error === "object" && error !== null && (error as Record<symbol, unknown>)[TRIPWIRE] === true;
  }
}
