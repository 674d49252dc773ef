import type { MiddlewareHandler } from "hono";
import type { RateLimitSettings } from "../config";
import { logRecord } from "../observability";
import { HttpError } from "./http-error";

/**
 * Per-tenant request limit on `/v1`, with the Workers Rate Limiting binding (`[[ratelimits]]`
 * `RATE_LIMITER` in wrangler.toml: the limit and period live there). Keyed by tenant, so one
 * tenant's traffic never throttles another's. Over the limit: 429 `rate_limited` with
 * `Retry-After` (the binding does not report when its window ends; `retryAfterSeconds` is the
 * period). No binding (an embedding entry without it), or `gateway.rateLimit.enabled: false`:
 * unlimited. A failing binding lets the request through (logged): availability over throttling.
 */
export function tenantRateLimit<B extends { RATE_LIMITER?: RateLimit }>(
  settings: (env: B) => RateLimitSettings,
): MiddlewareHandler<{ Bindings: B; Variables: { tenant: string } }> {
  return async (c, next) => {
    const limiter = c.env.RATE_LIMITER;
    const s = settings(c.env);
    if (limiter && s.enabled) {
      let allowed = true;
      try {
        allowed = (await limiter.limit({ key: `tenant:${c.get("tenant")}` })).success;
      } catch (error) {
        // Fail open: a limiter outage must not take the gateway down with it.
        logRecord("host_error", { where: "rate_limit", error, tenant: c.get("tenant") });
      }
      if (!allowed) {
        throw new HttpError(
          "rate_limited",
          `too many requests for this tenant; retry after ${s.retryAfterSeconds} s (the limit is the RATE_LIMITER binding's in wrangler.toml)`,
          undefined,
          { "Retry-After": String(s.retryAfterSeconds) },
        );
      }
    }
    await next();
  };
}
