import type { MiddlewareHandler } from "hono";
import type { CorsSettings } from "../config";

/** What a browser client sends besides the simple headers: the bearer token, JSON bodies, MCP's session and protocol headers, SSE resumption. */
const ALLOW_HEADERS = "authorization, content-type, mcp-session-id, mcp-protocol-version, last-event-id";
const ALLOW_METHODS = "GET, POST, DELETE, OPTIONS";
/** The answer headers a browser script may read: the request id, a 429's Retry-After, MCP's session and protocol headers. */
const EXPOSE_HEADERS = "x-request-id, retry-after, mcp-session-id, mcp-protocol-version";

/**
 * CORS for browser clients (`gateway.cors`). Off unless the request's `Origin` is allowed: then the
 * request goes on exactly as without CORS. For an allowed origin, a preflight (`OPTIONS` with
 * `Access-Control-Request-Method`) is answered here, before authentication and the rate limit (a
 * browser sends no token with it), and every other answer, errors included, names the origin and
 * exposes the headers a client reads. Never `Access-Control-Allow-Credentials`: the gateway
 * authenticates by bearer token, not cookies.
 */
export function cors<Env extends object>(settings: (env: Env) => CorsSettings): MiddlewareHandler<{ Bindings: Env }> {
  return async (c, next) => {
    const origin = c.req.header("origin");
    if (origin === undefined) return next();
    const { allowedOrigins, maxAgeSeconds } = settings(c.env);
    if (!allowedOrigins.includes(origin) && !allowedOrigins.includes("*")) return next();
    if (c.req.method === "OPTIONS" && c.req.header("access-control-request-method") !== undefined) {
      return c.body(null, 204, {
        "access-control-allow-origin": origin,
        "access-control-allow-methods": ALLOW_METHODS,
        "access-control-allow-headers": ALLOW_HEADERS,
        "access-control-max-age": String(maxAgeSeconds),
        vary: "origin",
      });
    }
    await next();
    c.res.headers.set("access-control-allow-origin", origin);
    c.res.headers.set("access-control-expose-headers", EXPOSE_HEADERS);
    c.res.headers.append("vary", "origin");
  };
}
