import type { ChatAnswer } from "../public";
import type { ClientErrorCode } from "./wire-types";

/**
 * A failed call as a value: the gateway's error code and message, the HTTP status it came with,
 * and what the answer adds. `network_error` (status 0): no answer arrived (the fetch rejected);
 * `invalid_response`: an answer that is not the gateway's JSON (a proxy's HTML page, a cut body).
 */
export type CodemodeError = {
  code: ClientErrorCode;
  status: number;
  message: string;
  /** The request field at fault (`invalid_request`). */
  path?: string;
  /** Seconds to wait before retrying: the `Retry-After` header or the /chat error's `retryAfterSeconds`. */
  retryAfter?: number;
  /** A /chat provider failure: the upstream's own status. */
  providerStatus?: number;
  /** A /chat turn that stopped on this error: continue it with `{ turnId }` (retryable codes). */
  turnId?: string;
  meta?: ChatAnswer["meta"];
};

/** Every method answers one of these: failures are data, never exceptions (a rejected fetch included). */
export type Result<T> = { ok: true; value: T } | { ok: false; error: CodemodeError };

export const success = <T>(value: T): Result<T> => ({ ok: true, value });
export const failure = (error: CodemodeError): { ok: false; error: CodemodeError } => ({ ok: false, error });

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function seconds(v: unknown): number | undefined {
  const n = typeof v === "string" ? Number(v) : v;
  return typeof n === "number" && Number.isFinite(n) && n >= 0 ? n : undefined;
}

/** The error a non-2xx answer carries (`{ error: { code, message, … } }`), whatever its body. */
export async function errorOf(res: Response): Promise<CodemodeError> {
  const text = await res.text().catch(() => "");
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const headerRetry = seconds(res.headers.get("retry-after") ?? undefined);
  const e = isObject(body) && isObject(body.error) ? body.error : undefined;
  if (!e || typeof e.code !== "string" || typeof e.message !== "string") {
    const message = `HTTP ${res.status} without a gateway error body${text ? `: ${text.slice(0, 200)}` : ""}`;
    return { code: "invalid_response", status: res.status, message, ...(headerRetry !== undefined ? { retryAfter: headerRetry } : {}) };
  }
  const retryAfter = headerRetry ?? seconds(e.retryAfterSeconds);
  return {
    code: e.code as ClientErrorCode,
    status: res.status,
    message: e.message,
    ...(typeof e.path === "string" ? { path: e.path } : {}),
    ...(retryAfter !== undefined ? { retryAfter } : {}),
    ...(typeof e.providerStatus === "number" ? { providerStatus: e.providerStatus } : {}),
    ...(isObject(body) && typeof body.turnId === "string" ? { turnId: body.turnId } : {}),
    ...(isObject(body) && isObject(body.meta) ? { meta: body.meta as ChatAnswer["meta"] } : {}),
  };
}

/** A fetch that rejected: no answer (DNS, connection, CORS, an aborted signal). */
export function networkError(error: unknown): CodemodeError {
  const aborted = isObject(error) && error.name === "AbortError";
  const message = error instanceof Error ? error.message : String(error);
  return { code: aborted ? "aborted" : "network_error", status: aborted ? 499 : 0, message };
}
