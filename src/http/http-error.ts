import type { ContentfulStatusCode } from "hono/utils/http-status";

/** The one error type of the HTTP edge; `onError` turns it into the contract's JSON shape. */
export type HttpErrorCode =
  | "invalid_request"
  | "unauthorized"
  | "not_found"
  | "conflict"
  | "quota_exceeded"
  | "payload_too_large"
  | "rate_limited"
  | "invalid_config"
  | "internal_error"
  | "session_reset"
  | "surface_rejected"
  | "provider_error"
  | "provider_rate_limited"
  | "provider_timeout"
  | "provider_unavailable"
  | "aborted";

const STATUS: Record<HttpErrorCode, ContentfulStatusCode> = {
  invalid_request: 400,
  unauthorized: 401,
  not_found: 404,
  conflict: 409,
  // The session is full (gateway.sessions limits): the client frees space by deleting a turn or the session.
  quota_exceeded: 409,
  payload_too_large: 413,
  // Per-tenant request limit (RATE_LIMITER binding); the answer carries Retry-After.
  rate_limited: 429,
  invalid_config: 500,
  internal_error: 500,
  /** The session object was reset under the call; the next request reaches a fresh one. */
  session_reset: 503,
  /** The model-facing surface failed its fail-closed check (a gateway fault): nothing was sent. */
  surface_rejected: 500,
  // A /chat provider failure: the upstream's own status travels as `providerStatus` in the body.
  provider_error: 502,
  /** The provider rate-limited the call; its Retry-After is passed on. */
  provider_rate_limited: 429,
  provider_timeout: 504,
  provider_unavailable: 502,
  /** The caller cancelled (only seen by a caller that is still reading, e.g. a stream cut by the gateway). */
  aborted: 499 as ContentfulStatusCode,
};

export class HttpError extends Error {
  constructor(
    readonly code: HttpErrorCode,
    message: string,
    readonly path?: string,
    /** Extra response headers (e.g. `Retry-After` of a 429). */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }

  get status(): ContentfulStatusCode {
    return STATUS[this.code];
  }

  toJSON() {
    return { error: { code: this.code, message: this.message, ...(this.path !== undefined ? { path: this.path } : {}) } };
  }
}

export function statusFor(code: string): ContentfulStatusCode {
  return (STATUS as Record<string, ContentfulStatusCode>)[code] ?? 500;
}
