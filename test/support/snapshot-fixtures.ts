/**
 * Snapshot fixtures for deploy-survival tests: snapshots as other builds wrote them.
 * - `encodeFormat1`: the encoder of format 1 as it shipped before images were registered
 *   (src/snapshot-store/snapshot-codec.ts at 79949ec; only its 32-bit fast paths dropped, the
 *   bytes are the same), so old parked runs are tested against the layout they really have.
 * - `otherBuild`: a stand-in for another build's pristine image (this build's image plus guest
 *   state, under a digest of its own prelude text), with the record that build would register.
 */
import type { Snapshot } from "quickjs-wasi";
import { GUEST_ABI_VERSION, GUEST_PRELUDE } from "../../src/runtime";
import { GuestVm } from "../../src/runtime";
import { InterruptGuard } from "../../src/runtime";
import { engineImage } from "../../src/snapshot-store";
import type { ImageRecord } from "../../src/snapshot-store";
import { pristineDigest, pristineImage } from "../../src/snapshot-store";
import { compress, encodeMemoryDelta, openSnapshot, writeSnapshot, type SnapshotBase } from "../../src/snapshot-store";

// ---- format 1, as of 79949ec --------------------------------------------------------------
const PAGE = 4096;
const FORMAT = 1;

export async function encodeFormat1(snapshot: Snapshot): Promise<Uint8Array> {
  const base = await pristineImage();
  const mem = snapshot.memory;
  const pages = Math.ceil(mem.length / PAGE);
  const bitmap = new Uint8Array(Math.ceil(pages / 8));
  const changed: number[] = [];
  for (let p = 0; p < pages; p++) {
    if (!samePage(mem, base.memory, p * PAGE)) {
      bitmap[p >> 3]! |= 1 << (p & 7);
      changed.push(p);
    }
  }
  const header = {
    v: FORMAT,
    base: base.digest,
    len: mem.length,
    stackPointer: snapshot.stackPointer,
    runtimePtr: snapshot.runtimePtr,
    contextPtr: snapshot.contextPtr,
    extensions: snapshot.extensions,
  };
  const headerBytes = new TextEncoder().encode(JSON.stringify(header));
  let at = align4(4 + headerBytes.length + bitmap.length);
  const out = new Uint8Array(at + changed.length * PAGE);
  new DataView(out.buffer).setUint32(0, headerBytes.length, true);
  out.set(headerBytes, 4);
  out.set(bitmap, 4 + headerBytes.length);
  for (const p of changed) {
    xorInto(out, at, mem, base.memory, p * PAGE, Math.min(p * PAGE + PAGE, mem.length));
    at += PAGE;
  }
  return compress(out);
}

function align4(n: number): number {
  return (n + 3) & ~3;
}

function xorInto(dst: Uint8Array, at: number, a: Uint8Array, b: Uint8Array, start: number, end: number): void {
  const n = end - start;
  const bEnd = Math.min(end, b.length);
  for (let i = 0; i < n; i++) dst[at + i] = a[start + i]! ^ (start + i < bEnd ? b[start + i]! : 0);
}

function samePage(mem: Uint8Array, base: Uint8Array, start: number): boolean {
  const end = Math.min(start + PAGE, mem.length);
  if (end > base.length) return false;
  for (let i = start; i < end; i++) if (mem[i] !== base[i]) return false;
  return true;
}

// ---- another build ----------------------------------------------------------------------------
export type OtherBuild = { memory: Uint8Array; digest: string; record: ImageRecord };

/** Another build's pristine image: differs from this build's in memory and digest. */
export async function otherBuild(marker: string): Promise<OtherBuild> {
  const engine = await engineImage();
  const vm = await GuestVm.prepare({ memoryLimitBytes: 67108864 }, true);
  try {
    vm.bind(new InterruptGuard({ now: () => Date.now() }, Date.now() + 10_000, 10_000), { request() {}, output() {}, cancel() {} });
    vm.start(`globalThis.otherBuild = ${JSON.stringify(marker)} + "-".repeat(5000);`);
    const memory = vm.memoryImage();
    const prelude = `${GUEST_PRELUDE}\n// ${marker}\n`;
    const digest = await pristineDigest(memory, prelude);
    const image = await encodeMemoryDelta({ engine: engine.id }, memory, engine.memory);
    return { memory, digest, record: { digest, engine: engine.id, prelude, image } };
  } finally {
    vm.dispose();
  }
}

/** Write a snapshot as a build with these traits would have (header fields set by the test). */
export async function rewrite(
  snapshot: Snapshot,
  traits: { base: SnapshotBase; baseMemory: Uint8Array; abi?: number; engine?: string },
): Promise<Uint8Array> {
  const engine = await engineImage();
  return writeSnapshot(snapshot, { abi: traits.abi ?? GUEST_ABI_VERSION, engine: traits.engine ?? engine.id, base: traits.base }, traits.baseMemory);
}

/** The header of stored snapshot bytes. */
export async function headerOf(bytes: Uint8Array) {
  return (await openSnapshot(bytes)).header;
}
