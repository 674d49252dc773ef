/**
 * Bench-only: park/resume of a GuestVm inside workerd, timed phase by phase with the
 * production codec (src/snapshot-store/snapshot-codec.ts), and the bytes a parked cell stores.
 * Mirrors RunLifecycle.park/resume (src/runs/run-lifecycle.ts) without the Durable Object:
 *
 *   park   = vm.snapshot() + rawSnapshotBytes (the limit check), then encodeSnapshot
 *            (4 KiB pages that differ from the pristine image, XOR-ed against it, gzip)
 *   resume = decodeSnapshot (gunzip, XOR back onto the image), then GuestVm.restore, then
 *            deliver the yield_control result (vm.settle) + status + value (the cell completes)
 *
 * Baseline, measured on the same parked cells in the same batches: the previous storage
 * format, QuickJS's full-memory serialization gzip-compressed
 * (serializeSnapshot + compress / decompress + deserializeSnapshot + GuestVm.restore).
 *
 * The first encodeSnapshot/decodeSnapshot of an isolate builds the pristine image; that
 * one-time cost is measured once (codecWarmup) before anything else is timed and reported
 * apart from the per-cell figures.
 *
 * The guest has the demo plugin's tool metadata installed (as a production exec does), so
 * its snapshot matches what the gateway stores for the same cell.
 */
import { Catalog, guestMetadata } from "../src/catalog";
import { buildCatalog } from "../src/catalog";
import { OutputBudget } from "../src/code-mode";
import { CODE_MODE_DEFAULTS } from "../src/config";
import { demoPlugin } from "../src/plugins";
import { systemClock } from "../src/runtime";
import { GuestVm, type GuestHost } from "../src/runtime";
import { GUEST_ABI_VERSION } from "../src/runtime";
import { engineImage } from "../src/snapshot-store";
import { InterruptGuard } from "../src/runtime";
import { newRunId, newSessionTag } from "../src/runs";
import { pristineImage } from "../src/snapshot-store";
import {
  compress,
  decodeSnapshot,
  decompress,
  deserializeSnapshot,
  encodeSnapshot,
  rawSnapshotBytes,
  serializeSnapshot,
} from "../src/snapshot-store";
import type { ParkedRunState } from "../src/snapshot-store";
import type { Snapshot } from "quickjs-wasi";

type Phase = Record<string, number>;

/** The cells measured: source, and the value the resumed cell must return. */
export const CELLS = {
  small: { code: "let n = 1; await yield_control(); return n + 1", expect: "2" },
  repeated1MB: { code: "globalThis.d = 'x'.repeat(1 << 20); await yield_control(); return d.length", expect: String(1 << 20) },
  // 65,536 strings of 16 pseudo-random base-36 characters: 1 MiB of string data in many small strings.
  random1MB: {
    code:
      "let x = 2463534242; const next = () => { x ^= x << 13; x ^= x >>> 17; x ^= x << 5; return (x >>> 0).toString(36).padStart(8, '0'); };" +
      " globalThis.d = []; for (let i = 0; i < 65536; i++) d.push(next() + next());" +
      " await yield_control(); return d.length * d[0].length",
    expect: String(1 << 20),
  },
} as const;
export type CellName = keyof typeof CELLS;

const DEMO_TOOLS_JSON = JSON.stringify(new Catalog(buildCatalog({ plugins: [demoPlugin], policy: {} })).guestEntries.map(guestMetadata));
const LIMITS = { memoryLimitBytes: CODE_MODE_DEFAULTS.memoryLimitBytes };
const encoder = new TextEncoder();

/** A GuestHost that only remembers the id of the guest's yield_control request. */
function yieldHost(): GuestHost & { yieldId: number | null } {
  return {
    yieldId: null,
    request(id, op) {
      if (op === "yield") this.yieldId = id;
    },
    output() {},
    cancel() {},
  };
}

function guard(): InterruptGuard {
  const t = CODE_MODE_DEFAULTS.timeoutMs;
  return new InterruptGuard(systemClock, systemClock.now() + t, t);
}

/** A parked cell as RunLifecycle keeps it: the VM (until snapshotted) and what ParkedRunState records. */
type Parked = { vm: GuestVm; yieldId: number; controlToken: number };

/** exec up to the park point: a fresh VM (+ prelude + tools) whose program awaits yield_control. */
async function parkedVm(cell: CellName): Promise<Parked> {
  const host = yieldHost();
  const vm = await GuestVm.create(LIMITS, guard(), host);
  vm.installTools(DEMO_TOOLS_JSON);
  vm.start(CELLS[cell].code);
  const status = vm.status();
  if (status.state !== "running" || host.yieldId === null) {
    const err = vm.errorMessage();
    vm.dispose();
    throw new Error(`cell ${cell} did not park: ${JSON.stringify(status)} ${err ?? ""}`);
  }
  return { vm, yieldId: host.yieldId, controlToken: vm.controlToken };
}

/** A storage format: what park writes and what resume reads back. */
type Format = { encode(snapshot: Snapshot): Promise<Uint8Array>; decode(bytes: Uint8Array): Promise<Snapshot> };

/** Production: page delta against the pristine image, gzip (RunLifecycle.park/resume). */
const PRODUCTION: Format = {
  async encode(snapshot) {
    rawSnapshotBytes(snapshot); // the maxSnapshotBytes check park does first (trivial, kept for fidelity)
    return encodeSnapshot(snapshot);
  },
  decode: decodeSnapshot,
};

/** Baseline: the previous format, the whole memory serialized by QuickJS, gzip. */
const FULL_GZIP: Format = {
  encode: (snapshot) => compress(serializeSnapshot(snapshot)),
  decode: async (bytes) => deserializeSnapshot(await decompress(bytes)),
};

/** Resume a stored snapshot and check the program completes with the expected value. */
async function resumeStored(cell: CellName, bytes: Uint8Array, parked: Parked, format: Format): Promise<void> {
  const vm = await GuestVm.restore(await format.decode(bytes), parked.controlToken, LIMITS, guard(), yieldHost(), GUEST_ABI_VERSION);
  try {
    vm.settle(parked.yieldId, true, undefined);
    const status = vm.status();
    const value = vm.valueJson();
    if (status.state !== "completed" || value !== CELLS[cell].expect) throw new Error(`resumed ${cell}: ${JSON.stringify(status)} ${value}`);
  } finally {
    vm.dispose();
  }
}

/** What RunLifecycle stores beside the snapshot for a cell parked on yield_control. */
function stateJsonBytes(): number {
  const now = Date.now();
  const state: ParkedRunState = {
    runId: newRunId(newSessionTag()),
    turnId: crypto.randomUUID(),
    tenantId: "bench",
    sessionId: "bench-session",
    reason: "yield",
    controlToken: 65536,
    pending: [{ id: 1, kind: "yield", reason: null }],
    budget: new OutputBudget(CODE_MODE_DEFAULTS.maxOutputBytes).toJSON(),
    delivered: { count: 0, digest: "cbf29ce484222325" },
    restartSafe: false,
    createdAt: now,
    expiresAt: now + CODE_MODE_DEFAULTS.snapshotTtlSeconds * 1000,
  };
  return encoder.encode(JSON.stringify(state)).length;
}

const PAGE = 4096;

/** 4 KiB pages of `memory` that differ from the pristine image (what encodeSnapshot keeps), and the page count. */
async function pageDelta(memory: Uint8Array): Promise<{ changed: number; pages: number }> {
  const base = (await pristineImage()).memory;
  const pages = Math.ceil(memory.length / PAGE);
  const a = new Uint32Array(memory.buffer, memory.byteOffset, Math.floor(memory.length / 4));
  const b = new Uint32Array(base.buffer, base.byteOffset, Math.floor(base.length / 4));
  let changed = 0;
  for (let p = 0; p < pages; p++) {
    const start = (p * PAGE) / 4;
    const end = Math.min(start + PAGE / 4, a.length);
    if (end > b.length) {
      changed++;
      continue;
    }
    for (let i = start; i < end; i++) {
      if (a[i] !== b[i]) {
        changed++;
        break;
      }
    }
  }
  return { changed, pages };
}

/**
 * The one-time codec cost of an isolate, measured once before anything else is timed: building
 * the pristine image (the first encodeSnapshot or decodeSnapshot of an isolate awaits it), then
 * the first encode/decode of a small parked cell against the mean of WARM_REPS warm calls.
 */
const WARM_REPS = 10;
let warmup: ReturnType<typeof measureCodecWarmup> | undefined;

export function codecWarmup() {
  warmup ??= measureCodecWarmup();
  return warmup;
}

async function measureCodecWarmup() {
  const p = await parkedVm("small");
  const snapshot = p.vm.snapshot();
  p.vm.dispose();

  // Both per-isolate images: the engine image (engine id, self-contained base) and the pristine one.
  let t0 = performance.now();
  const [, image] = await Promise.all([engineImage(), pristineImage()]);
  const imageBuildMs = performance.now() - t0;
  t0 = performance.now();
  const bytes = await encodeSnapshot(snapshot);
  const firstEncodeMs = performance.now() - t0;
  t0 = performance.now();
  await decodeSnapshot(bytes);
  const firstDecodeMs = performance.now() - t0;

  t0 = performance.now();
  for (let i = 0; i < WARM_REPS; i++) await encodeSnapshot(snapshot);
  const warmEncodeMs = (performance.now() - t0) / WARM_REPS;
  t0 = performance.now();
  for (let i = 0; i < WARM_REPS; i++) await decodeSnapshot(bytes);
  const warmDecodeMs = (performance.now() - t0) / WARM_REPS;

  await resumeStored("small", bytes, p, PRODUCTION); // the warmed codec round-trips a live cell
  return { imageBuildMs, imageBytes: image.memory.length, firstEncodeMs, firstDecodeMs, warmEncodeMs, warmDecodeMs, warmReps: WARM_REPS };
}

type Bytes = { memory: number; limit: number; stored: number; changedPages: number; pages: number; fullRaw: number; fullStored: number };

/**
 * One sample: K cells parked and resumed phase by phase (K snapshots, then K encodes, …), each
 * phase's time divided by K (workerd's clock has a 1 ms step), with the production codec and,
 * on the same snapshots, the old full-gzip format. Then park / resume one cell at a time in
 * both formats (order alternating per cell). Also times the exec baseline of the same VM path:
 * create + prelude + tools + run `return 2` + dispose.
 */
async function suspendBatch(k: number): Promise<{ phases: Phase; bytes: Bytes }> {
  const parked: Parked[] = [];
  let t0 = performance.now();
  for (let i = 0; i < k; i++) parked.push(await parkedVm("small"));
  const tRun = performance.now() - t0;

  t0 = performance.now();
  const snaps = parked.map((p) => p.vm.snapshot());
  const tSnap = performance.now() - t0;
  for (const p of parked) p.vm.dispose();

  // Park, production: encodeSnapshot.
  t0 = performance.now();
  const stored: Uint8Array[] = [];
  for (const s of snaps) stored.push(await PRODUCTION.encode(s));
  const tEncode = performance.now() - t0;
  // Park, baseline: serializeSnapshot, then compress.
  t0 = performance.now();
  const raws = snaps.map((s) => serializeSnapshot(s));
  const tSerialize = performance.now() - t0;
  t0 = performance.now();
  const fullStored: Uint8Array[] = [];
  for (const r of raws) fullStored.push(await compress(r));
  const tCompress = performance.now() - t0;

  // Resume, production: decodeSnapshot, GuestVm.restore, deliver.
  t0 = performance.now();
  const decoded: Snapshot[] = [];
  for (const b of stored) decoded.push(await decodeSnapshot(b));
  const tDecode = performance.now() - t0;
  const restoreAll = async (from: Snapshot[]) => {
    const out: GuestVm[] = [];
    for (let i = 0; i < k; i++) out.push(await GuestVm.restore(from[i]!, parked[i]!.controlToken, LIMITS, guard(), yieldHost(), GUEST_ABI_VERSION));
    return out;
  };
  const deliverAll = (vms: GuestVm[], label: string) => {
    for (let i = 0; i < k; i++) {
      const vm = vms[i]!;
      vm.settle(parked[i]!.yieldId, true, undefined);
      const status = vm.status();
      const value = vm.valueJson();
      if (status.state !== "completed" || value !== "2") throw new Error(`resumed small cell (${label}): ${JSON.stringify(status)} ${value}`);
    }
  };
  t0 = performance.now();
  const restored = await restoreAll(decoded);
  const tRestore = performance.now() - t0;
  t0 = performance.now();
  deliverAll(restored, "production codec");
  const tDeliver = performance.now() - t0;
  for (const vm of restored) vm.dispose();

  // Resume, baseline: decompress, deserializeSnapshot, GuestVm.restore, deliver.
  t0 = performance.now();
  const rawBack: Uint8Array[] = [];
  for (const s of fullStored) rawBack.push(await decompress(s));
  const tDecompress = performance.now() - t0;
  t0 = performance.now();
  const deserialized = rawBack.map((r) => deserializeSnapshot(r));
  const tDeserialize = performance.now() - t0;
  t0 = performance.now();
  const restoredFull = await restoreAll(deserialized);
  const tRestoreFull = performance.now() - t0;
  t0 = performance.now();
  deliverAll(restoredFull, "full gzip");
  const tDeliverFull = performance.now() - t0;
  for (const vm of restoredFull) vm.dispose();

  const delta = await pageDelta(snaps[0]!.memory);
  const bytes: Bytes = {
    memory: snaps[0]!.memory.length,
    limit: rawSnapshotBytes(snaps[0]!),
    stored: stored[0]!.length,
    changedPages: delta.changed,
    pages: delta.pages,
    fullRaw: raws[0]!.length,
    fullStored: fullStored[0]!.length,
  };
  snaps.length = 0;
  raws.length = 0;

  // Whole park and whole resume, one cell at a time (as a request runs them), both formats.
  const seq = await sequential("small", k);

  // Baseline: the exec of a cell that never parks, on the same VM path.
  t0 = performance.now();
  for (let i = 0; i < k; i++) {
    const vm = await GuestVm.create(LIMITS, guard(), yieldHost());
    vm.installTools(DEMO_TOOLS_JSON);
    vm.start("return 2");
    if (vm.status().state !== "completed" || vm.valueJson() !== "2") throw new Error("baseline cell did not complete");
    vm.dispose();
  }
  const tExec = performance.now() - t0;

  return {
    phases: {
      runToYield: tRun / k,
      execNoPark: tExec / k,
      snapshot: tSnap / k,
      encode: tEncode / k,
      parkSequential: seq.park / k,
      decode: tDecode / k,
      restore: tRestore / k,
      deliverComplete: tDeliver / k,
      resumeSequential: seq.resume / k,
      fullSerialize: tSerialize / k,
      fullCompress: tCompress / k,
      fullParkSequential: seq.fullPark / k,
      fullDecompress: tDecompress / k,
      fullDeserialize: tDeserialize / k,
      fullRestore: tRestoreFull / k,
      fullDeliverComplete: tDeliverFull / k,
      fullResumeSequential: seq.fullResume / k,
    },
    bytes,
  };
}

/**
 * `reps` cells parked and resumed one at a time in both formats: park = vm.snapshot() + encode
 * (each format takes its own snapshot of the same parked VM), resume = decode + restore +
 * deliver + complete (checked). The format that goes first alternates from cell to cell.
 * Returns summed times and the per-cell samples.
 */
async function sequential(cell: CellName, reps: number) {
  const sum = { park: 0, resume: 0, fullPark: 0, fullResume: 0 };
  const samples = { park: [] as number[], resume: [] as number[], fullPark: [] as number[], fullResume: [] as number[] };
  const bytes = { stored: [] as number[], fullStored: [] as number[], memory: 0, limit: 0, fullRaw: 0, changedPages: [] as number[], pages: 0 };
  for (let i = 0; i < reps; i++) {
    const p = await parkedVm(cell);
    const order: Array<"production" | "full"> = i % 2 === 0 ? ["production", "full"] : ["full", "production"];
    const out: Record<string, Uint8Array> = {};
    for (const which of order) {
      const format = which === "production" ? PRODUCTION : FULL_GZIP;
      const a = performance.now();
      out[which] = await format.encode(p.vm.snapshot());
      const t = performance.now() - a;
      if (which === "production") samples.park.push(t);
      else samples.fullPark.push(t);
    }
    // Sizes, outside the timed spans.
    const snap = p.vm.snapshot();
    bytes.memory = snap.memory.length;
    bytes.limit = rawSnapshotBytes(snap);
    bytes.fullRaw = serializeSnapshot(snap).length;
    const delta = await pageDelta(snap.memory);
    bytes.changedPages.push(delta.changed);
    bytes.pages = delta.pages;
    p.vm.dispose();
    bytes.stored.push(out.production!.length);
    bytes.fullStored.push(out.full!.length);
    for (const which of order) {
      const format = which === "production" ? PRODUCTION : FULL_GZIP;
      const a = performance.now();
      await resumeStored(cell, out[which]!, p, format);
      const t = performance.now() - a;
      if (which === "production") samples.resume.push(t);
      else samples.fullResume.push(t);
    }
  }
  for (const key of Object.keys(sum) as Array<keyof typeof sum>) sum[key] = samples[key].reduce((a, b) => a + b, 0);
  return { ...sum, samples, bytes };
}

function stats(samples: number[]) {
  const s = [...samples].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
  return { n: s.length, median: q(0.5), p90: q(0.9), min: s[0]!, max: s[s.length - 1]!, mean: s.reduce((a, b) => a + b, 0) / s.length };
}

export async function suspendTimings(n: number, k: number, warmupIterations: number) {
  const codec = await codecWarmup();
  for (let i = 0; i < Math.ceil(warmupIterations / k); i++) await suspendBatch(k);
  const batches = Math.max(1, Math.ceil(n / k));
  const rows: Phase[] = [];
  const bytes: Bytes[] = [];
  for (let i = 0; i < batches; i++) {
    const b = await suspendBatch(k);
    rows.push(b.phases);
    bytes.push(b.bytes);
  }
  const phases: Record<string, ReturnType<typeof stats>> = {};
  for (const key of Object.keys(rows[0]!)) phases[key] = stats(rows.map((r) => r[key]!));
  const byteStats: Record<string, ReturnType<typeof stats>> = {};
  for (const key of Object.keys(bytes[0]!) as Array<keyof Bytes>) byteStats[key] = stats(bytes.map((b) => b[key]));
  // `rows`: every batch's phases (each batch times the baseline and both formats), for per-batch ratios in the harness.
  return { iterations: batches * k, batchSize: k, batches, codecWarmup: codec, phases, bytes: byteStats, stateJsonBytes: stateJsonBytes(), rows };
}

/**
 * Bytes per parked cell (VM memory, pages that differ from the pristine image, stored bytes in the
 * production codec and in the old full-gzip format, state JSON) and one-at-a-time park/resume
 * times in both formats.
 */
export async function snapshotSizes(reps: number) {
  const codec = await codecWarmup();
  const out: Record<string, unknown> = {};
  for (const cell of Object.keys(CELLS) as CellName[]) {
    const r = await sequential(cell, reps);
    out[cell] = {
      memoryBytes: r.bytes.memory,
      limitBytes: r.bytes.limit,
      pages: r.bytes.pages,
      changedPages: stats(r.bytes.changedPages),
      storedBytes: stats(r.bytes.stored),
      fullRawBytes: r.bytes.fullRaw,
      fullStoredBytes: stats(r.bytes.fullStored),
      park: stats(r.samples.park),
      resume: stats(r.samples.resume),
      fullPark: stats(r.samples.fullPark),
      fullResume: stats(r.samples.fullResume),
    };
  }
  return { cells: out, stateJsonBytes: stateJsonBytes(), reps, codecWarmup: codec };
}
