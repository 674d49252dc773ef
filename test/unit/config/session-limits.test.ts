import { describe, expect, it } from "vitest";
import { parseGatewayConfig, RATE_LIMIT_DEFAULTS, SESSION_LIMIT_DEFAULTS, type GatewayConfig } from "../../../src/config";

function operations(raw: unknown): GatewayConfig["operations"] {
  const result = parseGatewayConfig(raw);
  if (!result.ok) throw new Error(`unexpected config error at ${result.error.path}: ${result.error.message}`);
  return result.config.operations;
}

function rejection(raw: unknown): { message: string; path: string } {
  const result = parseGatewayConfig(raw);
  if (result.ok) throw new Error("expected the config to be rejected");
  return result.error;
}

describe("gateway.sessions and gateway.rateLimit", () => {
  it("defaults: turns idle a day, sessions a week, 256 turns, 64 MiB; rate limit on with Retry-After 60", () => {
    expect(operations({})).toEqual({
      sessions: { turnIdleSeconds: 86_400, sessionIdleSeconds: 604_800, maxTurnsPerSession: 256, maxStoredBytes: 67_108_864 },
      rateLimit: { enabled: true, retryAfterSeconds: 60 },
    });
    expect(operations({ gateway: {} })).toEqual({ sessions: SESSION_LIMIT_DEFAULTS, rateLimit: RATE_LIMIT_DEFAULTS });
  });

  it("takes the values given, floored and clamped to their ranges", () => {
    const o = operations({
      gateway: {
        sessions: { turnIdleSeconds: 3600.9, sessionIdleSeconds: 1, maxTurnsPerSession: 1e9, maxStoredBytes: 1024 },
        rateLimit: { enabled: false, retryAfterSeconds: 0 },
      },
    });
    expect(o.sessions).toEqual({ turnIdleSeconds: 3600, sessionIdleSeconds: 60, maxTurnsPerSession: 10_000, maxStoredBytes: 65_536 });
    expect(o.rateLimit).toEqual({ enabled: false, retryAfterSeconds: 1 });
    expect(operations({ gateway: { sessions: { maxStoredBytes: Infinity } } }).sessions.maxStoredBytes).toBe(1_073_741_824);
  });

  it.each([
    [{ gateway: 1 }, "gateway", "gateway must be an object"],
    [{ gateway: { sessions: [] } }, "gateway.sessions", "gateway.sessions must be an object"],
    [{ gateway: { sessions: { turnIdleSeconds: "1d" } } }, "gateway.sessions.turnIdleSeconds", "gateway.sessions.turnIdleSeconds must be a number"],
    [{ gateway: { sessions: { maxStoredBytes: NaN } } }, "gateway.sessions.maxStoredBytes", "gateway.sessions.maxStoredBytes must be a number"],
    [{ gateway: { rateLimit: { enabled: "yes" } } }, "gateway.rateLimit.enabled", "gateway.rateLimit.enabled must be true or false"],
    [
      { gateway: { rateLimit: { retryAfterSeconds: null } } },
      "gateway.rateLimit.retryAfterSeconds",
      "gateway.rateLimit.retryAfterSeconds must be a number",
    ],
  ])("refuses a bad type (%j) naming the key", (raw, path, message) => {
    expect(rejection(raw)).toEqual({ path, message });
  });

  it("refuses unknown keys inside gateway.sessions and gateway.rateLimit, naming them", () => {
    expect(rejection({ gateway: { sessions: { maxTurns: 5 } } })).toEqual({
      path: "gateway.sessions.maxTurns",
      message: "gateway.sessions.maxTurns is not a known session limit (turnIdleSeconds, sessionIdleSeconds, maxTurnsPerSession, maxStoredBytes)",
    });
    expect(rejection({ gateway: { rateLimit: { limit: 5 } } }).path).toBe("gateway.rateLimit.limit");
    expect(rejection({ gateway: { sessions: { constructor: 5 } } }).path).toBe("gateway.sessions.constructor");
  });

  it("refuses other gateway.* keys: a typo never silently keeps a default", () => {
    expect(rejection({ gateway: { port: 18789, sessions: { maxTurnsPerSession: 8 } } }).path).toBe("gateway.port");
    expect(rejection({ gateway: { session: { maxTurnsPerSession: 8 } } }).path).toBe("gateway.session");
  });
});
