import { describe, expect, it } from "vitest";
import { api, exec, freshTurn } from "./helpers";

async function run(body: unknown, agentId?: string) {
  const { session, turnId } = await freshTurn(agentId ? { agentId } : {});
  const r = await api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/exec`, body);
  expect(r.status).toBe(200);
  return r.json;
}

// Seed 002 (exec input).
describe("exec input rules", () => {
  it("command is an alias of code", async () => {
    expect(await run({ command: "return 40 + 2" })).toMatchObject({ status: "completed", value: 42 });
  });

  it("blank aliases count as absent", async () => {
    expect(await run({ code: "   ", command: "return 5" })).toMatchObject({ status: "completed", value: 5 });
    expect(await run({ code: "return 6", command: "" })).toMatchObject({ status: "completed", value: 6 });
  });

  it("both blank or missing is invalid_input", async () => {
    for (const body of [{}, { code: "" }, { code: " ", command: "\n" }, { language: "javascript" }]) {
      expect(await run(body)).toMatchObject({ status: "failed", code: "invalid_input" });
    }
  });

  it("two non-empty aliases must match", async () => {
    expect(await run({ code: "return 1", command: "return 1" })).toMatchObject({ status: "completed", value: 1 });
    const r = await run({ code: "return 1", command: "return 2" });
    expect(r).toMatchObject({ status: "failed", code: "invalid_input" });
    expect(r.error).toMatch(/must match/);
  });

  it("a populated alias that is not a string invalidates both (fail closed)", async () => {
    for (const body of [{ code: "return 1", command: 5 }, { code: ["return 1"] }, { command: { x: 1 }, code: "return 1" }]) {
      expect(await run(body)).toMatchObject({ status: "failed", code: "invalid_input" });
    }
  });

  it("language defaults to javascript and must be one of the enum", async () => {
    expect(await run({ code: "return typeof 1" })).toMatchObject({ status: "completed", value: "number" });
    expect(await run({ code: "return 1", language: "python" })).toMatchObject({ status: "failed", code: "invalid_input" });
  });

  it("a language not enabled in config is rejected", async () => {
    const r = await run({ code: "return 1", language: "typescript" }, "jsonly");
    expect(r).toMatchObject({ status: "failed", code: "invalid_input" });
    expect(r.error).toMatch(/not enabled/);
  });

  it("unknown fields and a non-boolean restartSafe are invalid_input", async () => {
    expect(await run({ code: "return 1", timeout: 5 })).toMatchObject({ status: "failed", code: "invalid_input" });
    expect(await run({ code: "return 1", restartSafe: "yes" })).toMatchObject({ status: "failed", code: "invalid_input" });
  });

  it("restartSafe cells may call only replay-safe tools", async () => {
    const ok = await run({ code: "return (await shipping_list({})).length", restartSafe: true });
    expect(ok).toMatchObject({ status: "completed", value: 6 });
    const denied = await run({ code: "return await notes_write({ key: 'k', text: 't' })", restartSafe: true });
    expect(denied.status).toBe("failed");
    expect(denied.error).toMatch(/not replay-safe/);
  });

  it("a JavaScript syntax error is a failed result with the parser's message", async () => {
    const r = await run({ code: "return (1 +" });
    expect(r).toMatchObject({ status: "failed", code: "invalid_input" });
    expect(r.error).toMatch(/SyntaxError/);
  });

  it("a thrown error is a failed result without host stack or internal ids", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(session, turnId, "await shipping_get({ id: 'missing' })");
    expect(r.status).toBe("failed");
    expect(r.error).toBe("Error: shipment missing not found");
    expect(r.code).toBeUndefined();
    expect(JSON.stringify(r)).not.toMatch(/\bt[0-9a-f]{16}\b|at .*\.ts:|node_modules|durable-objects/);
  });
});
