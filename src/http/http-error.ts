import type { ContentfulStatusCode } from "hono/utils/http-status";

/** The one error type of the HTTP edge; `onError` turns it into the contract's JSON shape. */
export type HttpErrorCode = "invalid_request" | "unauthorized" | "not_found" | "conflict" | "payload_too_large" | "invalid_config" | "internal_error" | "session_reset";

const STATUS: Record<HttpErrorCode, ContentfulStatusCode> = {
  invalid_request: 400,
  unauthorized: 401,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  invalid_config: 500,
  internal_error: 500,
  /** The session object was reset under the call; the next request reaches a fresh one. */
  session_reset: 503,
};

export class HttpError extends Error {
  constructor(
    readonly code: HttpErrorCode,
    message: string,
    readonly path?: string,
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
