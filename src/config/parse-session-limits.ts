import { fail, isRecord, own, rejectUnknownKeys } from "./config-validation-error";
import { configPath } from "./config-path";

/** `gateway.sessions`: how long session data lives and how much a session may store. */
export type SessionLimits = {
  /** A turn with no call for this long is deleted, with its parked runs (a still-valid parked run keeps it). */
  turnIdleSeconds: number;
  /** A session with no activity for this long deletes everything it stored (its Durable Object's database). */
  sessionIdleSeconds: number;
  /** Open turns per session; opening one more is refused with 409 `quota_exceeded`. */
  maxTurnsPerSession: number;
  /** Turn specs/counters plus tool (plugin) data per session; parked runs are bounded separately. */
  maxStoredBytes: number;
};

/** `gateway.rateLimit`: the per-tenant request limit (the limit itself is the `RATE_LIMITER` binding's). */
export type RateLimitSettings = {
  /** `false` skips the binding even when it is bound. */
  enabled: boolean;
  /** `Retry-After` of a 429; the binding does not say when its window ends, so this is its period. */
  retryAfterSeconds: number;
};

/** The gateway's own operational sections (other `gateway.*` keys are left to other readers, kept in `raw`). */
export type GatewayOperations = { sessions: SessionLimits; rateLimit: RateLimitSettings };

type Range = Readonly<{ min: number; max: number }>;

const DAY = 86_400;

/** Out-of-range numbers are clamped into [min, max] (like `tools.codeMode`), never rejected. */
export const SESSION_LIMIT_RANGES: Readonly<Record<keyof SessionLimits, Range>> = Object.freeze({
  turnIdleSeconds: { min: 60, max: 365 * DAY },
  sessionIdleSeconds: { min: 60, max: 365 * DAY },
  maxTurnsPerSession: { min: 1, max: 10_000 },
  maxStoredBytes: { min: 65_536, max: 1_073_741_824 },
});

export const SESSION_LIMIT_DEFAULTS: SessionLimits = Object.freeze({
  turnIdleSeconds: DAY,
  sessionIdleSeconds: 7 * DAY,
  maxTurnsPerSession: 256,
  maxStoredBytes: 64 * 1024 * 1024,
});

const RETRY_AFTER: Range = { min: 1, max: 3600 };

export const RATE_LIMIT_DEFAULTS: RateLimitSettings = Object.freeze({ enabled: true, retryAfterSeconds: 60 });

/**
 * Validates `gateway.sessions` and `gateway.rateLimit`. Unknown keys (in `gateway` too) and wrong types
 * are refused with the key's path; numbers are floored and clamped to their ranges.
 */
export function parseGatewayOperations(value: unknown, path: string): GatewayOperations {
  if (value === undefined) return { sessions: { ...SESSION_LIMIT_DEFAULTS }, rateLimit: { ...RATE_LIMIT_DEFAULTS } };
  if (!isRecord(value)) fail(path, "must be an object");
  rejectUnknownKeys(value, path, ["sessions", "rateLimit"]);
  return {
    sessions: parseSessionLimits(own(value, "sessions"), configPath(path, "sessions")),
    rateLimit: parseRateLimit(own(value, "rateLimit"), configPath(path, "rateLimit")),
  };
}

function parseSessionLimits(value: unknown, path: string): SessionLimits {
  const limits = { ...SESSION_LIMIT_DEFAULTS };
  if (value === undefined) return limits;
  if (!isRecord(value)) fail(path, "must be an object");
  for (const key of Object.keys(value)) {
    const keyPath = configPath(path, key);
    if (!Object.hasOwn(SESSION_LIMIT_RANGES, key)) fail(keyPath, `is not a known session limit (${Object.keys(SESSION_LIMIT_RANGES).join(", ")})`);
    const name = key as keyof SessionLimits;
    limits[name] = clampedNumber(value[key], keyPath, SESSION_LIMIT_RANGES[name]);
  }
  return limits;
}

function parseRateLimit(value: unknown, path: string): RateLimitSettings {
  const settings = { ...RATE_LIMIT_DEFAULTS };
  if (value === undefined) return settings;
  if (!isRecord(value)) fail(path, "must be an object");
  for (const key of Object.keys(value)) {
    const keyPath = configPath(path, key);
    const field = value[key];
    if (key === "enabled") {
      if (typeof field !== "boolean") fail(keyPath, "must be true or false");
      settings.enabled = field;
    } else if (key === "retryAfterSeconds") {
      settings.retryAfterSeconds = clampedNumber(field, keyPath, RETRY_AFTER);
    } else {
      fail(keyPath, "is not a known rate limit option (enabled, retryAfterSeconds)");
    }
  }
  return settings;
}

function clampedNumber(field: unknown, path: string, range: Range): number {
  if (typeof field !== "number" || Number.isNaN(field)) fail(path, "must be a number");
  return Math.min(range.max, Math.max(range.min, Math.floor(field)));
}
