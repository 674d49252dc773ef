import { describe, expect, it } from "vitest";
import { GUEST_RANDOM_SOURCE, GuestVm, guestSeedState, InterruptGuard } from "../../../src/runtime";

// Every cell VM is a copy of one image, so the host seeds each VM's Math.random. After the first
// VM (seeded through the guest, which shows where the generator's state lives), seeding writes the
// state straight into the VM's memory: these tests prove the write lands in the generator itself.
const host = { request() {}, output() {}, cancel() {} };
const guard = () => new InterruptGuard({ now: () => Date.now() }, Date.now() + 10_000, 10_000);

/** The guest's own generator source (GUEST_RANDOM_SOURCE) run on the host, from a state read out of a VM. */
function draws(state: Int32Array, n: number): number[] {
  const math = { imul: Math.imul, random: () => NaN };
  const define = (o: object, k: string, d: PropertyDescriptor) => Object.defineProperty(o, k, d);
  const { rs } = new Function("defineProperty", "Math", `${GUEST_RANDOM_SOURCE}; return { rs };`)(define, math) as { rs: Int32Array };
  rs.set(state);
  return Array.from({ length: n }, () => math.random());
}

async function cellVm(): Promise<{ vm: GuestVm; state: Int32Array }> {
  const vm = await GuestVm.create({ memoryLimitBytes: 16 << 20 }, guard(), host);
  const offset = GuestVm.seedStateOffset;
  const state = typeof offset === "number" ? new Int32Array(vm.memoryImage().slice(offset, offset + 16).buffer) : new Int32Array(4);
  return { vm, state };
}

function drawIn(vm: GuestVm, n: number): number[] {
  vm.installTools("[]");
  vm.start(`return Array.from({ length: ${n} }, () => Math.random());`);
  expect(vm.status().state).toBe("completed");
  return JSON.parse(vm.valueJson()!) as number[];
}

describe("seeding a cell VM's Math.random", () => {
  it("finds the generator's state once, then writes each VM's seed where the guest's generator reads it", async () => {
    (await cellVm()).vm.dispose();
    expect(typeof GuestVm.seedStateOffset).toBe("number");
    const a = await cellVm();
    const b = await cellVm();
    try {
      expect(Array.from(a.state)).not.toEqual([0, 0, 0, 0]);
      expect(Array.from(a.state)).not.toEqual(Array.from(b.state));
      // What the cell draws is exactly the generator started from the state the host wrote.
      expect(drawIn(a.vm, 6)).toEqual(draws(a.state, 6));
      expect(drawIn(b.vm, 6)).toEqual(draws(b.state, 6));
    } finally {
      a.vm.dispose();
      b.vm.dispose();
    }
  });

  it("computes the state the guest's own seed() leaves (its source run on the host)", () => {
    const define = (o: object, k: string, d: PropertyDescriptor) => Object.defineProperty(o, k, d);
    const guest = new Function("defineProperty", "Math", `${GUEST_RANDOM_SOURCE}; return { rs, seed };`)(define, { imul: Math.imul }) as {
      rs: Int32Array;
      seed(a: number, b: number, c: number, d: number): void;
    };
    const vectors: Array<[number, number, number, number]> = [
      [0, 0, 0, 0],
      [0xdeadbeef, 1, 0x80000000, 42],
      [0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff],
      [1, 2, 3, 4],
    ];
    for (const words of vectors) {
      guest.seed(...words);
      expect(Array.from(guestSeedState(words))).toEqual(Array.from(guest.rs));
    }
    expect(Array.from(guestSeedState([0, 0, 0, 0]))).not.toEqual([0, 0, 0, 0]);
  });
});
