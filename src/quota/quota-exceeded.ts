import { GatewayError } from "../errors";

/**
 * A write that would grow a session past `gateway.sessions.maxStoredBytes`: refused before anything is
 * stored. Thrown by the session's guarded write path (durable-objects/session/storage-quota.ts) and
 * reported as `quota_exceeded` (HTTP 409, a /chat error event), as a catchable `Error` inside a cell,
 * or as `snapshot_limit_exceeded` when it refuses a park (the seed's code for a run that cannot be kept).
 */
export class QuotaExceeded extends GatewayError {
  override readonly name = "QuotaExceeded";
  constructor(message: string) {
    super("quota_exceeded", message);
  }
}

/** How to make room, named in every refusal. */
export const FREE_SPACE =
  "delete a turn (DELETE /v1/sessions/:sessionId/turns/:turnId) or the whole session (DELETE /v1/sessions/:sessionId) to free space";

/** The refusal of a write of `bytes` that would bring the session to `after` bytes, over `max`. */
export function quotaExceeded(what: string, bytes: number, after: number, max: number, hint = ""): QuotaExceeded {
  return new QuotaExceeded(
    `session storage is full: ${what} (${bytes} bytes) would bring the session to ${after} bytes, over gateway.sessions.maxStoredBytes (${max}); ${hint}${FREE_SPACE}`,
  );
}
