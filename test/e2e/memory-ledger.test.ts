import { abortAllDurableObjects } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { api, exec, expectHealthy, footprint, freshTurn, sessionProbe, sessionStub, sleep, wait } from "./helpers";
import { testVmPool } from "./session-controls";
import { VM_OVERHEAD_BYTES, type MemoryReservation } from "../../src/runtime";

// Every session object of this file runs in one isolate (the Workers vitest integration), so
// they share the gateway's VM memory ledger: 80 MiB by default. A VM is accounted at what it
// holds (1.5 MiB fresh, then its linear memory as it grows), not at its memoryLimitBytes: the
// `bigmem` agents' 48 MiB limits are caps, not reservations. To find the isolate full, the
// tests fill the ledger themselves (`fill`), as other sessions' VMs would.

const MiB = 1024 * 1024;
/** MiB as the ledger's messages print them (one decimal). */
const mibText = (bytes: number) => String(Math.round((bytes / MiB) * 10) / 10);

/** Room the test itself holds in the isolate's ledger (`hold`, `fill`), as another session's VM would. */
let testHold: MemoryReservation | null = null;

type LedgerView = { budget: number; reserved: number; spare: number; idle: number; cells: number; vms: number; waiting: number; overhead: number };

function ledger(): Promise<LedgerView> {
  const pool = testVmPool;
  const held: number = testHold && !testHold.released ? testHold.bytes : 0;
  return Promise.resolve({
    budget: pool.ledger.budgetBytes,
    reserved: pool.ledger.reservedBytes,
    spare: pool.spareBytes,
    // The spares and the kept setup images (src/runtime/setup-images.ts).
    idle: pool.idle.bytes,
    // What cells' VMs hold: neither the spare, the kept setup images, nor the test's own hold.
    cells: pool.ledger.reservedBytes - pool.idle.bytes - held,
    vms: pool.ledger.reservations - pool.idle.count - (held > 0 ? 1 : 0),
    waiting: pool.ledger.waiting,
    overhead: pool.ledger.overheadBytes,
  });
}

/** Room held by the test itself, as another session's VM would hold it. */
function hold(bytes: number): Promise<boolean> {
  testHold = testVmPool.ledger.tryReserve(bytes);
  return Promise.resolve(testHold !== null);
}

/**
 * Fill the isolate's ledger so that only `leaving` bytes of room are left and no spare can
 * be given up (it is dropped first and cannot be refilled: a fresh VM needs 1.5 MiB).
 */
function fill(leaving: number): Promise<boolean> {
  testVmPool.dropIdle();
  testHold = testVmPool.ledger.tryReserve(testVmPool.ledger.roomBytes - leaving);
  return Promise.resolve(testHold !== null);
}

function unhold(): Promise<void> {
  testHold?.release();
  testHold = null;
  return Promise.resolve();
}

/** Poll the ledger until `ok` (bounded by the test timeout; no timing is asserted). */
async function until(ok: (v: LedgerView) => boolean): Promise<LedgerView> {
  for (;;) {
    const v = await ledger();
    if (ok(v)) return v;
    await sleep(10);
  }
}

/**
 * A cell that holds its VM (and some real memory) until the test writes the note `go` into
 * its session's storage, calling a tool every 20 ms meanwhile: the test decides when it
 * completes, not a timer.
 */
const HOLD = `const ballast = Array.from({ length: 100000 }, (_, i) => 'b' + i);
  while ((await notes_read({ key: 'go' })).length === 0) await echo({ value: 0, delayMs: 20 });
  return ballast.length;`;

/** A small cell idle on a slow tool until its note `go` is written: it holds ~1.5 MiB. */
const IDLE = `while ((await notes_read({ key: 'go' })).length === 0) await echo({ value: 0, delayMs: 50 });
  return 'done';`;

async function startHolder(vmsBefore = 0, code = HOLD) {
  const { session, turnId } = await freshTurn({ agentId: "bigmem" });
  const result = exec(session, turnId, code);
  const held = await until((v) => v.vms > vmsBefore);
  return {
    session,
    turnId,
    result,
    held,
    release: () => sessionProbe(session).storagePut("tool:note:go", "1"),
  };
}

const EXHAUSTED = new RegExp(
  `^code mode VM memory for this isolate is exhausted \\(80 MiB budget, [\\d.]+ MiB in use, this cell needs ${mibText(VM_OVERHEAD_BYTES).replace(".", "\\.")} MiB\\); try again shortly$`,
);

describe("isolate VM memory ledger", () => {
  afterEach(async () => {
    await unhold();
    // Whatever a test did, no cell VM and no waiter is left: at most the pool's spare.
    const v = await until((x) => x.cells === 0 && x.waiting === 0);
    expect(v.spare).toBeLessThanOrEqual(v.budget);
  });

  it("an idle isolate runs a cell that fits as before, up to its full memory limit", async () => {
    const v0 = await ledger();
    expect(v0.budget).toBe(80 * MiB);
    const { session, turnId } = await freshTurn();
    expect(await exec(session, turnId, "return 1 + 2")).toMatchObject({ status: "completed", value: 3 });
    const big = await freshTurn({ agentId: "bigmem" });
    const r = await exec(
      big.session,
      big.turnId,
      "const a = []; for (let i = 0; i < 40; i++) a.push(new Uint8Array(1024 * 1024).fill(1)); return a.length;",
    );
    expect(r).toMatchObject({ status: "completed", value: 40 });
  });

  it("a memoryLimitBytes larger than the budget is clamped so one VM fits it, and the cell is told the limit it ran with", async () => {
    // bigsnap asks for 128 MiB; 80 MiB budget − a fresh VM's overhead.
    const { session, turnId } = await freshTurn({ agentId: "bigsnap" });
    const r = await exec(session, turnId, "const a = []; for (;;) a.push('x'.repeat(1024) + a.length);");
    expect(r).toMatchObject({ status: "failed" });
    expect(r.error).toBe(`code mode cell exceeded memoryLimitBytes (${80 * MiB - VM_OVERHEAD_BYTES}) and its VM was terminated`);
    await expectHealthy(session, turnId);
  });

  it("a cell that finds the isolate full waits for room, then completes; the ledger never passes its budget", async () => {
    // Was: a second 48 MiB cell waited for the first's full reservation. Cells now hold what they
    // use, so the isolate is filled by the test instead.
    expect(await fill(MiB)).toBe(true);
    const b = await freshTurn({ agentId: "bigmem" });
    const second = exec(b.session, b.turnId, "return 'second'");
    const queued = await until((v) => v.waiting === 1);
    expect(queued.cells).toBe(0);
    expect(queued.reserved).toBeLessThanOrEqual(queued.budget);
    await unhold();
    expect(await second).toMatchObject({ status: "completed", value: "second" });
  });

  it("a cell that gets no room within its deadline fails with runtime_unavailable naming the budget; every session stays healthy", async () => {
    // Was: a large cell next to a 48 MiB holder failed while an 8 MiB one fitted. Every fresh VM
    // now needs the same 1.5 MiB, so the isolate is filled instead.
    const a = await startHolder();
    expect(await fill(MiB)).toBe(true);
    const b = await freshTurn({ agentId: "bigmemquick" });
    const failed = await exec(b.session, b.turnId, "return 'never ran'");
    expect(failed).toMatchObject({ status: "failed", code: "runtime_unavailable" });
    expect(failed.error).toMatch(EXHAUSTED);
    expect(failed.telemetry).toBeDefined();
    await unhold();
    await a.release();
    expect(await a.result).toMatchObject({ status: "completed" });
    await expectHealthy(b.session, b.turnId);
    await expectHealthy(a.session, a.turnId);
  });

  it("a wait that gets no room fails but keeps its parked run; a later wait resumes it", async () => {
    const p = await freshTurn({ agentId: "bigmemquick" });
    const parked = await exec(p.session, p.turnId, "const kept = 'kept across'; await yield_control(); return kept;");
    expect(parked.status).toBe("waiting");
    expect(await fill(MiB)).toBe(true);
    const w1 = await wait(p.session, p.turnId, parked.runId);
    expect(w1).toMatchObject({ status: "failed", code: "runtime_unavailable" });
    expect(w1.error).toMatch(EXHAUSTED);
    expect((await footprint(p.session)).runs).toBe(1);
    await unhold();
    expect(await wait(p.session, p.turnId, parked.runId)).toMatchObject({ status: "completed", value: "kept across" });
    expect((await footprint(p.session)).runs).toBe(0);
  });

  it("the spare VM is given up before a resumed cell has to wait", async () => {
    const p = await freshTurn({ agentId: "bigmemquick" });
    const parked = await exec(p.session, p.turnId, "await yield_control(); return 'resumed';");
    // After the exec's answer the pool keeps a spare, counted at what a fresh VM occupies (1.5 MiB).
    const withSpare = await until((v) => v.spare === v.overhead);
    // Another holder leaves 1 MiB: the restore fits only without the spare.
    expect(await hold(withSpare.budget - withSpare.reserved - MiB)).toBe(true);
    expect((await ledger()).reserved).toBe(withSpare.budget - MiB);
    // Without giving up the spare this wait would fail after its 500 ms deadline.
    expect(await wait(p.session, p.turnId, parked.runId)).toMatchObject({ status: "completed", value: "resumed" });
    await unhold();
  });

  it("an exec cancelled while it waits for room fails with aborted and leaves no waiter", async () => {
    expect(await fill(MiB)).toBe(true);
    const b = await freshTurn({ agentId: "bigmem" });
    const stub = sessionStub(b.session) as any;
    const running = stub.callTool("tenant-a", b.turnId, "exec", { code: "return 'never ran'" }, "ledger-req-1");
    await until((v) => v.waiting === 1);
    await stub.cancelRequest("ledger-req-1");
    expect((await running).body.result).toMatchObject({ status: "failed", code: "aborted" });
    expect((await ledger()).waiting).toBe(0);
    await unhold();
    await expectHealthy(b.session, b.turnId);
  });

  it("a turn deleted while its wait is queued for room drops the run (aborted), as any aborted wait does", async () => {
    const p = await freshTurn({ agentId: "bigmem" });
    const parked = await exec(p.session, p.turnId, "await yield_control(); return 1;");
    expect(await fill(MiB)).toBe(true);
    const waiting = wait(p.session, p.turnId, parked.runId);
    await until((v) => v.waiting === 1);
    expect((await api("DELETE", `/v1/sessions/${p.session}/turns/${p.turnId}`)).status).toBe(200);
    expect(await waiting).toMatchObject({ status: "failed", code: "aborted" });
    expect((await footprint(p.session)).runs).toBe(0);
    await unhold();
  });

  it("cells that complete, fail, run out of memory, time out, are aborted mid-run or park all give their room back", async () => {
    const { session, turnId } = await freshTurn({ agentId: "tight" });
    expect(await exec(session, turnId, "return 1")).toMatchObject({ status: "completed" });
    expect(await exec(session, turnId, "throw new Error('boom')")).toMatchObject({ status: "failed" });
    expect(await exec(session, turnId, "const a = []; for (;;) a.push('x'.repeat(1024) + a.length);")).toMatchObject({ status: "failed" });
    expect((await until((v) => v.cells === 0)).cells).toBe(0);
    const fast = await freshTurn({ agentId: "fast" });
    expect(await exec(fast.session, fast.turnId, "while (true) {}")).toMatchObject({ status: "failed", code: "timeout" });
    expect((await until((v) => v.cells === 0)).cells).toBe(0);
    const a = await startHolder();
    expect((await api("DELETE", `/v1/sessions/${a.session}/turns/${a.turnId}`)).status).toBe(200);
    expect(await a.result).toMatchObject({ status: "failed", code: "aborted" });
    expect((await until((v) => v.cells === 0)).cells).toBe(0);
    const p = await freshTurn({ agentId: "bigmem" });
    expect(await exec(p.session, p.turnId, "await yield_control(); return 1;")).toMatchObject({ status: "waiting" });
    expect((await until((v) => v.cells === 0)).cells).toBe(0);
  });

  it("a restore that fails gives its room back", async () => {
    const { session, turnId } = await freshTurn({ agentId: "bigmem" });
    const r = await exec(session, turnId, "await yield_control(); return 1");
    await sessionProbe(session).storageWrite("UPDATE run_chunks SET data = ? WHERE seq = 0", new Uint8Array([1, 2, 3, 4]).buffer);
    expect(await wait(session, turnId, r.runId)).toMatchObject({ status: "failed", code: "internal_error" });
    expect((await until((v) => v.cells === 0)).cells).toBe(0);
  });

  it("a wait that finds its host call lost to a reset gives its room back", async () => {
    const { session, turnId } = await freshTurn({ agentId: "bigmemquick" });
    const r = await exec(session, turnId, "return await echo({ value: 1, delayMs: 20000 });");
    expect(r.status).toBe("waiting");
    await abortAllDurableObjects();
    const w = await wait(session, turnId, r.runId);
    expect(w).toMatchObject({ status: "failed", code: "internal_error" });
    expect(w.error).toMatch(/lost 1 nested tool call/);
    expect((await until((v) => v.cells === 0)).cells).toBe(0);
  });

  it("a session object reset mid-cell gives its room back when it starts again", async () => {
    const a = await startHolder();
    await abortAllDurableObjects();
    // The cell's HTTP call fails with the reset; its VM is never disposed by anyone.
    await a.result.catch(() => undefined);
    // The object's next incarnation (its next request) gives the dead cell's room back.
    await sessionProbe(a.session).runningCalls();
    expect((await until((v) => v.cells === 0)).cells).toBe(0);
  });

  it("sixteen sessions each with a small cell awaiting a slow tool all run at once in one isolate, and the ledger returns to zero after", async () => {
    // 16 × 48 MiB limits: 9.6 times the budget, were each VM reserved at its limit.
    const holders = [];
    for (let i = 0; i < 16; i++) holders.push(await startHolder(i, IDLE));
    const all = await ledger();
    expect(all.vms).toBe(16);
    expect(all.waiting).toBe(0);
    expect(all.reserved).toBeLessThanOrEqual(all.budget);
    // None finished before all sixteen were in flight: each waits for its own note.
    await Promise.all(holders.map((h) => h.release()));
    for (const h of holders) expect(await h.result).toMatchObject({ status: "completed", value: "done" });
    const after = await until((v) => v.vms === 0);
    expect(after.cells).toBe(0);
    expect(after.reserved).toBe(after.idle);
  });

  it("a cell that allocates past the isolate's room fails with the memory failure naming the isolate; a cell of another session is unaffected", async () => {
    const a = await startHolder();
    expect(await fill(8 * MiB)).toBe(true);
    const big = await freshTurn({ agentId: "bigmem" });
    const r = await exec(
      big.session,
      big.turnId,
      "const a = []; for (let i = 0; i < 40; i++) a.push(new Uint8Array(1024 * 1024).fill(1)); return a.length;",
    );
    expect(r).toMatchObject({ status: "failed" });
    expect(r.error).toMatch(
      /^code mode cell could not grow its VM memory \(code mode VM memory for this isolate is exhausted \(80 MiB budget, [\d.]+ MiB in use\); try again shortly\) and its VM was terminated$/,
    );
    // The failed cell's VM is gone and its room given back; the holder ran on throughout.
    await until((v) => v.vms === 1);
    await unhold();
    await a.release();
    expect(await a.result).toMatchObject({ status: "completed", value: 100000 });
    await expectHealthy(big.session, big.turnId);
  });
});
