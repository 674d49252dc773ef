import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, exec, freshTurn, openTurn, sessionId, sessionProbe, sleep, wait } from "../e2e/helpers";
import worker from "./entry";

describe("catalog rules through an embedding with core, bundled and external plugins", () => {
  it("sources are ordered core, bundled, external, client; control names never cataloged; direct-only stays visible", async () => {
    const s = sessionId();
    // (Client tools named like control tools are refused at turn open: test/e2e/client-tools.test.ts.)
    const r = await api("POST", `/v1/sessions/${s}/turns`, { clientTools: [{ name: "ask_user" }] });
    expect(r.json.tools.map((t: any) => t.name)).toEqual(["exec", "wait", "kit_screen"]);
    const all = await exec(s, r.json.turnId, "return catalog.all().map((h) => [h.toolName, h.source])");
    expect(all.value).toEqual([
      ["read", "openclaw"],
      ["exec", "openclaw"],
      ["shipping_list", "openclaw"],
      ["shipping_get", "openclaw"],
      ["notes_write", "openclaw"],
      ["notes_read", "openclaw"],
      ["echo", "openclaw"],
      ["kit_bad_output", "openclaw"],
      ["kit_invalid_schema", "openclaw"],
      ["delete", "openclaw"],
      ["kit_fetch", "openclaw"],
      ["kit_transfer", "openclaw"],
      ["kit_hook_log", "openclaw"],
      ["kit_kv_put", "openclaw"],
      ["kit_kv_get", "openclaw"],
      ["kit_kv_put_later", "openclaw"],
      ["kit_context_probe", "openclaw"],
      ["issues_list", "openclaw"],
      ["issues_get", "openclaw"],
      ["issues_close", "openclaw"],
      ["ask_user", "client"],
    ]);
  });

  it("a direct-only tool is called through the tools route in code mode, and is not a guest global", async () => {
    const { session, turnId } = await freshTurn();
    const direct = await api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/kit_screen`, {});
    expect(direct.json).toEqual({ status: "completed", value: { image: "data:image/png;base64,AAAA" } });
    expect((await exec(session, turnId, "return [typeof kit_screen, (await catalog.search('capture the screen')).length]")).value).toEqual([
      "undefined",
      0,
    ]);
  });

  it("the shell-style exec tool is the guest global exec(...); the code-mode exec is not reachable", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(session, turnId, "return await exec({ command: 'ls -la' })");
    expect(r).toMatchObject({ status: "completed", value: { ran: "ls -la", exitCode: 0 } });
  });

  it("a suffixed callable name is computed once and still works after a park/resume", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(
      session,
      turnId,
      `const h = catalog.all().find((x) => x.toolName === 'delete');
       globalThis.before = h.callableName;
       await yield_control();
       const again = catalog.all().find((x) => x.toolName === 'delete');
       return { same: again.callableName === globalThis.before, name: again.callableName, viaGlobal: await globalThis[again.callableName]({ id: 'x1' }) };`,
    );
    expect(r.status).toBe("waiting");
    const w = await wait(session, turnId, r.runId);
    expect(w.value).toMatchObject({ same: true, viaGlobal: { deleted: "x1" } });
    expect(w.value.name).toMatch(/^delete_[0-9a-f]{4,}$/);
  });

  it("a client tool shadows a plugin tool of the same exact name", async () => {
    const { session, turnId } = await freshTurn({ clientTools: [{ name: "shipping_list", description: "client's own list" }] });
    const r = await exec(session, turnId, "return await shipping_list({})");
    expect(r).toMatchObject({ status: "waiting", pendingToolCalls: [{ tool: "shipping_list" }] });
  });

  it("an output contract mismatch fails the call without printing the value", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(session, turnId, "try { await kit_bad_output({}); } catch (e) { return e.message; }");
    expect(r.value).toMatch(/kit_bad_output result does not match its declared outputSchema/);
    expect(JSON.stringify(r)).not.toMatch(/hunter2|"id":42|: ?42\b/);
  });

  it("a tool with an invalid output schema cannot run", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(session, turnId, "try { await kit_invalid_schema({}); return 'ran'; } catch (e) { return e.message; }");
    expect(r.value).toMatch(/invalid outputSchema; it cannot run/);
    // Its execute() would have left a mark in session storage.
    expect(await sessionProbe(session).storageGet("tool:kit_invalid_schema_ran")).toBeUndefined();
  });

  it("the quick index shows trusted output hints, bounds comments, and -> ? for unknown outputs", async () => {
    const s = sessionId();
    const r = await api("POST", `/v1/sessions/${s}/turns`, {});
    const description: string = r.json.tools[0].description;
    expect(description).toContain("read(input: { path: string; offset?: number /* integer, >= 1 */ }) -> ?");
    expect(description).toContain("shipping_get(input: { id: string }) -> { id: string; paid: boolean; tons: number }");
    expect(description).toContain("kit_bad_output(input: {}) -> { id: string }");
    expect(description).toContain("echo(input: { value?: unknown; delayMs?: number /* integer, >= 0, <= 600000 */ }) -> ?");
    expect(description).not.toContain("kit_screen(");
    expect(description).not.toMatch(/\bt[0-9a-f]{16}\b/);
  });
});

describe("gateway configuration and cancellation at the Worker", () => {
  const ctx = { waitUntil() {}, passThroughOnException() {}, props: {} } as unknown as ExecutionContext;

  it("an invalid CODEMODE_CONFIG is refused on /healthz and /v1 with the offending key", async () => {
    const bad = { ...(env as any), CODEMODE_CONFIG: JSON.stringify({ tools: { codeMode: { timeoutMs: "fast" } } }) };
    const health = await worker.fetch(new Request("http://gateway/healthz"), bad, ctx);
    expect(health.status).toBe(500);
    expect(await health.json()).toMatchObject({ error: { code: "invalid_config", path: "tools.codeMode.timeoutMs" } });
    const v1 = await worker.fetch(
      new Request(`http://gateway/v1/sessions/${sessionId()}/turns`, {
        method: "POST",
        headers: { authorization: "Bearer test-token-a" },
        body: "{}",
      }),
      bad,
      ctx,
    );
    expect(v1.status).toBe(500);
    expect(await v1.json()).toMatchObject({ error: { code: "invalid_config", path: "tools.codeMode.timeoutMs" } });
    const notJson = await worker.fetch(new Request("http://gateway/healthz"), { ...(env as any), CODEMODE_CONFIG: "{nope" }, ctx);
    expect(await notJson.json()).toMatchObject({ error: { code: "invalid_config", path: "CODEMODE_CONFIG" } });
  });

  it("with no token configured every /v1 request is refused with 401", async () => {
    const none = { ...(env as any), GATEWAY_TOKENS: undefined };
    const r = await worker.fetch(new Request(`http://gateway/v1/sessions/${sessionId()}/turns`, { method: "POST", body: "{}" }), none, ctx);
    expect(r.status).toBe(401);
  });

  it("a request whose client disconnects cancels its exec (request.signal → cancelRequest)", async () => {
    const s = sessionId();
    const turnId = await openTurn(s);
    const controller = new AbortController();
    const req = new Request(`http://gateway/v1/sessions/${s}/turns/${turnId}/tools/exec`, {
      method: "POST",
      headers: { authorization: "Bearer test-token-a", "content-type": "application/json" },
      body: JSON.stringify({ code: "await echo({ value: 1, delayMs: 800 }); await notes_write({ key: 'after-abort', text: 'x' }); return 1;" }),
      signal: controller.signal,
    });
    const pending = worker.fetch(req, env as any, ctx);
    await sleep(150);
    controller.abort();
    const res = await pending;
    expect(await res.json()).toMatchObject({ status: "failed", code: "aborted" });
    await sleep(900);
    expect((await exec(s, turnId, "return await notes_read({ key: 'after-abort' })")).value).toEqual([]);
  });
});
