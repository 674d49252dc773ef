import { APICallError } from "@ai-sdk/provider";
import type { RedactOptions } from "../observability/secret-shapes";
import { providerMessage } from "./provider-message";
import { retryAfterSeconds } from "./retry-after";
import { ProviderError } from "./types";

/** Why a call's own abort controller fired, if it did: the caller's signal, or the call's deadline. */
export type CallEnd = "aborted" | "timeout" | undefined;

export type ErrorContext = {
  ended: CallEnd;
  timeoutMs: number;
  /** What to mask in any provider text: the API key and the turn's registered secrets and patterns. */
  redaction: RedactOptions;
  /** Epoch ms, for a `retry-after` HTTP date. */
  now: number;
  /** The answer's HTTP status when one came (a broken stream after `200`). */
  status?: number;
  /** False when the error came before any request left: the request could not be built. */
  sent: boolean;
};

/**
 * The one place a failure of a model call becomes a `ProviderError` (types.ts has the code table).
 * The call's own ending wins over whatever error it surfaced as: once the caller's signal or the
 * deadline fired, the error is the abort, whatever the client library made of it.
 */
export function toProviderError(error: unknown, context: ErrorContext): ProviderError {
  if (error instanceof ProviderError) return error;
  if (context.ended === "aborted") return new ProviderError("aborted", "the model call was cancelled by its caller", 0);
  if (context.ended === "timeout") {
    return new ProviderError("provider_timeout", `the provider did not finish answering within ${context.timeoutMs} ms`, 0);
  }
  const shown = (text: string) => providerMessage(text, context.redaction);
  if (APICallError.isInstance(error)) {
    const status = error.statusCode;
    if (status === undefined) return new ProviderError("provider_unavailable", shown(`the provider could not be reached: ${error.message}`), 0);
    return fromStatus(status, shown(error.message), error.responseHeaders, context.now);
  }
  const streamError = asStreamError(error);
  if (streamError !== undefined) {
    if (streamError.statusCode !== undefined) return fromStatus(streamError.statusCode, shown(streamError.message), undefined, context.now);
    return new ProviderError("provider_unavailable", shown(`the provider's stream reported an error: ${streamError.message}`), context.status ?? 0);
  }
  const message = error instanceof Error ? error.message : String(error);
  if (!context.sent) return new ProviderError("provider_error", shown(`the request could not be built: ${message}`), 0);
  return new ProviderError("provider_unavailable", shown(`malformed answer from the provider: ${message}`), context.status ?? 0);
}

function fromStatus(status: number, message: string, headers: Record<string, string> | undefined, now: number): ProviderError {
  if (status === 429) return new ProviderError("provider_rate_limited", message, status, retryAfterSeconds(headers?.["retry-after"], now));
  if (status >= 400 && status < 500) return new ProviderError("provider_error", message, status);
  if (status >= 500) return new ProviderError("provider_unavailable", message, status);
  // A 2xx whose body could not be read as the wire format says.
  return new ProviderError("provider_unavailable", `malformed answer from the provider: ${message}`, status);
}

/** An error event inside a provider's stream, as the AI SDK's providers report it. */
function asStreamError(error: unknown): { message: string; statusCode?: number } | undefined {
  if (typeof error !== "object" || error === null || error instanceof Error) return undefined;
  const { message, statusCode } = error as { message?: unknown; statusCode?: unknown };
  if (typeof message !== "string") return undefined;
  return typeof statusCode === "number" ? { message, statusCode } : { message };
}
