import { afterEach, beforeEach, describe, expect, inject, it, vi } from "vitest";
import { GuestVm, VmPool } from "../../src/runtime";
import { exec, openTurn, sessionId, sleep, TOKEN_A, TOKEN_B, wait } from "./helpers";
import { expectOnlyIdleHeld, testVmPool } from "./session-controls";
import { decide, pendingApprovals, startExec } from "./approval-helpers";

// Setup images (a VM kept right after a turn's tool globals were installed, copied for later cells of
// the same setup) and restores into a spare's used instance, attacked through HTTP by two tenants of
// one isolate: each tenant's cells must see exactly the setup its own turn asked for, nothing another
// tenant's cell or parked run left in an instance, and the ledger must end holding only idle room.

/** The wasm instance each bound cell VM runs in, in binding order (GuestVm's private `vm`). */
let bound: object[] = [];
/** Instances VmPool.instanceFor handed to a restore (null: none fitted). */
let restoredInto: Array<object | null> = [];

beforeEach(() => {
  bound = [];
  restoredInto = [];
  const bind = GuestVm.prototype.bind;
  vi.spyOn(GuestVm.prototype, "bind").mockImplementation(function (this: GuestVm, ...args: Parameters<GuestVm["bind"]>) {
    bound.push((this as unknown as { vm: object }).vm);
    return bind.apply(this, args);
  });
  const instanceFor = VmPool.prototype.instanceFor;
  vi.spyOn(VmPool.prototype, "instanceFor").mockImplementation(function (this: VmPool, bytes: number) {
    const instance = instanceFor.call(this, bytes);
    restoredInto.push(instance);
    return instance;
  });
});

afterEach(() => {
  vi.restoreAllMocks();
});

type Turn = { session: string; turnId: string; token: string };

async function turn(token: string, body: Record<string, unknown> = {}): Promise<Turn> {
  const session = sessionId();
  return { session, turnId: await openTurn(session, body, token), token };
}

const run = (t: Turn, code: string) => exec(t.session, t.turnId, code, {}, t.token);

describe("setup images never hand a tenant another turn's tool globals", () => {
  it("the same MCP server with and without an allow list: interleaved cells of both tenants each see only their own tools", async () => {
    const everything = { everything: { url: inject("mcpEverythingUrl") } };
    const narrow = await turn(TOKEN_A, { mcpServers: everything, allow: ["everything__echo"] });
    const wide = await turn(TOKEN_B, { mcpServers: everything });
    const LOOK = `const planted = typeof plantedBy;
      const names = Object.keys(MCP.everything).sort();
      let hidden = 'absent'; try { await MCP.everything.getSum({ a: 1, b: 2 }); hidden = 'called'; } catch (e) { hidden = 'refused'; }
      const files = JSON.stringify(await API.list('mcp'));
      try { MCP.everything.getSum = () => 'planted'; } catch (e) {}
      globalThis.plantedBy = 'TENANT';
      return { names, hidden, files, planted };`;
    const look = (t: Turn, tenant: string) => run(t, LOOK.replace("TENANT", tenant));
    const first = { narrow: await look(narrow, "narrow"), wide: await look(wide, "wide") };
    expect(first.narrow).toMatchObject({ status: "completed", value: { names: ["$api", "echo", "prompts", "resources"], planted: "undefined" } });
    expect(first.wide).toMatchObject({ status: "completed", value: { hidden: "called", planted: "undefined" } });
    expect(first.wide.value.names).toContain("getSum");
    expect(first.narrow.value.hidden).not.toBe("called");
    // Enough cells of both setups for an image of each to be kept and copied, alternating so that
    // every spare a cell takes was last made or used for the other tenant's setup.
    for (let i = 0; i < 5; i++) {
      // The pause lets the pool reset each returned instance to its own setup's image before the other tenant asks.
      expect((await look(narrow, "narrow")).value).toEqual(first.narrow.value);
      await sleep(30);
      expect((await look(wide, "wide")).value).toEqual(first.wide.value);
      await sleep(30);
    }
    expect(testVmPool.images.size.images).toBeGreaterThanOrEqual(1);
    await expectOnlyIdleHeld();
  });
});

describe("a parked run restored into a spare's used instance", () => {
  it("resumes with only its own state, in an instance that just ran another tenant's cell, and reads zeros where that cell wrote", async () => {
    const a = await turn(TOKEN_A, { agentId: "park" });
    const parked = await run(
      a,
      `globalThis.mine = 'A-own'; const kept = new Uint8Array(4096).fill(7);
       const v = await echo({ value: 'A-done', delayMs: 600 });
       const nonZero = (u8) => u8.some((x) => x !== 0);
       let stack = ''; try { null.x; } catch (e) { stack = String(e.stack); }
       return { v, mine, kept: kept.every((x) => x === 7), other: typeof secretB, leak: ({}).leakB ?? null,
         fresh: nonZero(new Uint8Array(new ArrayBuffer(1024 * 1024))), strings: stack.includes('B-SECRET'), draws: [Math.random(), Math.random()] };`,
    );
    expect(parked).toMatchObject({ status: "waiting" });
    // Tenant B's cells run meanwhile and give their instances back (small cells: not grown, so kept as spares).
    const b = await turn(TOKEN_B);
    const bInstances: object[] = [];
    for (let i = 0; i < 2; i++) {
      const r = await run(
        b,
        `globalThis.secretB = 'B-SECRET'; Object.defineProperty(Object.prototype, 'leakB', { get() { return 'B-SECRET'; }, configurable: true });
         const buf = new Uint8Array(64 * 1024).fill(0xb5); const s = []; for (let i = 0; i < 200; i++) s.push('B-SECRET-' + i);
         return [buf.length, s.length, Math.random()];`,
      );
      expect(r).toMatchObject({ status: "completed" });
      bInstances.push(bound.at(-1)!);
    }
    await sleep(700);
    const from = bound.length;
    let done = parked;
    for (let i = 0; i < 20 && done.status === "waiting"; i++) done = await wait(a.session, a.turnId, done.runId, a.token);
    expect(done).toMatchObject({
      status: "completed",
      value: { v: "A-done", mine: "A-own", kept: true, other: "undefined", leak: null, fresh: false, strings: false },
    });
    expect(JSON.stringify(done)).not.toContain("B-SECRET");
    // The restore really went into one of tenant B's instances (the path under attack was taken).
    const into = restoredInto.filter((x) => x !== null);
    expect(into.length).toBeGreaterThanOrEqual(1);
    expect(bInstances).toContain(into[0]);
    expect(bound.slice(from)).toContain(into[0]);
    await expectOnlyIdleHeld();
  });
});

describe("a cell woken after an operator's decision, restored into a spare's used instance", () => {
  it("continues with only its own state in an instance another tenant's cell just used", async () => {
    const a = await turn(TOKEN_A, { agentId: "approvebig" });
    const running = startExec(
      a.session,
      a.turnId,
      `globalThis.mine = 'A-own'; const kept = new Uint8Array(4096).fill(7);
       await notes_write({ key: 'woken', text: 'allowed' });
       let stack = ''; try { null.x; } catch (e) { stack = String(e.stack); }
       return { mine, kept: kept.every((x) => x === 7), other: typeof secretB, leak: ({}).leakB ?? null,
         fresh: new Uint8Array(new ArrayBuffer(1024 * 1024)).some((x) => x !== 0), strings: stack.includes('B-SECRET') };`,
    );
    const [p] = await pendingApprovals(a.session);
    // Asleep: its VM was snapshotted and given back while the decision is pending.
    for (let i = 0; i < 200 && testVmPool.ledger.reservations !== testVmPool.idle.count; i++) await sleep(10);
    const b = await turn(TOKEN_B);
    const bInstances: object[] = [];
    for (let i = 0; i < 2; i++) {
      const r = await run(
        b,
        `globalThis.secretB = 'B-SECRET'; Object.defineProperty(Object.prototype, 'leakB', { get() { return 'B-SECRET'; }, configurable: true });
         const buf = new Uint8Array(64 * 1024).fill(0xb5); return buf.length;`,
      );
      expect(r).toMatchObject({ status: "completed" });
      bInstances.push(bound.at(-1)!);
    }
    await sleep(30);
    expect((await decide(a.session, p!.approvalId, "allow")).status).toBe(200);
    const r = (await running).json;
    expect(r).toMatchObject({
      status: "completed",
      value: { mine: "A-own", kept: true, other: "undefined", leak: null, fresh: false, strings: false },
    });
    expect(JSON.stringify(r)).not.toContain("B-SECRET");
    // The wake-up really restored into one of tenant B's instances.
    const into = restoredInto.filter((x) => x !== null);
    expect(into.length).toBeGreaterThanOrEqual(1);
    expect(bInstances).toContain(into[0]);
    await expectOnlyIdleHeld();
  });
});
