import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { sessionId } from "../e2e/helpers";

/** The kit project's config has no `gateway.cors`: CORS is off, whatever the origin. */
describe("CORS off by default", () => {
  it("no origin gets CORS headers, and a preflight goes on to authentication (401 without a token)", async () => {
    const origin = "https://app.codemode.test";
    const res = await SELF.fetch(`http://gateway/v1/sessions/${sessionId()}/turns`, {
      method: "POST",
      headers: { origin, authorization: "Bearer test-token-a", "content-type": "application/json" },
      body: "{}",
    });
    expect(res.status).toBe(201);
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
    expect(res.headers.get("access-control-expose-headers")).toBeNull();
    const pre = await SELF.fetch(`http://gateway/v1/sessions/${sessionId()}/turns`, {
      method: "OPTIONS",
      headers: { origin, "access-control-request-method": "POST" },
    });
    expect(pre.status).toBe(401);
    expect(pre.headers.get("access-control-allow-origin")).toBeNull();
  });
});
