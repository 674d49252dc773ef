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

/**
 * `gateway.cors`: which browser origins may call the gateway (off by default: no origin). An origin is
 * `scheme://host[:port]` exactly as browsers send it; `"*"` admits every origin (the bearer token still
 * decides who gets in: the gateway sends no cookies and never allows credentials).
 */
export type CorsSettings = {
  allowedOrigins: readonly string[];
  /** How long a browser may cache a preflight answer (`Access-Control-Max-Age`). */
  maxAgeSeconds: number;
};

/** The gateway's own operational sections (other `gateway.*` keys are left to other readers, kept in `raw`). */
export type GatewayOperations = { sessions: SessionLimits; rateLimit: RateLimitSettings; cors: CorsSettings };

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

export const CORS_DEFAULTS: CorsSettings = Object.freeze({ allowedOrigins: Object.freeze([]), maxAgeSeconds: 600 });
const CORS_MAX_AGE: Range = { min: 0, max: 86_400 };
export const MAX_CORS_ORIGINS = 100;
export const GATEWAY_KEYS = ["sessions", "rateLimit", "cors"];
export const CORS_KEYS = ["allowedOrigins", "maxAgeSeconds"];
/** The keys parseRateLimit reads (any other is refused with its own message). */
export const RATE_LIMIT_KEYS = ["enabled", "retryAfterSeconds"];

/**
 * Validates `gateway.sessions`, `gateway.rateLimit` and `gateway.cors`. Unknown keys (in `gateway` too)
 * and wrong types are refused with the key's path; numbers are floored and clamped to their ranges.
 */
export function parseGatewayOperations(value: unknown, path: string): GatewayOperations {
  if (value === undefined) return { sessions: { ...SESSION_LIMIT_DEFAULTS }, rateLimit: { ...RATE_LIMIT_DEFAULTS }, cors: CORS_DEFAULTS };
  if (!isRecord(value)) fail(path, "must be an object");
  rejectUnknownKeys(value, path, GATEWAY_KEYS);
  return {
    sessions: parseSessionLimits(own(value, "sessions"), configPath(path, "sessions")),
    rateLimit: parseRateLimit(own(value, "rateLimit"), configPath(path, "rateLimit")),
    cors: parseCors(own(value, "cors"), configPath(path, "cors")),
  };
}

function parseCors(value: unknown, path: string): CorsSettings {
  if (value === undefined) return CORS_DEFAULTS;
  if (!isRecord(value)) fail(path, "must be an object");
  rejectUnknownKeys(value, path, CORS_KEYS);
  const maxAge = own(value, "maxAgeSeconds");
  const maxAgeSeconds = maxAge === undefined ? CORS_DEFAULTS.maxAgeSeconds : clampedNumber(maxAge, configPath(path, "maxAgeSeconds"), CORS_MAX_AGE);
  const origins = own(value, "allowedOrigins");
  const originsPath = configPath(path, "allowedOrigins");
  if (origins === undefined) return Object.freeze({ allowedOrigins: CORS_DEFAULTS.allowedOrigins, maxAgeSeconds });
  if (!Array.isArray(origins)) fail(originsPath, 'must be an array of origins ("https://app.example.com") or ["*"]');
  if (origins.length > MAX_CORS_ORIGINS) fail(originsPath, `must list at most ${MAX_CORS_ORIGINS} origins`);
  origins.forEach((origin, i) => {
    const at = `${originsPath}[${i}]`;
    if (typeof origin !== "string") fail(at, "must be a string");
    if (origin === "*") return;
    if (origin.includes("*"))
      fail(at, `must be an origin or "*" alone: wildcard hosts are not supported, list each origin (${JSON.stringify(origin)})`);
    if (!isOrigin(origin))
      fail(at, `must be an origin as a browser sends it (scheme://host[:port], no path or trailing slash): ${JSON.stringify(origin)}`);
  });
  return Object.freeze({ allowedOrigins: Object.freeze([...(origins as string[])]), maxAgeSeconds });
}

/** `https://app.example.com:8443`: what `new URL(x).origin` gives back unchanged (lowercase host, default port dropped). */
function isOrigin(value: string): boolean {
  if (!/^https?:\/\//.test(value)) return false;
  try {
    return new URL(value).origin === value;
  } catch {
    return false;
  }
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
