import { env } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { api, exec, freshTurn } from "../e2e/helpers";

/** The kit's binding tools (test/kit/entry.ts, plugin kit-bindings) use the KIT_KV namespace through `ctx.env`. */
const kv = (env as unknown as { KIT_KV: KVNamespace }).KIT_KV;

describe("tools reach the Worker's bindings through ctx.env", () => {
  it("a cell writes and reads a KV namespace through plugin tools", async () => {
    const { session, turnId } = await freshTurn();
    const key = `cell-${session}`;
    const r = await exec(
      session,
      turnId,
      `await kit_kv_put({ key: ${JSON.stringify(key)}, value: "from a cell" }); return await kit_kv_get({ key: ${JSON.stringify(key)} })`,
    );
    expect(r).toMatchObject({ status: "completed", value: { key, value: "from a cell" } });
    // The write went to the Worker's namespace itself, not a copy.
    expect(await kv.get(key)).toBe("from a cell");
  });

  it("a tool reads what the Worker stored in the namespace", async () => {
    const { session, turnId } = await freshTurn();
    const key = `seeded-${session}`;
    await kv.put(key, "seeded by the test");
    expect((await exec(session, turnId, `return (await kit_kv_get({ key: ${JSON.stringify(key)} })).value`)).value).toBe("seeded by the test");
  });

  it("a tool the model calls directly (code mode off) gets the same env and waitUntil as one a cell calls", async () => {
    const { session, turnId } = await freshTurn({ agentId: "off" });
    const direct = await api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/kit_context_probe`, {});
    const expected = { env: "object", hasKv: true, waitUntil: "function", signal: true };
    expect(direct.json).toEqual({ status: "completed", value: expected });
    const cell = await freshTurn();
    expect((await exec(cell.session, cell.turnId, "return await kit_context_probe({})")).value).toEqual(expected);
  });

  it("a tool hands work to ctx.waitUntil and returns first; the work completes", async () => {
    const { session, turnId } = await freshTurn();
    const key = `later-${session}`;
    const r = await exec(session, turnId, `return await kit_kv_put_later({ key: "${key}", value: "written later" })`);
    expect(r.value).toEqual({ scheduled: key });
    await vi.waitFor(async () => expect(await kv.get(key)).toBe("written later"));
  });
});

describe("guest code cannot reach env", () => {
  it("env, bindings and secrets are no guest globals, and a tool's result is only what it returned", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(
      session,
      turnId,
      `const names = Object.getOwnPropertyNames(globalThis);
       const got = await kit_kv_get({ key: "absent-${session}" });
       return {
         env: typeof env,
         globalEnv: typeof globalThis.env,
         kv: typeof KIT_KV,
         tokens: typeof GATEWAY_TOKENS,
         names: names.filter((n) => /env|token|config|waituntil|^kit_kv$/i.test(n)),
         result: got,
         resultKeys: Object.keys(got),
       };`,
    );
    expect(r.status).toBe("completed");
    expect(r.value).toEqual({
      env: "undefined",
      globalEnv: "undefined",
      kv: "undefined",
      tokens: "undefined",
      names: [],
      result: { key: `absent-${session}`, value: null },
      resultKeys: ["key", "value"],
    });
    // Nothing of the Worker's env (the tokens secret, the config var) appears anywhere in the answer.
    const whole = JSON.stringify(r);
    expect(whole).not.toContain("test-token-a");
    expect(whole).not.toContain("CODEMODE_CONFIG");
  });
});
