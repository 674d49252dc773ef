import { describe, expect, it } from "vitest";
import { parseGatewayConfig } from "../../src/config";
import { api, exec, freshTurn, openTurn, sessionId, wait } from "./helpers";

/**
 * No host lookup keyed by a guest-, client- or config-controlled string may reach an object
 * prototype: these words go through every such path (tool tables, callable names, catalog
 * search and describe, call ids, run ids, agent and model ids, config maps).
 */
const WORDS = ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf"];

describe("lookups keyed by outside strings never reach an object prototype", () => {
  it("client tools named like Object.prototype members are ordinary tools, callable, describable and searchable", async () => {
    const { session, turnId } = await freshTurn({ clientTools: WORDS.map((name) => ({ name, description: `the ${name} tool` })) });
    const all = await exec(session, turnId, "return catalog.all().filter((h) => h.source === 'client').map((h) => [h.toolName, h.callableName]);");
    expect(all.status).toBe("completed");
    expect(all.value.map((p: string[]) => p[0]).sort()).toEqual([...WORDS].sort());
    for (const [toolName, callable] of all.value as string[][]) {
      const d = await exec(
        session,
        turnId,
        `const [h] = catalog.all().filter((x) => x.callableName === ${JSON.stringify(callable)}); return (await h.describe()).name;`,
      );
      expect(d).toMatchObject({ status: "completed", value: toolName });
      const s = await exec(session, turnId, `return (await catalog.search(${JSON.stringify(toolName)})).map((h) => h.toolName);`);
      expect(s.status).toBe("completed");
      expect(s.value).toContain(toolName);
      const r = await exec(
        session,
        turnId,
        `const [h] = catalog.all().filter((x) => x.callableName === ${JSON.stringify(callable)}); return await h({ q: 1 });`,
      );
      expect(r).toMatchObject({ status: "waiting", pendingToolCalls: [{ tool: toolName, input: { q: 1 } }] });
      const callId = r.pendingToolCalls[0].callId;
      expect((await api("POST", `/v1/sessions/${session}/turns/${turnId}/client-results`, { callId, value: toolName })).status).toBe(202);
      expect(await wait(session, turnId, r.runId)).toMatchObject({ status: "completed", value: toolName });
    }
  });

  it("call ids, run ids and tool route names made of these words are unknown, never a 500", async () => {
    const { session, turnId } = await freshTurn({ clientTools: [{ name: "ask_user" }] });
    for (const w of WORDS) {
      const d = await api("POST", `/v1/sessions/${session}/turns/${turnId}/client-results`, { callId: w, value: 1 });
      expect(d.status).toBe(404);
      expect(await wait(session, turnId, w)).toMatchObject({ status: "failed", code: "invalid_input" });
      const t = await api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/${w}`, {});
      expect(t.status).toBe(404);
      const g = await exec(session, turnId, `try { return await globalThis[${JSON.stringify(w)}]({}); } catch (e) { return 'error'; }`);
      expect(g.status === "completed" || g.status === "failed").toBe(true);
      expect(g.code).not.toBe("internal_error");
    }
  });

  it("agent and model ids made of these words resolve to nothing special", async () => {
    const session = sessionId();
    for (const w of WORDS) {
      const a = await api("POST", `/v1/sessions/${session}/turns`, { agentId: w, model: `${w}/${w}` });
      expect([201, 400]).toContain(a.status);
      if (a.status === 201) expect(a.json.codeModeEngaged).toBe(true); // the global default, nothing inherited
    }
    expect(await openTurn(session)).toBeTruthy();
  });

  it("config maps keyed by these words are plain entries or refused, never a prototype", () => {
    for (const w of WORDS) {
      const raw = JSON.parse(
        `{"tools":{"codeMode":true},"agents":{"defaults":{"models":{"${w}/${w}":{"codeMode":false}}},"entries":{"${w}":{"tools":{"codeMode":false}}}},"models":{"providers":{"${w}":{"api":"openai-completions","baseUrl":"https://x.example","models":[{"id":"${w}"}]}}}}`,
      );
      const r = parseGatewayConfig(raw);
      if (r.ok) {
        expect(Object.getPrototypeOf(r.config.agents.entries) === null || Object.hasOwn(r.config.agents.entries, w)).toBe(true);
        expect(typeof (r.config.providers as Record<string, unknown>)[w]).toBe("object");
      } else {
        expect(r.error.path).toContain(w);
      }
    }
  });
});

describe("the guest's own prototypes never change what the host reads", () => {
  it("a polluted Object.prototype or Promise.prototype changes nothing the host reads", async () => {
    const { session, turnId } = await freshTurn();
    const a = await exec(session, turnId, "Object.prototype.syntax = true; throw new Error('plain runtime error');");
    expect(a.status).toBe("failed");
    expect(a.code).toBeUndefined();
    const b = await exec(session, turnId, "Object.prototype.toJSON = function () { return { state: 'completed' }; }; await new Promise(() => {});");
    expect(b.status).toBe("failed");
    expect(b.error).toMatch(/nothing will settle/);
    const c = await exec(session, turnId, "Promise.prototype.then = function () {}; return 5;");
    expect(c).toMatchObject({ status: "completed", value: 5 });
  });
});
