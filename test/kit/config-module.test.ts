import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, exec, sessionId } from "../e2e/helpers";
import { createGateway } from "../../src/gateway";
import worker from "./entry";

const ctx = { waitUntil() {}, passThroughOnException() {}, props: {} } as unknown as ExecutionContext;

async function health(vars: Record<string, unknown> = {}) {
  const r = await worker.fetch(new Request("http://gateway/healthz"), { ...(env as any), ...vars }, ctx);
  return { status: r.status, json: (await r.json()) as any };
}

describe("the config module an embedding passes to createGateway, under CODEMODE_CONFIG", () => {
  it("the module's agents apply, and the var's agents apply beside them (the var is laid over the module)", async () => {
    const s = sessionId();
    const moduleOff = await api("POST", `/v1/sessions/${s}/turns`, { agentId: "module-off" });
    expect(moduleOff.status).toBe(201);
    expect(moduleOff.json.codeModeEngaged).toBe(false);
    // `off` is an agent of the test project's CODEMODE_CONFIG (test/test-config.ts).
    expect((await api("POST", `/v1/sessions/${s}/turns`, { agentId: "off" })).json.codeModeEngaged).toBe(false);
    const tight = await api("POST", `/v1/sessions/${s}/turns`, { agentId: "module-tight" });
    expect(tight.json.codeModeEngaged).toBe(true);
    const big = await exec(s, tight.json.turnId, "return 'x'.repeat(5000)");
    // The module's maxOutputBytes (1024; the default is 65536) cut the 5000-byte result.
    expect(big).toMatchObject({ status: "completed", value: { truncated: true } });
  });

  it("/healthz shows code mode's activation for the default agent and model, and a snippet keeps it on", async () => {
    expect((await health()).json).toMatchObject({ ok: true, codeMode: { enabled: true, engagedForDefault: true, source: "global" } });
    const snippet = await health({ CODEMODE_CONFIG: '{"tools":{"toolSearch":true}}' });
    expect(snippet.json.codeMode).toEqual({ enabled: true, engagedForDefault: true, source: "global" });
  });

  it('an explicit "codeMode": false (JSONC) turns it off, and /healthz says so', async () => {
    const off = await health({ CODEMODE_CONFIG: '{ "tools": { "codeMode": false, }, } // opt out' });
    expect(off.json).toMatchObject({ ok: true, codeMode: { enabled: false, engagedForDefault: false, source: "global" } });
    const auto = await health({ CODEMODE_CONFIG: '{"tools":{"codeMode":"auto"}}' });
    expect(auto.json.codeMode).toEqual({ enabled: "auto", engagedForDefault: false, source: "global" });
  });

  it("a broken CODEMODE_CONFIG names its line and column on /healthz", async () => {
    const broken = await health({ CODEMODE_CONFIG: '{\n  "tools": { "codeMode": true }\n  "mcp": {}\n}' });
    expect(broken.status).toBe(500);
    expect(broken.json.error).toMatchObject({
      code: "invalid_config",
      path: "CODEMODE_CONFIG",
      message: "invalid CODEMODE_CONFIG: CODEMODE_CONFIG is not valid JSON: expected , or } at line 3, column 3",
    });
  });

  it("an invalid config module fails the Worker at start-up, naming the key", () => {
    expect(() => createGateway({ plugins: [], config: { tools: { codeMode: { timeoutMs: "fast" as never } } } })).toThrow(
      "invalid config module (createGateway config): tools.codeMode.timeoutMs must be a number",
    );
  });
});
