/**
 * The gateway's one error vocabulary. Every code a caller can see — an HTTP error body, a /chat
 * `error` event or `stopReason`, a session object's refusal — is a row here, with the HTTP status
 * it travels with and whether the failed work may be retried (a /chat turn stopped by a retryable
 * failure continues with `{ turnId }`). The narrower vocabularies are derived from this table, so a
 * code cannot be added to one and forgotten in another.
 *
 * The seed's own `CodeModeErrorCode` (a failed cell's `code`) is not here: a failed cell is data
 * inside a 200 (seed 002 "Error codes"), never an HTTP error.
 */
export const ERROR_CODES = {
  invalid_request: { status: 400, retryable: false },
  unauthorized: { status: 401, retryable: false },
  not_found: { status: 404, retryable: false },
  conflict: { status: 409, retryable: false },
  // The session is full (gateway.sessions limits): the client frees space by deleting a turn or the session.
  quota_exceeded: { status: 409, retryable: false },
  payload_too_large: { status: 413, retryable: false },
  // Per-tenant request limit (RATE_LIMITER binding); the answer carries Retry-After.
  rate_limited: { status: 429, retryable: true },
  invalid_config: { status: 500, retryable: false },
  internal_error: { status: 500, retryable: true },
  // The session object was reset under the call; the next request reaches a fresh one.
  session_reset: { status: 503, retryable: true },
  // The model-facing surface failed its fail-closed check (a gateway fault): nothing was sent.
  surface_rejected: { status: 500, retryable: false },
  // A /chat provider failure: the upstream's own status travels as `providerStatus` in the body.
  provider_error: { status: 502, retryable: false },
  // The provider rate-limited the call; its Retry-After is passed on.
  provider_rate_limited: { status: 429, retryable: true },
  provider_timeout: { status: 504, retryable: true },
  provider_unavailable: { status: 502, retryable: true },
  // The caller cancelled (only seen by a caller that is still reading, e.g. a stream cut by the gateway).
  aborted: { status: 499, retryable: true },
} as const satisfies Record<string, { status: number; retryable: boolean }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** Why a session object refused a call (its RPC replies carry one of these). */
export type SessionFailure = Extract<
  ErrorCode,
  "invalid_request" | "not_found" | "conflict" | "quota_exceeded" | "invalid_config" | "session_reset" | "surface_rejected" | "internal_error"
>;

/** What can stop a /chat turn: a session refusal, a provider failure, a cancel, or a fault. */
export type ChatErrorCode =
  | SessionFailure
  | Extract<ErrorCode, "provider_error" | "provider_rate_limited" | "provider_timeout" | "provider_unavailable" | "aborted" | "internal_error">;

/** A reply as data: the body, or why the call was refused (the HTTP edge alone picks the status). */
export type SessionReply<T> = { ok: true; body: T } | { ok: false; reason: SessionFailure; message: string };

/** The HTTP status a code travels with. Typed: an unknown code is a compile error, never a silent 500. */
export function statusOf(code: ErrorCode): number {
  return ERROR_CODES[code].status;
}

/** Whether work that failed with `code` may be retried (a stopped /chat turn continued). */
export function isRetryable(code: ErrorCode): boolean {
  return ERROR_CODES[code].retryable;
}
