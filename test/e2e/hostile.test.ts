import { describe, expect, it } from "vitest";
import { frozenClock } from "../../src/runtime/clock";
import { exec, expectHealthy, freshTurn, setClock } from "./helpers";

describe("hostile cells are contained and the session survives", () => {
  it("while(true){} times out on the real clock", async () => {
    const { session, turnId } = await freshTurn({ agentId: "fast" });
    const r = await exec(session, turnId, "while (true) {}");
    expect(r).toMatchObject({ status: "failed", code: "timeout" });
    expect(r.telemetry).toBeDefined();
    await expectHealthy(session, turnId);
  });

  it("while(true){} times out on a frozen clock (CPU budget)", async () => {
    const { session, turnId } = await freshTurn({ agentId: "fast" });
    await setClock(session, frozenClock());
    const r = await exec(session, turnId, "let i = 0; while (true) { i++ }");
    expect(r).toMatchObject({ status: "failed", code: "timeout" });
    await expectHealthy(session, turnId);
  });

  it("an arithmetic loop on a frozen clock is stopped too", async () => {
    const { session, turnId } = await freshTurn({ agentId: "fast" });
    await setClock(session, frozenClock());
    const r = await exec(session, turnId, "let x = 0; for (;;) { x = (x * 31 + 7) % 1000003; }");
    expect(r).toMatchObject({ status: "failed", code: "timeout" });
    await expectHealthy(session, turnId);
  });

  it("a memory bomb fails and the VM is discarded", async () => {
    const { session, turnId } = await freshTurn({ agentId: "tight" });
    const r = await exec(session, turnId, "const a = []; for (;;) a.push('x'.repeat(1024) + a.length);");
    expect(r.status).toBe("failed");
    expect(r.error).toMatch(/memoryLimitBytes/);
    await expectHealthy(session, turnId);
  });

  it("a guest try/catch cannot swallow out-of-memory", async () => {
    const { session, turnId } = await freshTurn({ agentId: "tight" });
    const r = await exec(session, turnId, "try { const a = []; for (;;) a.push(new Array(4096).fill(1)); } catch (e) { return 'caught'; }");
    expect(r.status).toBe("failed");
    await expectHealthy(session, turnId);
  });

  it("deep recursion fails the cell, not the object", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(session, turnId, "function f(n) { return f(n + 1) + 1; } return f(0);");
    expect(r.status).toBe("failed");
    expect(r.error).toMatch(/stack|recursion/i);
    await expectHealthy(session, turnId);
  });

  it("recursion caught by the guest is ordinary", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(session, turnId, "function f() { return f(); } try { f(); } catch (e) { return e instanceof RangeError || e instanceof InternalError; }");
    expect(r).toMatchObject({ status: "completed", value: true });
  });

  it("an output flood via text() in a loop stays bounded and successful", async () => {
    const { session, turnId } = await freshTurn({ agentId: "tight" });
    const r = await exec(session, turnId, "for (let i = 0; i < 200000; i++) text('line ' + i); return 'ok';");
    expect(r.status).toBe("completed");
    expect(r.value).toBe("ok");
    expect(JSON.stringify(r.output).length).toBeLessThanOrEqual(2048 + 512);
    const marker = r.output.at(-1);
    expect(marker.type).toBe("json");
    expect(marker.value.truncated).toBe(true);
    expect(marker.value.omittedBytes).toBeGreaterThan(1_000_000);
    await expectHealthy(session, turnId);
  });

  it("megabyte text()/json() floods are charged to the budget and stop as a timeout (not minutes of host work)", async () => {
    const { session, turnId } = await freshTurn({ agentId: "fast" });
    expect(await exec(session, turnId, "const s = 'x'.repeat(4 << 20); for (;;) text(s);")).toMatchObject({ status: "failed", code: "timeout" });
    expect(await exec(session, turnId, "const s = 'x'.repeat(1 << 20); for (;;) { try { json(s); } catch (e) {} }")).toMatchObject({ status: "failed", code: "timeout" });
    await expectHealthy(session, turnId);
  });

  it("stack-trace call sites do not hand out prelude functions; start is one-shot", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(
      session,
      turnId,
      "Error.prepareStackTrace = (e, cs) => cs; const st = new Error().stack; return [typeof st[0].getFunction, typeof st[0].getThis];",
    );
    expect(r.value).toEqual(["undefined", "undefined"]);
  });

  it("a 10 MB return value comes back as a bounded truncated marker", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(session, turnId, "return 'é'.repeat(5 * 1024 * 1024);");
    expect(r.status).toBe("completed");
    expect(r.value.truncated).toBe(true);
    expect(typeof r.value.prefix).toBe("string");
    expect(r.value.prefix.startsWith('"ééé')).toBe(true);
    expect(r.value.omittedBytes).toBeGreaterThan(10 * 1024 * 1024 - 70_000);
    expect(r.value.guidance).toMatch(/narrower/);
    expect(JSON.stringify(r.value).length).toBeLessThanOrEqual(65536 + 512);
    await expectHealthy(session, turnId);
  });

  it("large output and a large value share one budget: both bounded, still completed", async () => {
    const { session, turnId } = await freshTurn({ agentId: "tight" });
    const r = await exec(session, turnId, "text('o'.repeat(1500)); return 'v'.repeat(1500);");
    expect(r.status).toBe("completed");
    const total = JSON.stringify(r.output ?? []).length + JSON.stringify(r.value).length;
    expect(total).toBeLessThanOrEqual(2048 + 512);
    // Neither side fits whole next to the other.
    expect(JSON.stringify(r)).not.toContain("o".repeat(1500));
    expect(r.value).toMatchObject({ truncated: true, prefix: expect.stringMatching(/^"vvv/) });
    await expectHealthy(session, turnId);
  });

  it("an oversized error stays failed and ends with [error truncated]", async () => {
    const { session, turnId } = await freshTurn({ agentId: "tight" });
    const r = await exec(session, turnId, "throw new Error('root cause: ' + 'x'.repeat(100000));");
    expect(r.status).toBe("failed");
    expect(r.error.startsWith("Error: root cause: xxx")).toBe(true);
    expect(r.error.endsWith("[error truncated]")).toBe(true);
    expect(r.error.length).toBeLessThan(2048);
    await expectHealthy(session, turnId);
  });

  it("constructor.constructor('return this')() finds only the guest global, no host globals", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(
      session,
      turnId,
      `const g = ({}).constructor.constructor('return this')();
       const names = ['fetch','process','require','Deno','Bun','WebAssembly','caches','crypto','navigator','Request','Response','importScripts','module','exports','global','self','scheduler','std','os'];
       return { same: g === globalThis, present: names.filter((n) => typeof g[n] !== 'undefined') };`,
    );
    expect(r).toMatchObject({ status: "completed", value: { same: true, present: [] } });
  });

  it("a Proxy or getter-laden return value runs no host-side traps and does not crash", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(
      session,
      turnId,
      `const p = new Proxy({}, { get() { throw new Error('trap'); }, ownKeys() { throw new Error('keys'); } });
       return p;`,
    );
    expect(r.status).toBe("failed");
    expect(r.error).toMatch(/trap|keys/);
    const r2 = await exec(session, turnId, "return { get x() { return 41 + 1; }, toJSON() { return { y: 1 }; } };");
    expect(r2).toMatchObject({ status: "completed", value: { y: 1 } });
    const r3 = await exec(session, turnId, "return { get x() { while (true) {} } };", { });
    expect(r3.status).toBe("failed");
    expect(r3.code).toBe("timeout");
    await expectHealthy(session, turnId);
  });

  it("a cyclic value is output_limit_exceeded", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(session, turnId, "const a = {}; a.self = a; return a;");
    expect(r).toMatchObject({ status: "failed", code: "output_limit_exceeded" });
    await expectHealthy(session, turnId);
  });

  it("import(), require and import declarations are rejected before execution", async () => {
    const { session, turnId } = await freshTurn();
    for (const code of ["return await import('x')", "const fs = require('fs'); return 1", "import fs from 'fs'; return 1"]) {
      const r = await exec(session, turnId, code);
      expect(r).toMatchObject({ status: "failed", code: "invalid_input" });
      expect(r.telemetry.counters.call).toBe(0);
    }
    // Obfuscated dynamic import still has no module loader.
    const r = await exec(session, turnId, "return await eval('imp' + 'ort(\"fs\")')");
    expect(r.status).toBe("failed");
    expect(r.error).not.toMatch(/Host callback|bridge/);
    await expectHealthy(session, turnId);
  });

  it("shell commands get actionable invalid_input guidance", async () => {
    const { session, turnId } = await freshTurn();
    for (const code of ["ls -la", "git status", "npm test", "cat file | grep x"]) {
      const r = await exec(session, turnId, code);
      expect(r).toMatchObject({ status: "failed", code: "invalid_input" });
      expect(r.error).toMatch(/JavaScript/);
    }
    const viaCommand = await exec(session, turnId, "", { code: undefined, command: "git status" });
    expect(viaCommand).toMatchObject({ status: "failed", code: "invalid_input" });
    await expectHealthy(session, turnId);
  });

  it("an unawaited failing call fails the cell", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(session, turnId, "shipping_get({ id: 'nope' }); return 'looks fine';");
    expect(r.status).toBe("failed");
    expect(r.error).toMatch(/Unhandled promise rejection.*shipment nope not found/);
    await expectHealthy(session, turnId);
  });

  it("a throwing timer callback fails the cell", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(session, turnId, "setTimeout(() => { throw new Error('boom'); }, 1); return 'looks fine';");
    expect(r.status).toBe("failed");
    expect(r.error).toMatch(/timer callback: Error: boom/);
    await expectHealthy(session, turnId);
  });

  it("a promise that nothing will settle fails instead of hanging", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(session, turnId, "await new Promise(() => {}); return 1;");
    expect(r.status).toBe("failed");
    expect(r.error).toMatch(/nothing will settle/);
    await expectHealthy(session, turnId);
  });
});

describe("guest cannot reach host internals", () => {
  it("the control object is not a guest global; guessed ids are nothing; timers are capped", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(
      session,
      turnId,
      `const timers = []; let err;
       try { for (let i = 0; i < 2000; i++) timers.push(setTimeout(() => {}, 1e9)); } catch (e) { err = e.name + ': ' + e.message; }
       timers.forEach(clearTimeout);
       return { control: typeof __codemode, host: typeof __cm_host, id: typeof globalThis['t' + '0'.repeat(16)],
                names: Object.getOwnPropertyNames(globalThis).filter((n) => n.startsWith('__')), err, live: timers.length };`,
    );
    expect(r.value).toEqual({ control: "undefined", host: "undefined", id: "undefined", names: [], err: expect.stringMatching(/^RangeError: too many pending timers \(limit 1000\)/), live: 1000 });
    await expectHealthy(session, turnId);
  });

  it("MCP, namespaces and API exist and are empty until MCP servers are attached", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(
      session,
      turnId,
      "let err; try { await API.read('mcp/github.d.ts'); } catch (e) { err = e.message; } return { mcp: Object.keys(MCP), ns: Object.keys(namespaces), files: await API.list('mcp'), err };",
    );
    expect(r.value).toEqual({ mcp: [], ns: [], files: [], err: expect.stringMatching(/unknown API file/) });
  });
});
