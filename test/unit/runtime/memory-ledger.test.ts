import { describe, expect, it } from "vitest";
import { frozenClock, manualClock } from "../../../src/runtime";
import { DEFAULT_ISOLATE_VM_MEMORY_BYTES, MemoryLedger, resolveIsolateVmMemoryBytes, VM_OVERHEAD_BYTES, type RoomWait } from "../../../src/runtime";
import { GuestFaultError, GuestVm } from "../../../src/runtime";
import { GUEST_ABI_VERSION } from "../../../src/runtime";
import { InterruptGuard } from "../../../src/runtime";
import { VmPool } from "../../../src/runtime";
import { createGateway } from "../../../src/gateway";

const MiB = 1024 * 1024;
/** MiB as the ledger's messages print them (one decimal). */
const mibText = (bytes: number) => String(Math.round((bytes / MiB) * 10) / 10);

function waitFor(opts: { ms?: number; signal?: AbortSignal; owner?: string | null } = {}): RoomWait {
  const clock = frozenClock(0);
  return { deadline: opts.ms ?? 60_000, clock, signal: opts.signal ?? new AbortController().signal, owner: opts.owner ?? null };
}

describe("memory ledger: budget and clamp", () => {
  it("defaults to an 80 MiB budget and validates the option", () => {
    expect(new MemoryLedger().budgetBytes).toBe(DEFAULT_ISOLATE_VM_MEMORY_BYTES);
    expect(DEFAULT_ISOLATE_VM_MEMORY_BYTES).toBe(80 * MiB);
    expect(resolveIsolateVmMemoryBytes(32 * MiB)).toBe(32 * MiB);
    for (const bad of [0, -1, 1.5 * MiB + 0.5, 3 * MiB, 129 * MiB, Number.NaN, "80000000", null]) {
      expect(() => resolveIsolateVmMemoryBytes(bad)).toThrow(
        /isolateVmMemoryBytes must be an integer number of bytes from 4194304 \(4 MiB\) to 134217728/,
      );
    }
  });

  it("createGateway refuses a bad isolateVmMemoryBytes at start-up", () => {
    expect(() => createGateway({ plugins: [], isolateVmMemoryBytes: 256 * MiB })).toThrow(/isolateVmMemoryBytes must be an integer/);
    expect(() => createGateway({ plugins: [], isolateVmMemoryBytes: 32 * MiB })).not.toThrow();
  });

  it("the memory limit is clamped so one VM fits the budget; what the isolate can still grant is its room", () => {
    // A VM is no longer accounted at its limit (it holds what it uses), but its own cap still fits the budget.
    const ledger = new MemoryLedger({ budgetBytes: 80 * MiB });
    expect(ledger.effectiveLimit(64 * MiB)).toBe(64 * MiB);
    expect(ledger.effectiveLimit(1024 * MiB)).toBe(80 * MiB - VM_OVERHEAD_BYTES);
    expect(ledger.roomBytes).toBe(80 * MiB);
    const r = ledger.tryReserve(30 * MiB)!;
    expect(ledger.roomBytes).toBe(50 * MiB);
    expect(r.room()).toBe(50 * MiB);
    r.cover(90 * MiB);
    expect(ledger.roomBytes).toBe(0);
    r.release();
    expect(r.room()).toBe(0);
  });
});

describe("memory ledger: reservations", () => {
  it("reserves up to the budget, refuses past it, and returns to zero when everything is released", () => {
    const ledger = new MemoryLedger({ budgetBytes: 10 * MiB, overheadBytes: 0 });
    const a = ledger.tryReserve(4 * MiB)!;
    const b = ledger.tryReserve(6 * MiB)!;
    expect(ledger.reservedBytes).toBe(10 * MiB);
    expect(ledger.tryReserve(1)).toBeNull();
    a.release();
    a.release();
    expect(ledger.reservedBytes).toBe(6 * MiB);
    b.release();
    expect(ledger.reservedBytes).toBe(0);
    expect(ledger.reservations).toBe(0);
    expect(ledger.peakBytes).toBe(10 * MiB);
  });

  it("cover raises a reservation to what the VM really holds, past the budget if need be; release gives it all back", () => {
    const ledger = new MemoryLedger({ budgetBytes: 10 * MiB, overheadBytes: 0 });
    const r = ledger.tryReserve(8 * MiB)!;
    r.cover(4 * MiB);
    expect(r.bytes).toBe(8 * MiB);
    r.cover(12 * MiB);
    expect(ledger.reservedBytes).toBe(12 * MiB);
    expect(ledger.tryReserve(1)).toBeNull();
    r.release();
    r.cover(20 * MiB);
    expect(ledger.reservedBytes).toBe(0);
  });

  it("a request that does not fit waits and is granted, in arrival order, as room is released", async () => {
    const ledger = new MemoryLedger({ budgetBytes: 10 * MiB, overheadBytes: 0 });
    const held = ledger.tryReserve(8 * MiB)!;
    const order: string[] = [];
    const first = ledger.reserve(6 * MiB, waitFor()).then((o) => (order.push("first"), o));
    const second = ledger.reserve(1 * MiB, waitFor()).then((o) => (order.push("second"), o));
    // The small one would fit now, but it does not jump the queue.
    expect(ledger.waiting).toBe(2);
    expect(ledger.tryReserve(1 * MiB)).toBeNull();
    held.release();
    const [a, b] = await Promise.all([first, second]);
    expect(order).toEqual(["first", "second"]);
    expect(a.ok && b.ok).toBe(true);
    expect(ledger.reservedBytes).toBe(7 * MiB);
    if (a.ok) a.reservation.release();
    if (b.ok) b.reservation.release();
    expect(ledger.reservedBytes).toBe(0);
  });

  it("a wait that outlasts its deadline fails with a message naming the budget and what is in use", async () => {
    const ledger = new MemoryLedger({ budgetBytes: 80 * MiB });
    const held = ledger.tryReserve(64 * MiB + VM_OVERHEAD_BYTES)!;
    const outcome = await ledger.reserve(48 * MiB + VM_OVERHEAD_BYTES, waitFor({ ms: 20 }));
    expect(outcome).toEqual({
      ok: false,
      reason: "exhausted",
      message: `code mode VM memory for this isolate is exhausted (80 MiB budget, ${mibText(64 * MiB + VM_OVERHEAD_BYTES)} MiB in use, this cell needs ${mibText(48 * MiB + VM_OVERHEAD_BYTES)} MiB); try again shortly`,
    });
    expect(ledger.waiting).toBe(0);
    held.release();
    expect(ledger.reservedBytes).toBe(0);
  });

  it("a deadline already past fails at once; a request larger than the budget never waits", async () => {
    const ledger = new MemoryLedger({ budgetBytes: 10 * MiB, overheadBytes: 0 });
    const held = ledger.tryReserve(10 * MiB)!;
    const clock = manualClock(100);
    expect((await ledger.reserve(1, { deadline: 100, clock, signal: new AbortController().signal, owner: null })).ok).toBe(false);
    held.release();
    expect(await ledger.reserve(11 * MiB, waitFor())).toMatchObject({ ok: false, reason: "exhausted" });
    expect(ledger.waiting).toBe(0);
  });

  it("aborting a wait takes it out of the queue, and the next waiter moves up", async () => {
    const ledger = new MemoryLedger({ budgetBytes: 10 * MiB, overheadBytes: 0 });
    const held = ledger.tryReserve(9 * MiB)!;
    const abort = new AbortController();
    const big = ledger.reserve(8 * MiB, waitFor({ signal: abort.signal }));
    const small = ledger.reserve(1 * MiB, waitFor());
    abort.abort();
    expect(await big).toEqual({ ok: false, reason: "aborted" });
    const s = await small;
    expect(s.ok).toBe(true);
    if (s.ok) s.reservation.release();
    held.release();
    expect(ledger.reservedBytes).toBe(0);
    expect(await ledger.reserve(1, waitFor({ signal: abort.signal }))).toEqual({ ok: false, reason: "aborted" });
    expect(ledger.reservedBytes).toBe(0);
  });

  it("a waiter whose deadline passed is dropped when room frees, not granted room it can no longer use", async () => {
    const ledger = new MemoryLedger({ budgetBytes: 10 * MiB, overheadBytes: 0 });
    const held = ledger.tryReserve(10 * MiB)!;
    const clock = manualClock(0);
    const stale = ledger.reserve(5 * MiB, { deadline: 200, clock, signal: new AbortController().signal, owner: null });
    clock.advance(200);
    held.release();
    expect(ledger.waiting).toBe(0);
    expect(ledger.reservedBytes).toBe(0);
    expect(await stale).toMatchObject({ ok: false, reason: "exhausted" });
    expect(ledger.reservedBytes).toBe(0);
  });

  it("raise grows a reservation to a restore's size, waiting for room; a failed raise keeps what it had", async () => {
    const ledger = new MemoryLedger({ budgetBytes: 10 * MiB, overheadBytes: 0 });
    const r = ledger.tryReserve(1 * MiB)!;
    const other = ledger.tryReserve(6 * MiB)!;
    const raised = ledger.raise(r, 5 * MiB, waitFor());
    expect(ledger.waiting).toBe(1);
    other.release();
    expect(await raised).toMatchObject({ ok: true });
    expect(r.bytes).toBe(5 * MiB);
    expect(ledger.reservedBytes).toBe(5 * MiB);
    const refused = await ledger.raise(r, 11 * MiB, waitFor());
    expect(refused).toMatchObject({ ok: false, reason: "exhausted" });
    expect(ledger.reservedBytes).toBe(5 * MiB);
    r.release();
    expect(ledger.reservedBytes).toBe(0);
  });

  it("a new incarnation of a session object gives back what the earlier one held, and its waits get nothing", async () => {
    const ledger = new MemoryLedger({ budgetBytes: 10 * MiB, overheadBytes: 0 });
    ledger.tryReserve(6 * MiB, "object-a");
    const other = ledger.tryReserve(2 * MiB, "object-b")!;
    // The earlier incarnation's wait is dropped from the queue; only its own timer could end it.
    const waiting = ledger.reserve(5 * MiB, waitFor({ owner: "object-a", ms: 30 }));
    const behind = ledger.reserve(3 * MiB, waitFor({ owner: "object-c" }));
    ledger.releaseOwner("object-a");
    expect(ledger.waiting).toBe(0);
    expect(await waiting).toMatchObject({ ok: false, reason: "exhausted" });
    const c = await behind;
    expect(c.ok).toBe(true);
    expect(ledger.reservedBytes).toBe(5 * MiB);
    other.release();
    if (c.ok) c.reservation.release();
    expect(ledger.reservedBytes).toBe(0);
  });
});

describe("vm pool in the ledger", () => {
  const guard = () => new InterruptGuard(frozenClock(0), 1e12, 10_000);
  const host = { request() {}, output() {}, cancel() {} };
  const spareReady = async (pool: VmPool) => {
    for (let i = 0; i < 2000 && !pool.spareReady; i++) await new Promise((r) => setTimeout(r, 1));
  };

  it("a VM holds what it uses, not its limit, until disposed; a failed restore gives its room back", async () => {
    const ledger = new MemoryLedger({ budgetBytes: 16 * MiB });
    const pool = new VmPool(ledger);
    const taken = await pool.take(8 * MiB, waitFor());
    if (!taken.ok) throw new Error("no room");
    // A fresh VM with the prelude holds ~1.3 MiB of linear memory: its reservation, not 8 MiB.
    expect(ledger.reservedBytes).toBe(VM_OVERHEAD_BYTES);
    taken.vm.dispose();
    taken.vm.dispose();
    // Disposed cleanly, its instance came back as the pool's spare (once), at a fresh VM's size.
    expect(pool.spareBytes).toBe(VM_OVERHEAD_BYTES);
    expect(ledger.reservedBytes).toBe(VM_OVERHEAD_BYTES);
    pool.dropSpare();
    expect(ledger.reservedBytes).toBe(0);

    const room = await pool.reserve(8 * MiB, waitFor());
    if (!room.ok) throw new Error("no room");
    const broken = { memory: new Uint8Array(10), stackPointer: 0, runtimePtr: 0, contextPtr: 0 } as never;
    await expect(GuestVm.restore(broken, 1, room.limits, guard(), host, GUEST_ABI_VERSION)).rejects.toThrow();
    expect(ledger.reservedBytes).toBe(0);
  });

  it("the spare counts at what a fresh VM occupies, keeps that when a cell takes it, and is the first thing given up", async () => {
    const ledger = new MemoryLedger({ budgetBytes: 16 * MiB });
    const pool = new VmPool(ledger);
    pool.refillSoon(8 * MiB);
    await spareReady(pool);
    expect(ledger.reservedBytes).toBe(VM_OVERHEAD_BYTES);
    // Another VM's 14 MiB leaves no room for a second fresh VM next to the spare: the spare goes,
    // the request does not wait out its deadline.
    const other = ledger.tryReserve(14 * MiB)!;
    const room = await pool.reserve(8 * MiB, waitFor({ ms: 60_000 }));
    expect(room.ok).toBe(true);
    expect(pool.spareBytes).toBe(0);
    expect(ledger.reservedBytes).toBe(14 * MiB + VM_OVERHEAD_BYTES);
    if (room.ok) room.limits.reservation.release();
    other.release();
    // No refill while even the overhead would not fit.
    const held = ledger.tryReserve(15 * MiB)!;
    pool.refillSoon(8 * MiB);
    await new Promise((r) => setTimeout(r, 5));
    expect(pool.spareBytes).toBe(0);
    held.release();
    // Taken by a cell, the spare keeps what it holds: nothing is reserved for its limit.
    pool.refillSoon(8 * MiB);
    await spareReady(pool);
    const taken = await pool.take(8 * MiB, waitFor({ ms: 60_000 }));
    if (!taken.ok) throw new Error("no room");
    expect(ledger.reservedBytes).toBe(VM_OVERHEAD_BYTES);
    taken.vm.dispose();
    expect(pool.spareBytes).toBe(VM_OVERHEAD_BYTES);
    pool.dropSpare();
    expect(ledger.reservedBytes).toBe(0);
  });

  it("a spare of the same limit is handed over with its reservation; one of another limit is disposed first", async () => {
    const ledger = new MemoryLedger({ budgetBytes: 16 * MiB });
    const pool = new VmPool(ledger);
    pool.refillSoon(8 * MiB);
    await spareReady(pool);
    const same = await pool.take(8 * MiB, waitFor({ owner: "o" }));
    if (!same.ok) throw new Error("no room");
    expect(ledger.reservations).toBe(1);
    same.vm.dispose();
    pool.refillSoon(8 * MiB);
    await spareReady(pool);
    const other = await pool.take(2 * MiB, waitFor());
    if (!other.ok) throw new Error("no room");
    expect(ledger.reservations).toBe(1);
    other.vm.dispose();
    pool.dropSpare();
    expect(ledger.reservedBytes).toBe(0);
  });

  it("a VM whose linear memory outgrows its limit (fragmentation) raises its reservation", async () => {
    const ledger = new MemoryLedger({ budgetBytes: 64 * MiB });
    const pool = new VmPool(ledger);
    const taken = await pool.take(8 * MiB, waitFor());
    if (!taken.ok) throw new Error("no room");
    const vm = taken.vm.bind(guard(), host);
    // A growing array reallocated many times, then sorted: freed blocks cannot be reused.
    expect(() =>
      vm.start("const a = []; try { for (;;) a.push(Math.random()); } catch {} a.length = a.length / 2 | 0; for (;;) a.sort();"),
    ).toThrow();
    expect(ledger.reservedBytes).toBeGreaterThan(8 * MiB + VM_OVERHEAD_BYTES);
    vm.dispose();
    expect(ledger.reservedBytes).toBe(0);
  });
});

describe("memory by use: VMs grow only into the isolate's room", () => {
  const guard = () => new InterruptGuard(frozenClock(0), 1e12, 10_000);
  const host = { request() {}, output() {}, cancel() {} };
  const take = async (pool: VmPool, limit: number) => {
    const t = await pool.take(limit, waitFor());
    if (!t.ok) throw new Error("no room");
    return t.vm.bind(guard(), host);
  };
  /** Keeps `mib` MiB reachable from a guest global, then waits forever (an idle cell). */
  const allocate = (mib: number) =>
    `globalThis.keep = []; for (let i = 0; i < ${mib}; i++) keep.push(new Uint8Array(1024 * 1024).fill(1)); await new Promise(() => {});`;

  it("sixteen VMs with 64 MiB limits live at once in an 80 MiB isolate, each accounted at what it holds", async () => {
    const ledger = new MemoryLedger({ budgetBytes: 80 * MiB });
    const pool = new VmPool(ledger);
    const vms: GuestVm[] = [];
    for (let i = 0; i < 16; i++) vms.push(await take(pool, 64 * MiB));
    for (const vm of vms) vm.start("await new Promise(() => {});");
    expect(vms.map((vm) => vm.status().state)).toEqual(Array(16).fill("running"));
    expect(ledger.reservations).toBe(16);
    expect(ledger.waiting).toBe(0);
    expect(ledger.reservedBytes).toBeLessThanOrEqual(16 * 2 * MiB);
    for (const vm of vms) vm.dispose();
    // Two come back as spares (the pool keeps no more), the rest are dropped.
    expect(ledger.reservedBytes).toBe(2 * VM_OVERHEAD_BYTES);
    pool.dropSpare();
    expect(ledger.reservedBytes).toBe(0);
  });

  it("a VM's reservation follows its linear memory as it allocates", async () => {
    const ledger = new MemoryLedger({ budgetBytes: 80 * MiB });
    const vm = await take(new VmPool(ledger), 64 * MiB);
    vm.start(allocate(8));
    expect(vm.status().state).toBe("running");
    expect(ledger.reservedBytes).toBeGreaterThan(8 * MiB);
    expect(ledger.reservedBytes).toBeLessThan(12 * MiB);
    vm.dispose();
    expect(ledger.reservedBytes).toBe(0);
  });

  it("a VM that allocates past the isolate's room fails out of memory naming the isolate; other VMs keep running and can still allocate", async () => {
    const ledger = new MemoryLedger({ budgetBytes: 24 * MiB });
    const pool = new VmPool(ledger);
    const idle = await take(pool, 64 * MiB);
    idle.start("globalThis.n = 1; await new Promise(() => {});");
    const greedy = await take(pool, 64 * MiB);
    // Another VM of the isolate holds 12 MiB: 24 − 12 − 2 × 1.5 leaves ~9 MiB of room, under greedy's cap.
    const other = ledger.tryReserve(12 * MiB)!;
    let fault: unknown;
    try {
      greedy.start(allocate(16));
    } catch (error) {
      fault = error;
    }
    expect(fault).toBeInstanceOf(GuestFaultError);
    expect((fault as GuestFaultError).fault).toEqual({
      kind: "out_of_memory",
      isolate: expect.stringMatching(/^code mode VM memory for this isolate is exhausted \(24 MiB budget, [\d.]+ MiB in use\); try again shortly$/),
    });
    // Room it took stays accounted until its VM is disposed; then the other VM can use it.
    expect(ledger.reservedBytes).toBeLessThanOrEqual(ledger.budgetBytes + MiB);
    greedy.dispose();
    expect(idle.status().state).toBe("running");
    const roomy = await take(pool, 64 * MiB);
    roomy.start(allocate(6));
    expect(roomy.status().state).toBe("running");
    other.release();
    roomy.dispose();
    idle.dispose();
    pool.dropSpare();
    expect(ledger.reservedBytes).toBe(0);
  });

  it("a VM stopped by its own cap fails out of memory without naming the isolate", async () => {
    const ledger = new MemoryLedger({ budgetBytes: 80 * MiB });
    const vm = await take(new VmPool(ledger), 4 * MiB);
    expect(() => vm.start(allocate(16))).toThrow(GuestFaultError);
    expect(vm.fault).toEqual({ kind: "out_of_memory" });
    vm.dispose();
    expect(ledger.reservedBytes).toBe(0);
  });
});
