import type { MiddlewareHandler } from "hono";
import type { RateLimitSettings } from "../config";
import { logRecord } from "../observability";
import { GatewayError } from "../errors";

/** One unit of a tenant's request budget: taken, or refused with how long to wait. */
export type RateVerdict = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/** Takes one more unit of the tenant's budget (an `/mcp` batch's every further `tools/call`). */
export type TenantCharge = () => Promise<RateVerdict>;

/**
 * One unit of the tenant's budget in the Workers Rate Limiting binding (`[[ratelimits]]`
 * `RATE_LIMITER` in wrangler.toml: the limit and period live there). Keyed by tenant, so one
 * tenant's traffic never throttles another's. No binding (an embedding entry without it), or
 * `gateway.rateLimit.enabled: false`: always allowed. A failing binding allows (logged):
 * availability over throttling.
 */
export async function chargeTenant(limiter: RateLimit | undefined, settings: RateLimitSettings, tenant: string): Promise<RateVerdict> {
  if (!limiter || !settings.enabled) return { allowed: true };
  try {
    if ((await limiter.limit({ key: `tenant:${tenant}` })).success) return { allowed: true };
  } catch (error) {
    // Fail open: a limiter outage must not take the gateway down with it.
    logRecord("host_error", { where: "rate_limit", error, tenant });
    return { allowed: true };
  }
  // The binding does not report when its window ends; `retryAfterSeconds` is the period.
  return { allowed: false, retryAfterSeconds: settings.retryAfterSeconds };
}

/** What a refusal says, on /v1, /mcp and inside an /mcp batch alike. */
export function rateLimitedMessage(retryAfterSeconds: number): string {
  return `too many requests for this tenant; retry after ${retryAfterSeconds} s (the limit is the RATE_LIMITER binding's in wrangler.toml)`;
}

/**
 * Per-tenant request limit on `/v1` and `/mcp`: each HTTP request takes one unit
 * (`chargeTenant`). Over the limit: 429 `rate_limited` with `Retry-After`.
 */
export function tenantRateLimit<B extends { RATE_LIMITER?: RateLimit }>(
  settings: (env: B) => RateLimitSettings,
): MiddlewareHandler<{ Bindings: B; Variables: { tenant: string } }> {
  return async (c, next) => {
    const verdict = await chargeTenant(c.env.RATE_LIMITER, settings(c.env), c.get("tenant"));
    if (!verdict.allowed) {
      const retryAfter = String(verdict.retryAfterSeconds);
      throw new GatewayError("rate_limited", rateLimitedMessage(verdict.retryAfterSeconds), undefined, { "Retry-After": retryAfter });
    }
    await next();
  };
}
