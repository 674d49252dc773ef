import { QuickJS, type Snapshot } from "quickjs-wasi";

/**
 * The stored byte format of a parked VM. A snapshot is the VM's whole linear memory (1.4 MB
 * for a fresh VM), and most of it is identical to a base image, so only the 4 KiB pages that
 * differ are kept, XOR-ed against the base (unchanged bytes become zeros), then gzip'd:
 *   u32 header length · header JSON · page bitmap · padding to 4 bytes · changed pages
 *
 * Format 2 headers say which base to XOR against and which engine and guest ABI wrote the
 * memory; format 1 (before deploys were survivable) only named the build's image digest.
 * Pristine images kept in the image registry use the same page layout against the engine
 * image (`encodeMemoryDelta`).
 */
const PAGE = 4096;
export const SNAPSHOT_FORMAT = 2;

/**
 * What a snapshot's pages are XOR-ed against: the pristine image of the build that parked it
 * (by digest; small deltas, but another build needs that image from the registry), or the
 * engine image every build on the same engine rebuilds itself (larger, self-contained).
 */
export type SnapshotBase = { kind: "image"; digest: string } | { kind: "engine" };

type VmRegisters = Omit<Snapshot, "memory">;

/** A stored snapshot's header, format 1 normalized to format 2's fields. */
export type SnapshotHeader = VmRegisters & {
  format: 1 | 2;
  /** Guest ABI of the prelude inside the memory (format 1 predates the number: 1). */
  abi: number;
  /** Engine that wrote the memory; undefined for format 1, whose image digest implies it. */
  engine: string | undefined;
  base: SnapshotBase;
  len: number;
};

type HeaderV2 = VmRegisters & { v: 2; abi: number; engine: string; base: SnapshotBase; len: number };
type HeaderV1 = VmRegisters & { v: 1; base: string; len: number };

/** A snapshot's bytes, unzipped and its header read; `patch` rebuilds the memory from its base. */
export type OpenedSnapshot = { header: SnapshotHeader; patch(base: Uint8Array): Snapshot };

/** Thrown for bytes that are not a readable snapshot (truncated, not gzip, bad header). */
export class SnapshotFormatError extends Error {}

/** Size the limit is checked against: the raw snapshot (memory) plus its header. */
export function rawSnapshotBytes(snapshot: Snapshot): number {
  return snapshot.memory.length + 256;
}

export async function writeSnapshot(
  snapshot: Snapshot,
  meta: { abi: number; engine: string; base: SnapshotBase },
  baseMemory: Uint8Array,
): Promise<Uint8Array> {
  const header: HeaderV2 = {
    v: SNAPSHOT_FORMAT,
    abi: meta.abi,
    engine: meta.engine,
    base: meta.base,
    len: snapshot.memory.length,
    stackPointer: snapshot.stackPointer,
    runtimePtr: snapshot.runtimePtr,
    contextPtr: snapshot.contextPtr,
    extensions: snapshot.extensions,
  };
  return compress(pageDelta(header, snapshot.memory, baseMemory));
}

export async function openSnapshot(bytes: Uint8Array): Promise<OpenedSnapshot> {
  const { json, pages } = await openPageDelta(bytes);
  const h = json as Partial<HeaderV2> & Partial<Omit<HeaderV1, "base">> & { base?: unknown };
  let header: SnapshotHeader;
  const registers = { stackPointer: h.stackPointer!, runtimePtr: h.runtimePtr!, contextPtr: h.contextPtr!, extensions: h.extensions ?? [] };
  if (h.v === 1 && typeof h.base === "string") {
    header = { format: 1, abi: 1, engine: undefined, base: { kind: "image", digest: h.base }, len: h.len!, ...registers };
  } else if (h.v === 2 && typeof h.engine === "string" && typeof h.abi === "number" && isBase(h.base)) {
    header = { format: 2, abi: h.abi, engine: h.engine, base: h.base, len: h.len!, ...registers };
  } else {
    throw new SnapshotFormatError(`unknown snapshot format ${JSON.stringify(h.v ?? null)}`);
  }
  if (!Number.isInteger(header.len) || header.len <= 0 || !Number.isInteger(header.stackPointer)) {
    throw new SnapshotFormatError("snapshot header is malformed");
  }
  return {
    header,
    patch: (base) => {
      const { stackPointer, runtimePtr, contextPtr, extensions } = header;
      return { memory: pages(header.len, base), stackPointer, runtimePtr, contextPtr, extensions };
    },
  };
}

function isBase(b: unknown): b is SnapshotBase {
  if (b === null || typeof b !== "object") return false;
  const base = b as { kind?: unknown; digest?: unknown };
  return base.kind === "engine" || (base.kind === "image" && typeof base.digest === "string");
}

/** A whole memory image as a page delta against `base`, gzip'd, with a JSON header of the caller's. */
export async function encodeMemoryDelta(header: Record<string, unknown>, memory: Uint8Array, base: Uint8Array): Promise<Uint8Array> {
  return compress(pageDelta({ ...header, len: memory.length }, memory, base));
}

/** Read what `encodeMemoryDelta` wrote; `memory(base)` rebuilds the image. */
export async function decodeMemoryDelta(bytes: Uint8Array): Promise<{ header: Record<string, unknown>; memory(base: Uint8Array): Uint8Array }> {
  const { json, pages } = await openPageDelta(bytes);
  const len = (json as { len?: unknown }).len;
  if (typeof len !== "number" || !Number.isInteger(len) || len <= 0) throw new SnapshotFormatError("image header is malformed");
  return { header: json as Record<string, unknown>, memory: (base) => pages(len, base) };
}

function pageDelta(header: object, mem: Uint8Array, base: Uint8Array): Uint8Array {
  const pages = Math.ceil(mem.length / PAGE);
  const bitmap = new Uint8Array(Math.ceil(pages / 8));
  const changed: number[] = [];
  for (let p = 0; p < pages; p++) {
    if (!samePage(mem, base, p * PAGE)) {
      bitmap[p >> 3]! |= 1 << (p & 7);
      changed.push(p);
    }
  }
  const headerBytes = new TextEncoder().encode(JSON.stringify(header));
  let at = align4(4 + headerBytes.length + bitmap.length);
  const out = new Uint8Array(at + changed.length * PAGE);
  new DataView(out.buffer).setUint32(0, headerBytes.length, true);
  out.set(headerBytes, 4);
  out.set(bitmap, 4 + headerBytes.length);
  for (const p of changed) {
    xorInto(out, at, mem, base, p * PAGE, Math.min(p * PAGE + PAGE, mem.length));
    at += PAGE;
  }
  return out;
}

async function openPageDelta(bytes: Uint8Array): Promise<{ json: unknown; pages(len: number, base: Uint8Array): Uint8Array }> {
  let raw: Uint8Array;
  try {
    raw = await decompress(bytes);
  } catch {
    throw new SnapshotFormatError("snapshot bytes are not readable (not gzip or truncated)");
  }
  if (raw.length < 4) throw new SnapshotFormatError("snapshot is truncated");
  const headerLength = new DataView(raw.buffer, raw.byteOffset, raw.byteLength).getUint32(0, true);
  if (4 + headerLength > raw.length) throw new SnapshotFormatError("snapshot is truncated");
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(raw.subarray(4, 4 + headerLength)));
  } catch {
    throw new SnapshotFormatError("snapshot header is not JSON");
  }
  if (json === null || typeof json !== "object") throw new SnapshotFormatError("snapshot header is not an object");
  const pages = (len: number, base: Uint8Array): Uint8Array => {
    const count = Math.ceil(len / PAGE);
    const bitmap = raw.subarray(4 + headerLength, 4 + headerLength + Math.ceil(count / 8));
    // Start from the base (one copy), then patch the changed pages.
    let memory: Uint8Array;
    if (len <= base.length) memory = base.slice(0, len);
    else {
      memory = new Uint8Array(len);
      memory.set(base);
    }
    let at = align4(4 + headerLength + bitmap.length);
    for (let p = 0; p < count; p++) {
      if (!(bitmap[p >> 3]! & (1 << (p & 7)))) continue;
      const start = p * PAGE;
      const end = Math.min(start + PAGE, len);
      if (at + (end - start) > raw.length) throw new SnapshotFormatError("snapshot is truncated");
      xorInto(memory, start, raw.subarray(at, at + (end - start)), base.subarray(start, end), 0, end - start);
      at += PAGE;
    }
    return memory;
  };
  return { json, pages };
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
export function serializeSnapshot(snapshot: Snapshot): Uint8Array {
  return QuickJS.serializeSnapshot(snapshot);
}
export function deserializeSnapshot(raw: Uint8Array): Snapshot {
  return QuickJS.deserializeSnapshot(raw);
}
