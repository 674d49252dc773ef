import { describe, expect, it } from "vitest";
import { QuickJS, type Snapshot } from "quickjs-wasi";
import { QUICKJS_MODULE } from "../../../wasm/quickjs";
import { pristineVm, resetToImage, restoreImage } from "../../../src/runtime";

// resetToImage for the pool's images (`repeated`) writes the image's zero pages as a fill and copies
// the rest, from page runs cached per image object. Images of unusual shapes, reset into instances a
// cell dirtied: each reset must give exactly what QuickJS.restore of the same image gives.

const options = { wasm: QUICKJS_MODULE, memoryLimit: 64 << 20 };
const PAGE = 4096;

type VmState = { memory: Uint8Array; stackPointer: number };

function stateOf(vm: QuickJS): VmState {
  const exports = vm._getExports() as unknown as { __stack_pointer: WebAssembly.Global };
  return { memory: new Uint8Array(vm._getMemory().buffer), stackPointer: exports.__stack_pointer.value as number };
}

function expectSameState(theirs: QuickJS, ours: QuickJS): void {
  const a = stateOf(theirs);
  const b = stateOf(ours);
  expect(b.memory.length).toBe(a.memory.length);
  expect(Buffer.from(b.memory).equals(Buffer.from(a.memory))).toBe(true);
  expect(b.stackPointer).toBe(a.stackPointer);
}

/** `used` holds exactly what QuickJS.restore of `image` gives. */
async function expectSameAsRestore(used: QuickJS, image: Snapshot): Promise<void> {
  const theirs = await QuickJS.restore(image, options);
  try {
    expectSameState(theirs, used);
  } finally {
    theirs.dispose();
  }
}

/** A VM of the pristine image whose stack region (zero pages in every image here) and heap a cell wrote to. */
async function dirtied(): Promise<QuickJS> {
  const { snapshot } = await pristineVm();
  const vm = await restoreImage(snapshot, { ...options, maxStackSize: 256 * 1024, interruptHandler: () => false });
  vm.evalCode(
    "const M = ['QZX', 'SECRET'].join(''); function deep(n) { const s = M + n; return n === 0 ? s.length : deep(n - 1) + s.length; }" +
      " try { deep(1e6); } catch (e) {} JSON.stringify(Array.from({ length: 300 }, (_, i) => M + i)).length",
  ).dispose();
  const memory = new Uint8Array(vm._getMemory().buffer);
  let written = 0;
  for (let p = 0; p < snapshot.memory.length / PAGE; p++) {
    const page = (bytes: Uint8Array) => bytes.subarray(p * PAGE, (p + 1) * PAGE);
    if (page(snapshot.memory).every((b) => b === 0) && page(memory).some((b) => b !== 0)) written++;
  }
  expect(written).toBeGreaterThan(16);
  return vm;
}

/** Reset a dirtied VM to `image` (as the pool does) and compare it with QuickJS.restore of the same image. */
async function expectResetLikeRestore(image: Snapshot, repeated = true): Promise<void> {
  const used = await dirtied();
  const theirs = await QuickJS.restore(image, options);
  try {
    expect(resetToImage(used, image, options, repeated)).toBe(true);
    expectSameState(theirs, used);
  } finally {
    theirs.dispose();
    used.dispose();
  }
}

/** `bytes` laid at a byte offset of a larger buffer (a view a word-wise scan cannot take). */
function atOffset(bytes: Uint8Array, offset: number): Uint8Array {
  const view = new Uint8Array(bytes.length + offset).subarray(offset);
  view.set(bytes);
  return view;
}

describe("resetting a dirtied VM to images of unusual shapes, zero pages filled", () => {
  it("an image whose bytes start at an odd offset of their buffer (scanned a byte at a time) gives what QuickJS.restore gives", async () => {
    const { snapshot } = await pristineVm();
    const odd = { ...snapshot, memory: atOffset(snapshot.memory, 1) };
    expect(odd.memory.byteOffset % 4).not.toBe(0);
    for (let round = 0; round < 2; round++) await expectResetLikeRestore(odd);
  });

  it("an image larger than the instance's memory, ending in a partial page of data or of zeros: the instance grows and gets exactly it", async () => {
    const { snapshot } = await pristineVm();
    const tailData = new Uint8Array(snapshot.memory.length + PAGE + 1000);
    tailData.set(snapshot.memory);
    tailData.fill(0xa5, snapshot.memory.length + PAGE);
    const tailZeros = new Uint8Array(snapshot.memory.length + PAGE + 1000);
    tailZeros.set(snapshot.memory);
    tailZeros.fill(0xa5, snapshot.memory.length, snapshot.memory.length + 100);
    for (const memory of [tailData, tailZeros]) {
      expect(memory.length % PAGE).not.toBe(0);
      await expectResetLikeRestore({ ...snapshot, memory });
    }
  });

  it("the same image reset to again and again, as the pool's and as a parked run's, after a cell dirtied it each time", async () => {
    const { snapshot } = await pristineVm();
    for (const repeated of [true, false, true, true, false]) await expectResetLikeRestore(snapshot, repeated);
  });

  it("two image objects of different bytes keep their own page runs: a reset to one never uses the other's", async () => {
    const { snapshot } = await pristineVm();
    // Same length, a different set of zero pages: some of the pristine image's zero pages hold data here.
    const other = snapshot.memory.slice();
    const zeroPages: number[] = [];
    for (let p = 0; p < other.length / PAGE; p++) if (other.subarray(p * PAGE, (p + 1) * PAGE).every((b) => b === 0)) zeroPages.push(p);
    expect(zeroPages.length).toBeGreaterThan(100);
    for (const p of zeroPages.filter((_, i) => i % 7 === 0)) other.fill(0x5a, p * PAGE + 8, p * PAGE + 64);
    await expectResetLikeRestore(snapshot);
    await expectResetLikeRestore({ ...snapshot, memory: other });
    await expectResetLikeRestore(snapshot);
    // The same bytes in another object: runs found for it, the same result.
    await expectResetLikeRestore({ ...snapshot, memory: snapshot.memory.slice() });
  });

  it("after a shallow cell, only the stack it reached is rewritten; an image with data lower down, or a deep cell, gets the whole region", async () => {
    const { snapshot } = await pristineVm();
    const other = snapshot.memory.slice();
    other.fill(0x5a, PAGE + 8, PAGE + 64);
    const used = await restoreImage(snapshot, { ...options, maxStackSize: 256 * 1024, interruptHandler: () => false });
    const exports = used._getExports() as unknown as { __stack_pointer: WebAssembly.Global; __stack_low: WebAssembly.Global };
    const memory = () => new Uint8Array(used._getMemory().buffer);
    const compare = (image: Snapshot) => expectSameAsRestore(used, image);
    try {
      used.evalCode("[1, 2, 3].map((x) => x + 1).join()").dispose();
      const reached = exports.__stack_low.value as number;
      expect(exports.__stack_pointer.value - reached).toBeLessThan(16 * 1024);
      // Stands for memory no cell of this engine writes (only a stack-pointer move reaches the stack region),
      // above the first 64 KiB, which every reset rewrites (a store through a null pointer lands there).
      memory()[32 * PAGE] = 0x77;
      memory()[8] = 0x77;
      expect(resetToImage(used, snapshot, options, true)).toBe(true);
      expect(memory()[32 * PAGE]).toBe(0x77);
      expect(memory()[8]).toBe(0);
      memory()[32 * PAGE] = 0;
      await compare(snapshot);
      expect(exports.__stack_low.value).toBe(exports.__stack_pointer.value);

      // Another image with data in the stack region's low pages: all of the region is written.
      used.evalCode("1 + 2").dispose();
      memory()[32 * PAGE] = 0x77;
      expect(resetToImage(used, { ...snapshot, memory: other }, options, true)).toBe(true);
      await compare({ ...snapshot, memory: other });
      // And back: the instance held data low down, so nothing under the shallow cell is taken as zero.
      used.evalCode("1 + 2").dispose();
      expect(resetToImage(used, snapshot, options, true)).toBe(true);
      await compare(snapshot);

      // A cell as deep as the engine lets it go: every stack byte it wrote is rewritten.
      used
        .evalCode(
          "const S = 'QZX' + 'SECRET'; function deep(n) { const s = S + n; return n === 0 ? s.length : deep(n - 1) + s.length; } try { deep(1e6) } catch {}",
        )
        .dispose();
      expect(exports.__stack_pointer.value - (exports.__stack_low.value as number)).toBeGreaterThan(200 * 1024);
      expect(resetToImage(used, snapshot, options, true)).toBe(true);
      await compare(snapshot);
    } finally {
      used.dispose();
    }
  });

  it("hostile cells at the stack's limit leave nothing under the low-water mark, and their resets give the image exactly", async () => {
    // The deepest a helper's 134 attack cells reached (a sort comparator recursing, 267 KB), and the shapes that
    // keep running after hitting the limit or recurse through native engine paths (a cell that grows memory past the image is
    // never reset: the pool drops its VM).
    const M = "const M = ['QZX', 'SECRET'].join('') + 0xc0ffee; ";
    const cells = [
      `${M} let d = 0; function r(n) { d = n; return [3, 1, 2, M].sort(() => (r(n + 1), 0)).length } try { r(0) } catch {} d`,
      `${M} let d = 0, left = 2000; function r(n) { d = Math.max(d, n); try { return r(n + 1) } catch (e) { if (left-- > 0) { try { return r(n + 1) } catch (e2) { return M + e2 } } return 0 } } r(0); d`,
      `${M} let d = 0; const o = { get x() { d++; return o.x + M } }; try { o.x } catch {} try { JSON.stringify({ toJSON: () => o.x }) } catch {} d`,
      `${M} let d = 0; function r(n) { d = n; return M.replace(/Q/, () => r(n + 1)) } try { r(0) } catch {} d`,
    ];
    const { snapshot } = await pristineVm();
    const used = await restoreImage(snapshot, { ...options, maxStackSize: 256 * 1024, interruptHandler: () => false });
    const exports = used._getExports() as unknown as { __stack_pointer: WebAssembly.Global; __stack_low: WebAssembly.Global };
    try {
      for (const cell of cells) {
        used.evalCode(cell).dispose();
        const low = exports.__stack_low.value as number;
        expect(exports.__stack_pointer.value - low).toBeGreaterThan(200 * 1024);
        // What the reset will not rewrite is zero already.
        expect(
          new Uint8Array(used._getMemory().buffer, 0, low - PAGE).every((b) => b === 0),
          `cell ${cells.indexOf(cell)}: zero under the mark`,
        ).toBe(true);
        expect(resetToImage(used, snapshot, options, true), `cell ${cells.indexOf(cell)}: reset`).toBe(true);
        await expectSameAsRestore(used, snapshot);
      }
    } finally {
      used.dispose();
    }
  });

  it("a store through a null pointer (quickjs-wasi's glue when wasm_malloc fails) is gone after the next reset", async () => {
    const { snapshot } = await pristineVm();
    const used = await restoreImage(snapshot, { ...options, maxStackSize: 256 * 1024, interruptHandler: () => false });
    try {
      const symbol = used.evalCode("Symbol.for('TENANT-A-SECRET')");
      // What dump() does with a failed wasm_malloc(4): the description's pointer is stored at address 0.
      (used._getExports() as unknown as { qjs_get_symbol_description(ptr: number, out: number): void }).qjs_get_symbol_description(symbol.ptr, 0);
      symbol.dispose();
      expect(new Uint8Array(used._getMemory().buffer, 0, 4).some((b) => b !== 0)).toBe(true);
      expect(resetToImage(used, snapshot, options, true)).toBe(true);
      await expectSameAsRestore(used, snapshot);
    } finally {
      used.dispose();
    }
  });
});
