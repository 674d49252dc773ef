import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, exec, freshTurn, openTurn, sessionId, TOKEN_B } from "./helpers";

describe("HTTP contract", () => {
  it("refuses /v1 without a token (401) and with a wrong token", async () => {
    const s = sessionId();
    expect((await api("POST", `/v1/sessions/${s}/turns`, {}, null)).status).toBe(401);
    const bad = await api("POST", `/v1/sessions/${s}/turns`, {}, "not-a-real-token");
    expect(bad.status).toBe(401);
    expect(bad.json.error.code).toBe("unauthorized");
  });

  it("another tenant gets 404 for a session's turn, and cannot run or delete it", async () => {
    const { session, turnId } = await freshTurn();
    const run = await api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/exec`, { code: "return 1" }, TOKEN_B);
    expect(run.status).toBe(404);
    expect((await api("DELETE", `/v1/sessions/${session}/turns/${turnId}`, undefined, TOKEN_B)).status).toBe(404);
    // Still there for its owner.
    expect((await exec(session, turnId, "return 2")).value).toBe(2);
  });

  it("unknown turn and unknown tool are 404", async () => {
    const { session, turnId } = await freshTurn();
    expect((await api("POST", `/v1/sessions/${session}/turns/00000000-0000-0000-0000-000000000000/tools/exec`, { code: "return 1" })).status).toBe(
      404,
    );
    const r = await api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/no_such_tool`, {});
    expect(r.status).toBe(404);
    expect(r.json.error.code).toBe("not_found");
    // A hidden (cataloged) tool is not model-visible in code mode.
    expect((await api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/shipping_list`, {})).status).toBe(404);
  });

  it("bad JSON bodies are 400 invalid_request", async () => {
    const s = sessionId();
    const r = await api("POST", `/v1/sessions/${s}/turns`, "{not json");
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ code: "invalid_request", path: "" });
    const turnId = await openTurn(s);
    const r2 = await api("POST", `/v1/sessions/${s}/turns/${turnId}/tools/exec`, "[1,");
    expect(r2.status).toBe(400);
  });

  it("turn body validation names the offending path", async () => {
    const s = sessionId();
    const r = await api("POST", `/v1/sessions/${s}/turns`, { allow: "shipping_list" });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ code: "invalid_request", path: "allow" });
    const r2 = await api("POST", `/v1/sessions/${s}/turns`, { clientTools: [{ name: "bad\u0007name" }] });
    expect(r2.json.error.path).toBe("clientTools[0].name");
    const r3 = await api("POST", `/v1/sessions/${s}/turns`, { surprise: 1 });
    expect(r3.json.error.path).toBe("surprise");
    const r4 = await api("POST", `/v1/sessions/bad%20id!/turns`, {});
    expect(r4.status).toBe(400);
  });

  it("bodies over 1 MiB are refused with 413", async () => {
    const s = sessionId();
    const turnId = await openTurn(s);
    const big = JSON.stringify({ code: "return 1 // " + "x".repeat(1024 * 1024) });
    const res = await SELF.fetch(`http://gateway/v1/sessions/${s}/turns/${turnId}/tools/exec`, {
      method: "POST",
      headers: { authorization: "Bearer test-token-a", "content-type": "application/json" },
      body: big,
    });
    expect(res.status).toBe(413);
    expect(((await res.json()) as any).error.code).toBe("payload_too_large");
  });

  it("opening a turn in code mode shows exactly exec and wait with the seed's flat schema", async () => {
    const s = sessionId();
    const r = await api("POST", `/v1/sessions/${s}/turns`, {});
    expect(r.status).toBe(201);
    expect(r.json.codeModeEngaged).toBe(true);
    expect(r.json.tools.map((t: any) => t.name)).toEqual(["exec", "wait"]);
    const execTool = r.json.tools[0];
    expect(Object.keys(execTool.parameters.properties)).toEqual(["code", "command", "language", "restartSafe"]);
    expect(execTool.parameters.properties.language).toMatchObject({ type: "string", enum: ["javascript", "typescript"] });
    expect(JSON.stringify(execTool.parameters)).not.toMatch(/oneOf|anyOf/);
    expect(execTool.description).toContain("shipping_list(input: {}) -> Array<{ id: string; paid: boolean; tons: number }>");
    expect(r.json.tools[1].parameters.required).toEqual(["runId"]);
    expect(r.json.telemetry).toMatchObject({ catalogSize: 5, catalogSources: { openclaw: 5, mcp: 0, client: 0 } });
  });

  it("code mode off lists the normal tools, and the tools route calls them directly", async () => {
    const s = sessionId();
    const r = await api("POST", `/v1/sessions/${s}/turns`, { agentId: "off" });
    expect(r.json.codeModeEngaged).toBe(false);
    expect(r.json.tools.map((t: any) => t.name)).toEqual(["shipping_list", "shipping_get", "notes_write", "notes_read", "echo"]);
    const direct = await api("POST", `/v1/sessions/${s}/turns/${r.json.turnId}/tools/shipping_get`, { id: "SH-1001" });
    expect(direct.json).toEqual({ status: "completed", value: { id: "SH-1001", paid: true, tons: 12.5 } });
    const failedCall = await api("POST", `/v1/sessions/${s}/turns/${r.json.turnId}/tools/shipping_get`, { id: "nope" });
    expect(failedCall.json).toEqual({ status: "failed", error: "shipment nope not found" });
    expect((await api("POST", `/v1/sessions/${s}/turns/${r.json.turnId}/tools/exec`, { code: "return 1" })).status).toBe(404);
  });

  it("disableTools and an empty allow list engage nothing", async () => {
    const s = sessionId();
    for (const body of [{ disableTools: true }, { allow: [] }]) {
      const r = await api("POST", `/v1/sessions/${s}/turns`, body);
      expect(r.json).toMatchObject({ codeModeEngaged: false, tools: [] });
    }
  });

  it("allow/deny policy decides the catalog; denied tools cannot be reached by name", async () => {
    const s = sessionId();
    const turnId = await openTurn(s, { deny: ["shipping_get"] });
    const r = await exec(s, turnId, "return [typeof shipping_get, typeof shipping_list, catalog.all().map((h) => h.toolName)]");
    expect(r.value).toEqual(["undefined", "function", ["shipping_list", "notes_write", "notes_read", "echo"]]);
    const r2 = await exec(s, turnId, "return (await catalog.search('shipping_get get one shipment by id', { limit: 50 })).map((h) => h.toolName)");
    expect(r2.value).not.toContain("shipping_get");
    expect(r2.value.length).toBeGreaterThan(0);
  });

  it("DELETE returns final telemetry and the turn is gone", async () => {
    const { session, turnId } = await freshTurn();
    await exec(session, turnId, "return await shipping_list({})");
    const del = await api("DELETE", `/v1/sessions/${session}/turns/${turnId}`);
    expect(del.status).toBe(200);
    expect(del.json.telemetry.counters.call).toBe(1);
    expect((await api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/exec`, { code: "return 1" })).status).toBe(404);
  });

  it("unknown routes are JSON 404s", async () => {
    const r = await api("GET", "/nope", undefined, null);
    expect(r.status).toBe(404);
    expect(r.json.error.code).toBe("not_found");
  });
});
