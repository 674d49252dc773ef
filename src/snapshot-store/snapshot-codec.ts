import { QuickJS, type Snapshot } from "quickjs-wasi";
import { pristineImage } from "./pristine-image";

/**
 * Snapshot bytes for storage. A snapshot is the VM's whole linear memory (1.4 MB for a
 * fresh VM), and most of it is identical to the pristine image every VM starts from, so
 * only the 4 KiB pages that differ are kept, XOR-ed against the image (unchanged bytes
 * become zeros), then gzip-compressed:
 *   u32 header length · header JSON · page bitmap · padding to 4 bytes · changed pages
 */
const PAGE = 4096;
const FORMAT = 1;

type Header = {
  v: number;
  base: string;
  len: number;
  stackPointer: number;
  runtimePtr: number;
  contextPtr: number;
  extensions: Snapshot["extensions"];
};

/** Size the limit is checked against: the raw snapshot (memory) plus its header. */
export function rawSnapshotBytes(snapshot: Snapshot): number {
  return snapshot.memory.length + 256;
}

export async function encodeSnapshot(snapshot: Snapshot): Promise<Uint8Array> {
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
  const header: Header = {
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

export async function decodeSnapshot(bytes: Uint8Array): Promise<Snapshot> {
  const base = await pristineImage();
  const raw = await decompress(bytes);
  const headerLength = new DataView(raw.buffer, raw.byteOffset, raw.byteLength).getUint32(0, true);
  const header = JSON.parse(new TextDecoder().decode(raw.subarray(4, 4 + headerLength))) as Header;
  if (header.v !== FORMAT) throw new Error(`unknown snapshot format ${header.v}`);
  if (header.base !== base.digest) throw new Error("snapshot was taken with a different engine image");
  const pages = Math.ceil(header.len / PAGE);
  const bitmap = raw.subarray(4 + headerLength, 4 + headerLength + Math.ceil(pages / 8));
  // Start from the image (one copy), then patch the changed pages.
  let memory: Uint8Array;
  if (header.len <= base.memory.length) memory = base.memory.slice(0, header.len);
  else {
    memory = new Uint8Array(header.len);
    memory.set(base.memory);
  }
  let at = align4(4 + headerLength + bitmap.length);
  for (let p = 0; p < pages; p++) {
    if (!(bitmap[p >> 3]! & (1 << (p & 7)))) continue;
    const start = p * PAGE;
    const end = Math.min(start + PAGE, header.len);
    if (at + (end - start) > raw.length) throw new Error("snapshot is truncated");
    xorInto(memory, start, raw.subarray(at, at + (end - start)), base.memory.subarray(start, end), 0, end - start);
    at += PAGE;
  }
  return { memory, stackPointer: header.stackPointer, runtimePtr: header.runtimePtr, contextPtr: header.contextPtr, extensions: header.extensions };
}

/** Page data starts 4-byte aligned so it can be XOR-ed 32 bits at a time. */
function align4(n: number): number {
  return (n + 3) & ~3;
}

/** dst[at + k] = a[start + k] ^ b[start + k] for the range (b shorter → zeros); 32 bits at a time when aligned. */
function xorInto(dst: Uint8Array, at: number, a: Uint8Array, b: Uint8Array, start: number, end: number): void {
  const n = end - start;
  const bEnd = Math.min(end, b.length);
  const aligned =
    (dst.byteOffset + at) % 4 === 0 && (a.byteOffset + start) % 4 === 0 && (b.byteOffset + start) % 4 === 0 && n % 4 === 0 && bEnd === end;
  if (aligned) {
    const d = new Uint32Array(dst.buffer, dst.byteOffset + at, n / 4);
    const x = new Uint32Array(a.buffer, a.byteOffset + start, n / 4);
    const y = new Uint32Array(b.buffer, b.byteOffset + start, n / 4);
    for (let i = 0; i < d.length; i++) d[i] = x[i]! ^ y[i]!;
    return;
  }
  for (let i = 0; i < n; i++) dst[at + i] = a[start + i]! ^ (start + i < bEnd ? b[start + i]! : 0);
}

function samePage(mem: Uint8Array, base: Uint8Array, start: number): boolean {
  const end = Math.min(start + PAGE, mem.length);
  if (end > base.length) return false;
  // Pages are 4 KiB-aligned within wasm memory: compare 32 bits at a time.
  if ((mem.byteOffset + start) % 4 === 0 && (base.byteOffset + start) % 4 === 0 && (end - start) % 4 === 0) {
    const a = new Uint32Array(mem.buffer, mem.byteOffset + start, (end - start) / 4);
    const b = new Uint32Array(base.buffer, base.byteOffset + start, (end - start) / 4);
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
    return true;
  }
  for (let i = start; i < end; i++) if (mem[i] !== base[i]) return false;
  return true;
}

export async function compress(raw: Uint8Array): Promise<Uint8Array> {
  return collect(new Blob([raw]).stream().pipeThrough(new CompressionStream("gzip")));
}

export async function decompress(bytes: Uint8Array): Promise<Uint8Array> {
  return collect(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip")));
}

async function collect(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** QuickJS's own full-memory serialization (the baseline the page-delta format is measured against). */
export { serializeSnapshotFull as serializeSnapshot, deserializeSnapshotFull as deserializeSnapshot };
function serializeSnapshotFull(snapshot: Snapshot): Uint8Array {
  return QuickJS.serializeSnapshot(snapshot);
}
function deserializeSnapshotFull(raw: Uint8Array): Snapshot {
  return QuickJS.deserializeSnapshot(raw);
}
