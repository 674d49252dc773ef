import type { MiddlewareHandler } from "hono";
import { routePath } from "hono/route";
import { logRecord } from "./log";

/** What the request log reads from the context; the routes and `onError` fill it in. */
export type RequestLogVars = {
  /** Names this request in every record (and the cancellation of its exec/wait). */
  requestId: string;
  /** Set by authentication; absent when the request was refused before it. */
  tenant: string;
  /** The code of a non-2xx answer, set wherever the answer is made. */
  errorCode: string;
};

/** Route parameters are logged only when they have their valid shape (a client's garbage is not). */
const PARAMS = {
  sessionId: /^[A-Za-z0-9._\-]{1,128}$/,
  turnId: /^[A-Za-z0-9\-]{1,64}$/,
  toolName: /^[^\u0000-\u001f\u007f]{1,128}$/,
} as const;

function validParam(c: Parameters<MiddlewareHandler>[0], name: keyof typeof PARAMS): string | undefined {
  const value = c.req.param(name) as string | undefined;
  return value !== undefined && PARAMS[name].test(value) ? value : undefined;
}

/**
 * The first middleware: gives the request its id (also sent back as `x-request-id`) and
 * writes one `request` record when the answer is ready — route pattern, status, duration,
 * tenant and ids; never the raw path, query, headers or body.
 */
export function requestLog(): MiddlewareHandler<{ Variables: RequestLogVars }> {
  return async (c, next) => {
    const requestId = crypto.randomUUID();
    const started = performance.now();
    c.set("requestId", requestId);
    c.header("x-request-id", requestId);
    let threw = false;
    try {
      await next();
    } catch (error) {
      // onError answers every Error; only a non-Error throw gets here.
      threw = true;
      throw error;
    } finally {
      const length = c.req.header("content-length");
      logRecord("request", {
        requestId,
        method: c.req.method,
        route: routePath(c, -1),
        status: threw ? 500 : c.res.status,
        durationMs: Math.round(performance.now() - started),
        tenant: c.get("tenant"),
        sessionId: validParam(c, "sessionId"),
        turnId: validParam(c, "turnId"),
        tool: validParam(c, "toolName"),
        errorCode: threw ? "internal_error" : c.get("errorCode"),
        requestBytes: length === undefined || length === "" ? undefined : Number(length),
      });
    }
  };
}
