import { describe, expect, it } from "vitest";
import { QuickJS, type Snapshot } from "quickjs-wasi";
import { QUICKJS_MODULE } from "../../../wasm/quickjs";
import { GuestVm, InterruptGuard, MemoryLedger, pristineVm, resetToImage, restoreImage, VmPool } from "../../../src/runtime";
import { setLogSink } from "../../../src/observability";

const options = { wasm: QUICKJS_MODULE, memoryLimit: 64 << 20 };
const host = { request() {}, output() {}, cancel() {} };
const guard = () => new InterruptGuard({ now: () => Date.now() }, Date.now() + 10_000, 10_000);

function memoryOf(vm: QuickJS): Uint8Array {
  return new Uint8Array(vm._getMemory().buffer);
}

function stackPointerOf(vm: QuickJS): number {
  return (vm._getExports() as unknown as { __stack_pointer: WebAssembly.Global }).__stack_pointer.value as number;
}

/** Restore `snapshot` both ways; the VMs are disposed after `check`. */
async function both(snapshot: Snapshot, check: (theirs: QuickJS, ours: QuickJS) => void): Promise<void> {
  const theirs = await QuickJS.restore(snapshot, options);
  const ours = await restoreImage(snapshot, options);
  try {
    check(theirs, ours);
  } finally {
    theirs.dispose();
    ours.dispose();
  }
}

function expectSameMemory(theirs: QuickJS, ours: QuickJS): void {
  const a = memoryOf(theirs);
  const b = memoryOf(ours);
  expect(b.length).toBe(a.length);
  expect(Buffer.from(b).equals(Buffer.from(a))).toBe(true);
  expect(stackPointerOf(ours)).toBe(stackPointerOf(theirs));
}

// restoreImage copies only the pages that differ from a fresh instance: the VM it gives must be
// exactly the one QuickJS.restore gives, for the pristine image and for any other image.
describe("restoring an image without copying what a fresh instance holds", () => {
  it("gives memory byte-identical to QuickJS.restore, on the first restore of the image and on later ones", async () => {
    const { snapshot } = await pristineVm();
    for (let round = 0; round < 3; round++) await both(snapshot, expectSameMemory);
  });

  it("gives the same memory as QuickJS.restore for a cell's snapshot with a grown heap", async () => {
    const vm = await GuestVm.create({ memoryLimitBytes: 64 << 20 }, guard(), host);
    vm.installTools("[]");
    vm.start("globalThis.data = Array.from({ length: 20000 }, (_, i) => ({ i, s: 'v' + i })); await new Promise(() => {});");
    const snap = vm.snapshot();
    const snapshot = { ...snap, memory: snap.memory.slice() };
    vm.dispose();
    const { snapshot: image } = await pristineVm();
    expect(snapshot.memory.length).toBeGreaterThan(image.memory.length);
    for (let round = 0; round < 2; round++) await both(snapshot, expectSameMemory);
  });

  it("runs code in the restored VM with the same results as QuickJS.restore", async () => {
    const { snapshot } = await pristineVm();
    const program =
      "const o = {}; for (let i = 0; i < 5000; i++) o['k' + i] = [i, String(i)]; JSON.stringify([Object.keys(o).length, o.k4999, typeof Math.random])";
    await both(snapshot, (theirs, ours) => {
      const a = theirs.evalCode(program);
      const b = ours.evalCode(program);
      expect(b.toString()).toBe(a.toString());
      expect(b.toString()).toBe('[5000,[4999,"4999"],"function"]');
      a.dispose();
      b.dispose();
      expectSameMemory(theirs, ours);
    });
  });
});

/** The QuickJS object's JS-side state, as comparable data (instance-bound fields left out). */
function jsState(vm: QuickJS): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(vm)) {
    if (["module", "instance", "exports", "encoder", "decoder"].includes(key)) continue;
    out[key] =
      value instanceof Map || value instanceof Set ? `${value.constructor.name}(${value.size})` : typeof value === "function" ? "function" : value;
  }
  return out;
}

/** A cell's VM from `pool` (8 MiB limit), bound to `budget`. */
function takeFrom(pool: VmPool) {
  return async (budget = guard()) => {
    const taken = await pool.take(8 << 20, {
      deadline: Date.now() + 10_000,
      clock: { now: () => Date.now() },
      signal: new AbortController().signal,
      owner: "t",
    });
    if (!taken.ok) throw new Error("no room");
    return taken.vm.bind(budget, host);
  };
}

// An exec's VM goes back to the pool and is reset in place for the next cell: it must be exactly
// the VM a fresh restore of the image gives, whatever the cell did in it.
describe("resetting a used VM to the image in place", () => {
  it("gives memory, stack pointer and JS-side state identical to a fresh restore, after a cell used it", async () => {
    const { snapshot } = await pristineVm();
    const used = await restoreImage(snapshot, { ...options, interruptHandler: () => false });
    used.evalCode("globalThis.secret = 'tenant-a'; globalThis.rows = Array.from({ length: 300 }, (_, i) => ({ i })); 1").dispose();
    used.newFunction("leftover", () => used.undefined).dispose();
    expect(new Uint8Array(used._getMemory().buffer).length).toBe(snapshot.memory.length);
    expect(resetToImage(used, snapshot, options)).toBe(true);
    const fresh = await restoreImage(snapshot, options);
    try {
      expectSameMemory(fresh, used);
      expect(jsState(used)).toEqual(jsState(fresh));
      const probe = "JSON.stringify([typeof secret, typeof rows, typeof leftover])";
      const a = fresh.evalCode(probe);
      const b = used.evalCode(probe);
      expect(b.toString()).toBe('["undefined","undefined","undefined"]');
      expect(b.toString()).toBe(a.toString());
      a.dispose();
      b.dispose();
    } finally {
      fresh.dispose();
      used.dispose();
    }
  });

  it.each([
    ["an image reset to again and again (zero pages filled, the rest copied)", true],
    ["a snapshot restored once (copied whole)", false],
  ])("clears what deep recursion left in the stack region, which the image holds as zero pages: %s", async (_, repeated) => {
    const { snapshot } = await pristineVm();
    const used = await restoreImage(snapshot, { ...options, interruptHandler: () => false });
    const zeroPages = (bytes: Uint8Array) => {
      const pages = new Set<number>();
      for (let p = 0; p < snapshot.memory.length / 4096; p++) if (bytes.subarray(p * 4096, (p + 1) * 4096).every((b) => b === 0)) pages.add(p);
      return pages;
    };
    const imageZero = zeroPages(snapshot.memory);
    expect(imageZero.size).toBeGreaterThan(100);
    used.evalCode("function deep(n) { const s = 'tenant-a:' + n; return n === 0 ? s.length : deep(n - 1) + s.length; } deep(400)").dispose();
    // The cell wrote into pages that are zero in the image: a reset that skipped them would leave that behind.
    const after = new Uint8Array(used._getMemory().buffer);
    const dirtied = [...imageZero].filter((p) => after.subarray(p * 4096, (p + 1) * 4096).some((b) => b !== 0));
    expect(dirtied.length).toBeGreaterThan(10);
    expect(resetToImage(used, snapshot, options, repeated)).toBe(true);
    const fresh = await restoreImage(snapshot, options);
    try {
      expectSameMemory(fresh, used);
    } finally {
      fresh.dispose();
      used.dispose();
    }
  });

  it("refuses a VM whose memory grew past the image's, and a disposed one", async () => {
    const { snapshot } = await pristineVm();
    const grown = await restoreImage(snapshot, options);
    grown.evalCode("globalThis.big = []; for (let i = 0; i < 100000; i++) big.push('v' + i); 1").dispose();
    expect(grown._getMemory().buffer.byteLength).toBeGreaterThan(snapshot.memory.length);
    expect(resetToImage(grown, snapshot, options)).toBe(false);
    grown.dispose();
    expect(resetToImage(grown, snapshot, options)).toBe(false);
  });

  it("the pool hands a cell's VM to the next cell reset: the earlier cell's globals are gone, and a faulted VM is never reused", async () => {
    const ledger = new MemoryLedger({ budgetBytes: 64 << 20 });
    const pool = new VmPool(ledger);
    const take = takeFrom(pool);
    const first = await take();
    first.installTools("[]");
    first.start("globalThis.secret = 'tenant-a'; Object.prototype.polluted = 1; return 1;");
    expect(first.status().state).toBe("completed");
    first.dispose();
    expect(pool.spareReady).toBe(true);
    const second = await take();
    second.installTools("[]");
    second.start("return [typeof secret, ({}).polluted === undefined, typeof Math.random()];");
    expect(second.status().state).toBe("completed");
    expect(JSON.parse(second.valueJson()!)).toEqual(["undefined", true, "number"]);
    second.dispose();
    pool.dropSpare();
    expect(ledger.reservedBytes).toBe(0);
    // Stopped by its budget mid-loop: the VM faulted and is dropped, not recycled.
    const third = await take(new InterruptGuard({ now: () => Date.now() }, Date.now() - 1, 1));
    third.installTools("[]");
    expect(() => third.start("for (;;) {}")).toThrow();
    expect(third.fault).not.toBeNull();
    third.dispose();
    expect(pool.spareBytes).toBe(0);
    expect(ledger.reservedBytes).toBe(0);
  });

  it("a reset that throws part way never hands the instance out, and its room goes back to the isolate", async () => {
    const ledger = new MemoryLedger({ budgetBytes: 64 << 20 });
    const pool = new VmPool(ledger);
    const lines: string[] = [];
    const restoreSink = setLogSink((line) => void lines.push(line));
    try {
      const take = takeFrom(pool);
      const first = await take();
      first.installTools("[]");
      first.start("globalThis.secret = 'tenant-a'; return 1;");
      const instance = (first as unknown as { vm: QuickJS }).vm;
      first.dispose();
      expect(pool.spareReady).toBe(true);
      // The used instance's memory fails once its reset has begun (as a refused grow would).
      Object.defineProperty(instance._getMemory(), "buffer", {
        get() {
          throw new RangeError("memory unavailable");
        },
      });
      const second = await take();
      expect((second as unknown as { vm: QuickJS }).vm).not.toBe(instance);
      second.installTools("[]");
      second.start("return typeof secret;");
      expect(second.valueJson()).toBe('"undefined"');
      second.dispose();
      pool.dropSpare();
      expect(ledger.reservedBytes).toBe(0);
      expect(lines.some((l) => l.includes("vm.reuse") && l.includes("memory unavailable"))).toBe(true);
    } finally {
      restoreSink();
    }
  });
});
