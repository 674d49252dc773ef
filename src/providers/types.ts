import type { ModelCost, ProviderApi } from "../config";
import type { ModelTool } from "../turns";

/**
 * The provider seam of agent turns (ARCHITECTURE.md, "Providers and the chat route"). The agent
 * loop speaks only these neutral types; each wire format (OpenAI Chat Completions, Anthropic
 * Messages) is an adapter behind `ModelClient`. Failures are data (`ProviderError`), never a throw
 * the loop has to classify by message.
 */

/** One model call that asked for a tool. `input` is the parsed JSON arguments; `inputError` says why they did not parse. */
export type ModelToolCall = { id: string; name: string; input: unknown; inputError?: string };

/** The conversation as the loop keeps it; adapters map it to their wire format. */
export type ModelMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string }
  | { role: "assistant"; content: string; toolCalls?: ModelToolCall[] }
  /** A tool result, answering the assistant's call `toolCallId`. `content` is the model-facing text. */
  | { role: "tool"; toolCallId: string; toolName: string; content: string; isError?: boolean };

/**
 * Token usage of one model call: non-negative integers of at most MAX_TOKEN_COUNT (token-count.ts);
 * 0 when the provider did not report a field, or reported something that is not a count.
 */
export type ModelUsage = { inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheWriteTokens: number };

export type FinishReason = "stop" | "tool-calls" | "length" | "content-filter" | "other";

/** What a streamed model call yields, in order: text deltas and tool calls interleaved, then exactly one finish. */
export type ModelEvent =
  | { type: "text-delta"; text: string }
  | { type: "tool-call"; call: ModelToolCall }
  | { type: "finish"; finishReason: FinishReason; usage: ModelUsage; /** UTF-8 bytes of the request body sent. */ requestBytes: number };

/** A turn's sampling settings (`/chat`'s `temperature`, `topP`, `maxOutputTokens`), as validated. */
export type Sampling = { temperature?: number; topP?: number; maxOutputTokens?: number };

export type ModelRequest = Sampling & {
  messages: ModelMessage[];
  /** Exactly the turn's model-facing tools (empty: a no-tool call). */
  tools: ModelTool[];
  signal: AbortSignal;
  /** The caller takes the answer whole (text deltas are shown to nobody as they come): the stream may be read in large pieces. */
  whole?: boolean;
};

/**
 * A provider failure as the chat route reports it. `status` is the provider's HTTP status (0 when no
 * answer came: network error or timeout). `code`: `provider_rate_limited` (429; `retryAfterSeconds`
 * when the provider said, whole seconds of at most MAX_RETRY_AFTER_SECONDS: retry-after.ts), `provider_timeout` (no complete answer within the deadline),
 * `provider_unavailable` (network error, 5xx, malformed stream), `provider_error` (any other 4xx,
 * e.g. 401 bad key, 400 refused request), `aborted` (the caller's signal fired).
 * `message` is safe to show: the provider's own error message (redacted and bounded: provider-message.ts),
 * never a stack or raw bytes of a malformed answer.
 */
export type ProviderErrorCode = "provider_error" | "provider_rate_limited" | "provider_timeout" | "provider_unavailable" | "aborted";

export class ProviderError extends Error {
  constructor(
    readonly code: ProviderErrorCode,
    message: string,
    readonly status: number,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = "ProviderError";
  }
}

/** Seen by the debug switches (`transport`, `payload=…`, `sse=…`); never sees the API key. */
export type TransportObserver = {
  request?(info: { url: string; body: unknown; bytes: number }): void;
  response?(info: { url: string; status: number; ms: number }): void;
  /** One raw server-sent event of the provider's stream (its `data:` text). */
  sseEvent?(data: string): void;
};

/** A model resolved from config, with its secret read: what an adapter needs to call it. */
export type ResolvedModel = {
  /** `"provider/model"` as the caller named it. */
  ref: string;
  provider: string;
  /** The catalog row id. */
  id: string;
  /** What is sent as `model` on the wire (`upstreamModel ?? id`). */
  wireModel: string;
  api: ProviderApi;
  baseUrl: string;
  apiKey: string;
  cost?: ModelCost;
  /** Context window in tokens (row `contextWindow`, else a default); sizes model-facing results. */
  contextWindow: number;
  maxOutputTokens?: number;
};

export interface ModelClient {
  readonly model: ResolvedModel;
  /** One streamed call. Throws only `ProviderError`. */
  stream(request: ModelRequest): AsyncIterable<ModelEvent>;
}
