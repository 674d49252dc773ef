import { describe, expect, it } from "vitest";
import { ERROR_CODES, GatewayError, isRetryable, objectResetMessage, sessionResetMessage, statusOf, type ErrorCode } from "../../../src/errors";

describe("one error vocabulary", () => {
  it("every code answers with a 4xx or 5xx status (499: the caller cancelled)", () => {
    for (const code of Object.keys(ERROR_CODES) as ErrorCode[]) {
      const status = statusOf(code);
      expect(status >= 400 && status < 600, code).toBe(true);
    }
  });

  it("keeps the statuses of the HTTP contract", () => {
    expect(statusOf("invalid_request")).toBe(400);
    expect(statusOf("unauthorized")).toBe(401);
    expect(statusOf("not_found")).toBe(404);
    expect(statusOf("quota_exceeded")).toBe(409);
    expect(statusOf("rate_limited")).toBe(429);
    expect(statusOf("session_reset")).toBe(503);
    expect(statusOf("provider_timeout")).toBe(504);
  });

  it("a turn stopped by a provider outage, a reset, a cancel or a fault may be continued; a refusal may not", () => {
    for (const code of ["provider_rate_limited", "provider_unavailable", "provider_timeout", "aborted", "session_reset", "internal_error"] as const)
      expect(isRetryable(code), code).toBe(true);
    for (const code of ["invalid_request", "not_found", "conflict", "quota_exceeded", "provider_error", "surface_rejected"] as const)
      expect(isRetryable(code), code).toBe(false);
  });

  it("GatewayError renders the contract's body, with the path only when there is one", () => {
    expect(new GatewayError("invalid_request", "bad", "$.code").toJSON()).toEqual({
      error: { code: "invalid_request", message: "bad", path: "$.code" },
    });
    expect(new GatewayError("not_found", "unknown turn").toJSON()).toEqual({ error: { code: "not_found", message: "unknown turn" } });
    expect(new GatewayError("rate_limited", "slow down").status).toBe(429);
  });

  it("one wording for a reset session, whatever reports it", () => {
    expect(sessionResetMessage("during this call")).toBe("the session was reset during this call");
    expect(sessionResetMessage({ while: "exec" })).toBe("the session was reset while exec ran");
    expect(objectResetMessage("wait")).toBe("the session object was reset while this wait ran (the platform's CPU or memory limit, or a deploy)");
    expect(objectResetMessage()).toBe("the session object was reset (the platform's CPU or memory limit, or a deploy)");
  });
});
