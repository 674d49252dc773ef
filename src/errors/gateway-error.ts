import type { ErrorCode } from "./error-codes";
import { statusOf } from "./error-codes";

/**
 * The one error class of the gateway: a code of the table, a message for the caller, and where
 * it applies. Thrown at the HTTP edge (`onError` renders it) and by the agent loop when it refuses
 * a request; everything else returns failures as data.
 */
export class GatewayError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** The request field at fault (validation errors). */
    readonly path?: string,
    /** Extra response headers (e.g. `Retry-After` of a 429). */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }

  get status(): number {
    return statusOf(this.code);
  }

  toJSON() {
    return { error: { code: this.code, message: this.message, ...(this.path !== undefined ? { path: this.path } : {}) } };
  }
}
