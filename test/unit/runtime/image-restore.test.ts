import { describe, expect, it } from "vitest";
import { QuickJS, type Snapshot } from "quickjs-wasi";
import { QUICKJS_MODULE } from "../../../wasm/quickjs";
import { GuestVm, InterruptGuard, pristineVm, restoreImage } from "../../../src/runtime";

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
