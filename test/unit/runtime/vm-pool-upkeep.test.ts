import { afterEach, describe, expect, it, vi } from "vitest";
import { InterruptGuard, MemoryLedger, VmPool } from "../../../src/runtime";

// After a cell the pool has two kinds of work to do once the request is answered: reset the VM the
// cell gave back, and prepare a spare when none is left. Both run in one timer task per cell (a
// task costs the isolate's lock and a timer); a cell still running when it fires still gets its spare.

const host = { request() {}, output() {}, cancel() {} };
const guard = () => new InterruptGuard({ now: () => Date.now() }, Date.now() + 10_000, 10_000);
const wait = { deadline: Date.now() + 60_000, clock: { now: () => Date.now() }, signal: new AbortController().signal, owner: "t" };
const LIMIT = 16 << 20;
const settle = () => new Promise((r) => setTimeout(r, 20));

/** What the cell runner does: take a VM, ask for a spare, run the cell. */
async function startCell(pool: VmPool) {
  const taken = await pool.take(LIMIT, wait);
  if (!taken.ok) throw new Error("no room");
  const vm = taken.vm.bind(guard(), host);
  pool.refillSoon(LIMIT);
  vm.start("return 1 + 2");
  expect(vm.status().state).toBe("completed");
  return vm;
}

afterEach(() => vi.restoreAllMocks());

describe("the VM pool's upkeep", () => {
  it("resets a VM a cell gave back and skips the refill it asked for, in one timer task; the next cell takes the reset VM", async () => {
    const pool = new VmPool(new MemoryLedger({ budgetBytes: 64 << 20 }));
    (await startCell(pool)).dispose();
    await settle();
    expect(pool.spareCount).toBe(1);
    const timers = vi.spyOn(globalThis, "setTimeout");
    const vm = await startCell(pool);
    vm.dispose();
    expect(timers).toHaveBeenCalledTimes(1);
    await settle();
    // One spare: the instance the cell gave back, reset (no second VM was prepared).
    expect(pool.spareCount).toBe(1);
    expect(pool.spareReady).toBe(true);
    const next = await startCell(pool);
    next.dispose();
    pool.dropIdle();
  });

  it("prepares a spare while a cell still runs when the timer fires", async () => {
    const ledger = new MemoryLedger({ budgetBytes: 64 << 20 });
    const pool = new VmPool(ledger);
    (await startCell(pool)).dispose();
    await settle();
    const running = await startCell(pool);
    expect(pool.spareCount).toBe(0);
    await settle();
    expect(pool.spareCount).toBe(1);
    running.dispose();
    await settle();
    // The running cell's VM came back as a second spare.
    expect(pool.spareCount).toBe(2);
    pool.dropIdle();
    expect(ledger.reservedBytes).toBe(0);
  });
});
