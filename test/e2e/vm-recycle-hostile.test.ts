import { afterEach, beforeEach, describe, expect, inject, it, vi } from "vitest";
import { GuestVm } from "../../src/runtime";
import { exec, openTurn, sessionId, sleep, TOKEN_A, TOKEN_B, wait } from "./helpers";
import { expectOnlyIdleHeld, testVmPool } from "./session-controls";

// A cell's VM instance is reset to the pristine image in place and handed to the next cell, of any
// session or tenant of the isolate. Tenant A's cells try to leave something behind in that instance
// (state, callbacks, bytes, late host results); tenant B's cells, run in the very same instance, look
// for it. A faulted or grown instance is never handed out again, and the ledger ends holding only the spares.

/** The wasm instance each bound cell VM runs in, in binding order (GuestVm's private `vm`). */
let bound: object[] = [];

beforeEach(() => {
  bound = [];
  const original = GuestVm.prototype.bind;
  vi.spyOn(GuestVm.prototype, "bind").mockImplementation(function (this: GuestVm, ...args: Parameters<GuestVm["bind"]>) {
    bound.push((this as unknown as { vm: object }).vm);
    return original.apply(this, args);
  });
});

afterEach(() => {
  vi.restoreAllMocks();
});

async function turn(token: string, agentId?: string): Promise<{ session: string; turnId: string; token: string }> {
  const session = sessionId();
  return { session, turnId: await openTurn(session, agentId ? { agentId } : {}, token), token };
}

const run = (t: { session: string; turnId: string; token: string }, code: string) => exec(t.session, t.turnId, code, {}, t.token);

/**
 * Run `probe` in tenant B's session until one of its cells runs in `instance` (tenant A's), at most
 * a few times (the pool holds up to two spares): every probe's result goes to `check`.
 */
async function probeIn(instance: object, probe: string, check: (result: any) => void): Promise<void> {
  const b = await turn(TOKEN_B);
  for (let i = 0; i < 4; i++) {
    const before = bound.length;
    const r = await run(b, probe);
    check(r);
    if (bound.slice(before).includes(instance)) return;
  }
  throw new Error("no probe cell ran in the earlier cell's instance");
}

describe("a recycled VM instance gives the next tenant nothing of the last one", () => {
  it("state, symbols, callbacks and error hooks left by tenant A are absent in tenant B's cell in the same instance", async () => {
    const a = await turn(TOKEN_A);
    const leave = `
      globalThis.secretA = 'A-SECRET';
      globalThis[Symbol.for('a.key')] = 'A-SECRET';
      Object.defineProperty(Object.prototype, 'leak', { get() { return 'A-SECRET'; }, configurable: true });
      Error.prepareStackTrace = () => 'A-SECRET';
      const registry = new FinalizationRegistry((held) => console.log('finalized ' + held));
      (function () { for (let i = 0; i < 200; i++) registry.register({ i }, 'A-SECRET-' + i); })();
      globalThis.keep = registry;
      globalThis.ref = new WeakRef({ v: 'A-SECRET' });
      new Promise(() => {}).then(() => console.log('A-SECRET then'));
      Promise.reject(new Error('A-SECRET rejection')).catch(() => {});
      return 'left';`;
    expect(await run(a, leave)).toMatchObject({ status: "completed", value: "left" });
    const instance = bound.at(-1)!;
    const probe = `
      let junk = 0; for (let i = 0; i < 20000; i++) junk += [i, { i }].length;
      let stack = ''; try { null.x; } catch (e) { stack = String(e.stack); }
      return { secret: typeof secretA, sym: globalThis[Symbol.for('a.key')] ?? null, leak: ({}).leak ?? null,
        hook: typeof Error.prepareStackTrace, stackHasSecret: stack.includes('A-SECRET'), keep: typeof keep, ref: typeof ref, junk };`;
    await probeIn(instance, probe, (r) => {
      expect(r).toMatchObject({
        status: "completed",
        value: { secret: "undefined", sym: null, leak: null, hook: "undefined", stackHasSecret: false, keep: "undefined", ref: "undefined" },
      });
      expect(JSON.stringify(r)).not.toContain("A-SECRET");
    });
  });

  it("an instance tenant A grew past the image is never handed out again; tenant B's fresh buffers are zero", async () => {
    const a = await turn(TOKEN_A);
    // ~2 MiB of marker bytes and strings: the VM grows past the image. A grown instance would change
    // what the next cell's snapshot weighs (maxSnapshotBytes counts the raw memory), so it is dropped.
    const leave = `
      globalThis.bufs = []; for (let i = 0; i < 8; i++) bufs.push(new Uint8Array(200 * 1024).fill(0xa5));
      globalThis.strs = []; for (let i = 0; i < 2000; i++) strs.push('A-SECRET-' + i + '-'.repeat(64));
      bufs.length = 0; strs.length = 0; return 'grown';`;
    expect(await run(a, leave)).toMatchObject({ status: "completed", value: "grown" });
    const instance = bound.at(-1)!;
    const probe = `
      const nonZero = (u8) => u8.some((b) => b !== 0);
      const plain = new Uint8Array(new ArrayBuffer(3 * 1024 * 1024));
      const typed = new Float64Array(256 * 1024);
      const growable = new ArrayBuffer(16, { maxByteLength: 2 * 1024 * 1024 }); growable.resize(2 * 1024 * 1024);
      const moved = new ArrayBuffer(8).transfer(1024 * 1024);
      const holes = new Array(100000); const padded = ''.padEnd(100000);
      return { plain: nonZero(plain), typed: nonZero(new Uint8Array(typed.buffer)), growable: nonZero(new Uint8Array(growable)),
        moved: nonZero(new Uint8Array(moved)), holes: holes.some((x) => x !== undefined), padded: padded.trim().length };`;
    const b = await turn(TOKEN_B);
    const from = bound.length;
    for (let i = 0; i < 4; i++) {
      expect(await run(b, probe)).toMatchObject({
        status: "completed",
        value: { plain: false, typed: false, growable: false, moved: false, holes: false, padded: 0 },
      });
    }
    expect(bound.slice(from)).not.toContain(instance);
  });

  it("a host result for tenant A's ended cell never reaches tenant B's cell in the same instance (same call id)", async () => {
    const a = await turn(TOKEN_A);
    // Call id 1 is still running when the cell fails; B's first call is id 1 too.
    const failed = await run(a, "echo({ value: 'A-SECRET', delayMs: 300 }); throw new Error('ended early');");
    expect(failed).toMatchObject({ status: "failed" });
    const instance = bound.at(-1)!;
    await probeIn(instance, "const v = await echo({ value: 'B-own', delayMs: 500 }); return v;", (r) => {
      expect(r).toMatchObject({ status: "completed", value: "B-own" });
      expect(JSON.stringify(r)).not.toContain("A-SECRET");
    });
  });

  it("a parked run's late result goes to its own resumed run, not to the other tenant's cell now in its instance", async () => {
    const a = await turn(TOKEN_A, "park");
    const parked = await run(a, "const v = await echo({ value: 'A-SECRET', delayMs: 700 }); console.log('A saw ' + v); return v;");
    expect(parked).toMatchObject({ status: "waiting" });
    const instance = bound.at(-1)!;
    await probeIn(instance, "const v = await echo({ value: 'B-own', delayMs: 400 }); return [v, typeof Math.random()];", (r) => {
      expect(r).toMatchObject({ status: "completed", value: ["B-own", "number"] });
      expect(JSON.stringify(r)).not.toContain("A-SECRET");
    });
    let done = parked;
    for (let i = 0; i < 20 && done.status === "waiting"; i++) done = await wait(a.session, a.turnId, done.runId, a.token);
    expect(done).toMatchObject({ status: "completed", value: "A-SECRET" });
  });

  it("a timer and a tool call tenant A's cell left pending print nothing into tenant B's cells", async () => {
    const a = await turn(TOKEN_A, "fast");
    const r = await run(
      a,
      "setTimeout(() => console.log('A-SECRET timer'), 100); echo({ value: 1, delayMs: 150 }).then(() => console.log('A-SECRET call')); for (;;) {}",
    );
    expect(r).toMatchObject({ status: "failed" });
    await sleep(250);
    const b = await turn(TOKEN_B);
    for (let i = 0; i < 3; i++) {
      const seen = await run(b, "await new Promise((r) => setTimeout(r, 50)); console.log('B-own'); return 1;");
      expect(seen).toMatchObject({ status: "completed", value: 1 });
      expect(JSON.stringify(seen)).not.toContain("A-SECRET");
    }
  });
});

describe("recycling keeps VMs apart and the ledger exact", () => {
  it("an instance stopped by its budget or out of memory is never handed to another cell", async () => {
    const endings = [
      { agent: "fast", code: "for (;;) {}" },
      { agent: "tight", code: "const a = []; for (;;) a.push('x'.repeat(1024) + a.length);" },
    ];
    for (const ending of endings) {
      const a = await turn(TOKEN_A, ending.agent);
      expect(await run(a, ending.code)).toMatchObject({ status: "failed" });
      const instance = bound.at(-1)!;
      const b = await turn(TOKEN_B);
      const from = bound.length;
      for (let i = 0; i < 4; i++) expect(await run(b, "return 1")).toMatchObject({ status: "completed", value: 1 });
      expect(bound.slice(from)).not.toContain(instance);
    }
  });

  it("cells of many sessions running at once each get an instance of their own", async () => {
    const turns = await Promise.all(Array.from({ length: 6 }, (_, i) => turn(i % 2 ? TOKEN_B : TOKEN_A)));
    const results = await Promise.all(
      turns.map((t, i) =>
        run(
          t,
          `globalThis.mine = 'cell-${i}'; await echo({ value: 0, delayMs: 50 }); await echo({ value: 0, delayMs: 20 }); return globalThis.mine;`,
        ),
      ),
    );
    results.forEach((r, i) => expect(r).toMatchObject({ status: "completed", value: `cell-${i}` }));
    const again = await Promise.all(turns.map((t) => run(t, "return typeof mine")));
    for (const r of again) expect(r).toMatchObject({ status: "completed", value: "undefined" });
    await expectOnlyIdleHeld();
  });

  it("turns with the same MCP server share its setup image across tenants; nothing one tenant's cells do reaches the other's", async () => {
    const mcp = { mcpServers: { everything: { url: inject("mcpEverythingUrl") } } };
    const open = async (token: string) => {
      const session = sessionId();
      return { session, turnId: await openTurn(session, mcp, token), token };
    };
    const a = await open(TOKEN_A);
    const POLLUTE = `globalThis.leak = 'tenant-a'; Object.prototype.tainted = 'tenant-a'; Array.prototype.push = () => 'tenant-a';
      try { MCP.everything.echo = () => 'tenant-a'; } catch (e) {}
      try { Object.defineProperty(MCP, 'x', { value: 1 }); } catch (e) {}
      return typeof MCP.everything.echo;`;
    // Enough cells of the same setup for its image to be kept and used.
    for (let i = 0; i < 4; i++) expect(await run(a, POLLUTE)).toMatchObject({ status: "completed", value: "function" });
    expect(testVmPool.images.size.images).toBeGreaterThanOrEqual(1);
    const b = await open(TOKEN_B);
    const seen: unknown[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await run(
        b,
        `const echoed = await MCP.everything.echo({ message: 'b' });
         const out = [typeof leak, ({}).tainted === undefined, [].push(1), Object.keys(MCP).length, typeof MCP.everything.echo, JSON.stringify(echoed).includes('b'), Math.random()];
         globalThis.leak = 'tenant-b';
         return out;`,
      );
      expect(r).toMatchObject({ status: "completed" });
      expect(r.value.slice(0, 6)).toEqual(["undefined", true, 1, 1, "function", true]);
      seen.push(r.value[6]);
    }
    // Each cell's VM drew its own Math.random.
    expect(new Set(seen).size).toBe(seen.length);
    await expectOnlyIdleHeld();
  });

  it("after cells that completed, failed, parked, faulted and grew, only the spares hold room in the ledger", async () => {
    const a = await turn(TOKEN_A, "fast");
    const p = await turn(TOKEN_A, "park");
    await run(a, "return 1");
    await run(a, "throw new Error('x')");
    await run(a, "for (;;) {}");
    await run(a, "const b = []; for (let i = 0; i < 40; i++) b.push(new Uint8Array(64 * 1024).fill(1)); return b.length");
    const parked = await run(p, "return await echo({ value: 2, delayMs: 400 })");
    expect(parked).toMatchObject({ status: "waiting" });
    let done = parked;
    for (let i = 0; i < 20 && done.status === "waiting"; i++) done = await wait(p.session, p.turnId, done.runId, p.token);
    expect(done).toMatchObject({ status: "completed", value: 2 });
    await expectOnlyIdleHeld();
    expect(testVmPool.spareCount).toBeLessThanOrEqual(2);
  });
});
