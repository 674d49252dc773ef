import { APICallError, EmptyResponseBodyError, InvalidResponseDataError, JSONParseError, TypeValidationError } from "@ai-sdk/provider";
import type { RedactOptions } from "../observability";
import { providerMessage } from "./provider-message";
import { retryAfterSeconds } from "./retry-after";
import { ProviderError } from "./types";

/** Why a call's own abort controller fired, if it did: the caller's signal, or the call's deadline. */
export type CallEnd = "aborted" | "timeout" | undefined;

export type ErrorContext = {
  ended: CallEnd;
  timeoutMs: number;
  /** The config's provider name (`models.providers.<name>`), to say whose answer was malformed. */
  provider: string;
  /** What to mask in any provider text: the API key and the turn's registered secrets and patterns. */
  redaction: RedactOptions;
  /** Epoch ms, for a `retry-after` HTTP date. */
  now: number;
  /** The answer's HTTP status when one came (a broken stream after `200`). */
  status?: number;
  /** False when the error came before any request left: the request could not be built. */
  sent: boolean;
  /** The byte bound the answer ran past (observed-fetch.ts), if it did. */
  overflowed?: number;
};

/**
 * The one place a failure of a model call becomes a `ProviderError` (types.ts has the code table).
 * The call's own ending wins over whatever error it surfaced as: once the caller's signal or the
 * deadline fired, the error is the abort, whatever the client library made of it. Text the provider
 * wrote on purpose (its error message, an error event) is passed on through `providerMessage`; an
 * answer that could not be read is described, never quoted (`malformed`).
 */
export function toProviderError(error: unknown, context: ErrorContext): ProviderError {
  if (error instanceof ProviderError) return error;
  if (context.ended === "aborted") return new ProviderError("aborted", "the model call was cancelled by its caller", 0);
  if (context.ended === "timeout") {
    return new ProviderError("provider_timeout", `the provider did not finish answering within ${context.timeoutMs} ms`, 0);
  }
  if (context.overflowed !== undefined) {
    const where = `provider "${context.provider}"${context.status ? ` (HTTP ${context.status})` : ""}`;
    return new ProviderError(
      "provider_unavailable",
      `the answer of ${where} was larger than ${context.overflowed} bytes; it was not read further`,
      context.status ?? 0,
    );
  }
  const shown = (text: string) => providerMessage(text, context.redaction);
  if (APICallError.isInstance(error)) {
    const status = error.statusCode;
    if (status === undefined) return new ProviderError("provider_unavailable", shown(`the provider could not be reached: ${error.message}`), 0);
    // Below 400 the wire client failed on an answer the provider called a success: its cause quotes the body.
    if (status < 400) return malformed(error.cause ?? error, context.provider, status);
    return fromStatus(status, shown(error.message), error.responseHeaders, context.now);
  }
  const streamError = asStreamError(error);
  if (streamError !== undefined) {
    if (streamError.statusCode !== undefined && streamError.statusCode >= 400) {
      return fromStatus(streamError.statusCode, shown(streamError.message), undefined, context.now);
    }
    return new ProviderError("provider_unavailable", shown(`the provider's stream reported an error: ${streamError.message}`), context.status ?? 0);
  }
  if (!context.sent) {
    // The wire client refused our own request (a bug of ours, not provider bytes): its words help.
    const message = error instanceof Error ? error.message : String(error);
    return new ProviderError("provider_error", shown(`the request could not be built: ${message}`), 0);
  }
  return malformed(error, context.provider, context.status ?? 0);
}

function fromStatus(status: number, message: string, headers: Record<string, string> | undefined, now: number): ProviderError {
  if (status === 429) return new ProviderError("provider_rate_limited", message, status, retryAfterSeconds(headers?.["retry-after"], now));
  if (status < 500) return new ProviderError("provider_error", message, status);
  return new ProviderError("provider_unavailable", message, status);
}

/**
 * An answer the wire client could not read, as `provider_unavailable`. The client library's message
 * quotes the raw chunk (and a schema validation dump), so only the error's class is told, and the
 * provider and status: the raw events stay for `CODEMODE_DEBUG=sse=…`.
 */
function malformed(error: unknown, provider: string, status: number): ProviderError {
  const where = `provider "${provider}"${status > 0 ? ` (HTTP ${status})` : ""}`;
  const why = JSONParseError.isInstance(error)
    ? "an event was not valid JSON"
    : TypeValidationError.isInstance(error)
      ? "an event did not match the wire format"
      : InvalidResponseDataError.isInstance(error)
        ? "an event held data the wire format does not allow"
        : EmptyResponseBodyError.isInstance(error)
          ? "the answer had no body"
          : undefined;
  const message = why !== undefined ? `${where} sent a malformed response: ${why}` : `the response of ${where} broke off or could not be read`;
  return new ProviderError("provider_unavailable", message, status);
}

/** An error event inside a provider's stream, as the AI SDK's providers report it. */
function asStreamError(error: unknown): { message: string; statusCode?: number } | undefined {
  if (typeof error !== "object" || error === null || error instanceof Error) return undefined;
  const { message, statusCode } = error as { message?: unknown; statusCode?: unknown };
  if (typeof message !== "string") return undefined;
  return typeof statusCode === "number" ? { message, statusCode } : { message };
}
