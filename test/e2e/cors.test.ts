import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ALLOWED_TEST_ORIGIN } from "../test-config";
import { sessionId, TOKEN_A } from "./helpers";

/** This project's config allows one browser origin (`gateway.cors.allowedOrigins`); the kit project's allows none (test/kit/cors-off.test.ts). */
const OTHER_ORIGIN = "https://evil.codemode.test";

function preflight(path: string, origin: string, method = "POST") {
  return SELF.fetch(`http://gateway${path}`, {
    method: "OPTIONS",
    headers: { origin, "access-control-request-method": method, "access-control-request-headers": "authorization, content-type" },
  });
}

function openTurn(origin: string, token: string | null = TOKEN_A) {
  const headers: Record<string, string> = { origin, "content-type": "application/json" };
  if (token) headers.authorization = `Bearer ${token}`;
  return SELF.fetch(`http://gateway/v1/sessions/${sessionId()}/turns`, { method: "POST", headers, body: "{}" });
}

describe("CORS (gateway.cors)", () => {
  it("a preflight from an allowed origin succeeds without a token and allows the headers a browser client sends", async () => {
    const res = await preflight(`/v1/sessions/${sessionId()}/turns`, ALLOWED_TEST_ORIGIN);
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe(ALLOWED_TEST_ORIGIN);
    const allowed = res.headers.get("access-control-allow-headers")!.split(/,\s*/);
    expect(allowed).toEqual(expect.arrayContaining(["authorization", "content-type", "mcp-session-id"]));
    expect(res.headers.get("access-control-allow-methods")).toContain("POST");
    expect(res.headers.get("access-control-allow-credentials")).toBeNull();
    expect(res.headers.get("vary")).toContain("origin");
  });

  it("a preflight of /mcp from an allowed origin is answered before authentication", async () => {
    const res = await preflight("/mcp", ALLOWED_TEST_ORIGIN);
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe(ALLOWED_TEST_ORIGIN);
  });

  it("an allowed origin's answers name it and expose x-request-id, retry-after and mcp-session-id", async () => {
    const res = await openTurn(ALLOWED_TEST_ORIGIN);
    expect(res.status).toBe(201);
    expect(res.headers.get("access-control-allow-origin")).toBe(ALLOWED_TEST_ORIGIN);
    const exposed = res.headers.get("access-control-expose-headers")!.split(/,\s*/);
    expect(exposed).toEqual(expect.arrayContaining(["x-request-id", "retry-after", "mcp-session-id"]));
    expect(res.headers.get("x-request-id")).toBeTruthy();
  });

  it("an allowed origin's error answers carry the headers too, so the browser can read the error", async () => {
    const res = await openTurn(ALLOWED_TEST_ORIGIN, null);
    expect(res.status).toBe(401);
    expect(res.headers.get("access-control-allow-origin")).toBe(ALLOWED_TEST_ORIGIN);
    expect(((await res.json()) as any).error.code).toBe("unauthorized");
  });

  it("a disallowed origin gets no CORS headers, and its preflight is not answered (no token: 401)", async () => {
    const res = await openTurn(OTHER_ORIGIN);
    expect(res.status).toBe(201);
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
    expect(res.headers.get("access-control-expose-headers")).toBeNull();
    const pre = await preflight(`/v1/sessions/${sessionId()}/turns`, OTHER_ORIGIN);
    expect(pre.status).toBe(401);
    expect(pre.headers.get("access-control-allow-origin")).toBeNull();
    expect(pre.headers.get("access-control-allow-headers")).toBeNull();
  });

  it("origins match exactly: another scheme, port or a suffix of the allowed host is not allowed", async () => {
    for (const origin of [
      ALLOWED_TEST_ORIGIN.replace("https:", "http:"),
      `${ALLOWED_TEST_ORIGIN}:8443`,
      ALLOWED_TEST_ORIGIN.replace("app.", "evilapp."),
    ]) {
      const res = await preflight(`/v1/sessions/${sessionId()}/turns`, origin);
      expect(res.headers.get("access-control-allow-origin"), origin).toBeNull();
    }
  });
});
