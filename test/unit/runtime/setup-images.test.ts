import { describe, expect, it } from "vitest";
import { GUEST_ABI_VERSION, GuestVm, InterruptGuard, MemoryLedger, pristineVm, VmPool, type VmSetup } from "../../../src/runtime";

// A turn's tool globals (its VM setup) are the same for every cell of the turn, and for every turn
// of the same content: from a setup's second install the pool keeps an image of a VM with it
// installed, and the next VMs for that setup are copies of it. These tests hold the pool to what
// that must never change: a VM carries only the setup it was asked for, nothing of earlier cells,
// its own Math.random seed, and images count in the isolate's memory ledger.

const host = { request() {}, output() {}, cancel() {} };
const guard = () => new InterruptGuard({ now: () => Date.now() }, Date.now() + 10_000, 10_000);
const wait = { deadline: Date.now() + 60_000, clock: { now: () => Date.now() }, signal: new AbortController().signal, owner: "t" };
const LIMIT = 16 << 20;

/** A setup that defines globals `<name>_<i>` (many tool handles, so the image is larger than the pristine one), counting its installs. */
function setup(name: string, tools = 300): VmSetup & { installs: number } {
  const meta = JSON.stringify(
    Array.from({ length: tools }, (_, i) => ({ callableName: `${name}_${i}`, toolName: `${name}_${i}`, description: "d".repeat(200) })),
  );
  const names = JSON.stringify(Array.from({ length: tools }, (_, i) => `${name}_${i}`));
  const s = {
    installs: 0,
    install(vm: GuestVm) {
      s.installs++;
      vm.installTools(meta, names);
    },
  };
  return s;
}

async function take(pool: VmPool, s: VmSetup | null) {
  const taken = await pool.take(LIMIT, wait, s);
  if (!taken.ok) throw new Error("no room");
  const vm = taken.vm.bind(guard(), host);
  if (!taken.installed && s) {
    s.install(vm);
    pool.installed(s, vm);
  }
  return { vm, installed: taken.installed };
}

function run(vm: GuestVm, code: string): unknown {
  vm.start(code);
  const status = vm.status();
  if (status.state !== "completed") throw new Error(`${status.state}: ${vm.errorMessage()}`);
  return JSON.parse(vm.valueJson() ?? "null");
}

/** Let the pool's reset timer run (it resets a returned VM once the current request is answered). */
const settle = () => new Promise((r) => setTimeout(r, 5));

describe("VM setup images", () => {
  it("keeps an image from a setup's second install; later VMs for it come installed, each pristine and seeded apart", async () => {
    const ledger = new MemoryLedger({ budgetBytes: 64 << 20 });
    const pool = new VmPool(ledger);
    const a = setup("alpha");
    const draws: number[][] = [];
    for (let i = 0; i < 5; i++) {
      const { vm, installed } = await take(pool, a);
      // The first two install (the second keeps the image); every later VM is a copy of it.
      expect(installed).toBe(i >= 2);
      const seen = run(
        vm,
        `const out = [typeof alpha_0, typeof alpha_299, typeof polluted, ({}).tainted === undefined, Array.from({ length: 3 }, () => Math.random())];
         globalThis.polluted = 1; Object.prototype.tainted = 1; alpha_0 = null;
         return out;`,
      ) as [string, string, string, boolean, number[]];
      expect(seen.slice(0, 4)).toEqual(["function", "function", "undefined", true]);
      draws.push(seen[4]);
      vm.dispose();
      await settle();
    }
    expect(a.installs).toBe(2);
    expect(pool.images.size.images).toBe(1);
    // Its VMs are larger than the pristine image: a pristine spare grows to it before the copy.
    expect(pool.images.size.bytes).toBeGreaterThan((await pristineVm()).snapshot.memory.byteLength);
    // Every VM drew its own sequence.
    expect(new Set(draws.map((d) => d.join(","))).size).toBe(draws.length);
    pool.dropIdle();
    expect(ledger.reservedBytes).toBe(0);
  });

  it("never hands a VM made for one setup to another: the other's install runs, and the first's globals are not there", async () => {
    const pool = new VmPool(new MemoryLedger({ budgetBytes: 64 << 20 }));
    const a = setup("alpha");
    const b = setup("beta");
    for (let i = 0; i < 3; i++) {
      const { vm } = await take(pool, a);
      vm.dispose();
      await settle();
    }
    expect(pool.spareReady).toBe(true);
    const { vm, installed } = await take(pool, b);
    expect(installed).toBe(false);
    expect(b.installs).toBe(1);
    expect(run(vm, "return [typeof alpha_0, typeof beta_0]")).toEqual(["undefined", "function"]);
    vm.dispose();
    await settle();
    // Without a setup: a pristine VM, no tools of anyone.
    const bare = await take(pool, null);
    bare.vm.installTools("[]");
    expect(run(bare.vm, "return [typeof alpha_0, typeof beta_0]")).toEqual(["undefined", "undefined"]);
    bare.vm.dispose();
    pool.dropIdle();
  });

  it("keeps at most two images, holds their bytes in the ledger, and gives them up when the ledger runs short", async () => {
    const ledger = new MemoryLedger({ budgetBytes: 64 << 20 });
    const pool = new VmPool(ledger);
    const setups = [setup("s1"), setup("s2"), setup("s3")];
    for (const s of setups)
      for (let i = 0; i < 2; i++) {
        const { vm } = await take(pool, s);
        vm.dispose();
        await settle();
      }
    expect(pool.images.size.images).toBe(2);
    expect(pool.images.size.bytes).toBeGreaterThan(0);
    expect(ledger.reservedBytes).toBe(pool.idle.bytes);
    // The least recently used (s1) went first: its next VM installs again.
    const again = await take(pool, setups[0]!);
    expect(again.installed).toBe(false);
    again.vm.dispose();
    // A shortage of room takes the images along with the spares.
    pool.dropIdle();
    expect(pool.images.size).toEqual({ images: 0, bytes: 0 });
    expect(ledger.reservedBytes).toBe(0);
  });
});

describe("restoring a parked VM into a spare's instance", () => {
  it("gives the memory a fresh restore gives, and the run goes on from where it parked", async () => {
    const pool = new VmPool(new MemoryLedger({ budgetBytes: 64 << 20 }));
    const requests: Array<{ id: number }> = [];
    const parker = await GuestVm.create({ memoryLimitBytes: LIMIT }, guard(), {
      ...host,
      request: (id: number) => void requests.push({ id }),
    });
    parker.installTools(JSON.stringify([{ callableName: "ask", toolName: "ask" }]));
    parker.start("globalThis.rows = Array.from({ length: 50 }, (_, i) => i); const v = await ask({}); return [v, rows.length];");
    expect(requests).toHaveLength(1);
    const snap = parker.snapshot();
    const token = parker.controlToken;
    parker.dispose();
    // A spare to lend its instance: a VM a cell used and gave back.
    const { vm: used } = await take(pool, null);
    used.installTools("[]");
    run(used, "globalThis.other = 'tenant-b'; return 1");
    used.dispose();
    const instance = pool.instanceFor(snap.memory.byteLength);
    expect(instance).not.toBeNull();
    expect(pool.spareCount).toBe(0);
    const resumed = await GuestVm.restore(snap, token, { memoryLimitBytes: LIMIT }, guard(), host, GUEST_ABI_VERSION, instance);
    const fresh = await GuestVm.restore(snap, token, { memoryLimitBytes: LIMIT }, guard(), host, GUEST_ABI_VERSION);
    try {
      // Nothing of the lending cell is left: the same bytes as a restore into a new instance.
      expect(Buffer.from(resumed.memoryImage()).equals(Buffer.from(fresh.memoryImage()))).toBe(true);
      resumed.settle(requests[0]!.id, true, '"answer"');
      expect(resumed.status().state).toBe("completed");
      expect(JSON.parse(resumed.valueJson()!)).toEqual(["answer", 50]);
    } finally {
      fresh.dispose();
      resumed.dispose();
    }
  });
});
