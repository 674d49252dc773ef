import { describe, expect, it } from "vitest";
import { GuestVm } from "../../../src/runtime";
import { resetPreludeBytecodeForTests } from "../../../src/runtime";
import { InterruptGuard } from "../../../src/runtime";
import { buildPristineImage, decodeSnapshot, encodeSnapshot, pristineImage } from "../../../src/snapshot-store";

const host = { request() {}, output() {}, cancel() {} };
const guard = () => new InterruptGuard({ now: () => Date.now() }, Date.now() + 10_000, 10_000);

describe("pristine image", () => {
  it("is byte-identical however the isolate got here (a fresh isolate rebuilds the same image)", async () => {
    resetPreludeBytecodeForTests();
    const first = await buildPristineImage();
    // Unrelated VM activity in between, and a forgotten prelude cache, change nothing.
    const vm = await GuestVm.create({ memoryLimitBytes: 8 << 20 }, guard(), host);
    vm.installTools("[]");
    vm.start("globalThis.junk = new Array(10000).fill('x').join(''); return 1");
    vm.dispose();
    resetPreludeBytecodeForTests();
    const second = await buildPristineImage();
    expect(second.digest).toBe(first.digest);
    expect(second.memory.length).toBe(first.memory.length);
    expect(Buffer.from(second.memory).equals(Buffer.from(first.memory))).toBe(true);
  });

  it("a snapshot round-trips bit-exact through the page-delta codec", async () => {
    const vm = await GuestVm.create({ memoryLimitBytes: 64 << 20 }, guard(), host);
    vm.installTools("[]");
    vm.start("globalThis.data = Array.from({ length: 5000 }, (_, i) => i * 7); await new Promise(() => {});");
    const snap = vm.snapshot();
    const bytes = await encodeSnapshot(snap);
    const back = await decodeSnapshot(bytes);
    expect(back.memory.length).toBe(snap.memory.length);
    expect(Buffer.from(back.memory).equals(Buffer.from(snap.memory))).toBe(true);
    expect({ ...back, memory: undefined }).toEqual({ ...snap, memory: undefined });
    expect(bytes.length).toBeLessThan(64 * 1024);
    vm.dispose();
  });

  it("a snapshot against another image is refused, not restored against this one, when no registry can supply it", async () => {
    const vm = await GuestVm.create({ memoryLimitBytes: 64 << 20 }, guard(), host);
    const bytes = await encodeSnapshot(vm.snapshot());
    vm.dispose();
    const image = await pristineImage();
    const saved = image.digest;
    image.digest = "0".repeat(64);
    try {
      await expect(decodeSnapshot(bytes)).rejects.toThrow(/parked by another build .* no image registry is bound/);
    } finally {
      image.digest = saved;
    }
  });
});
