/**
 * Bench-only: park/resume of a GuestVm inside workerd, timed phase by phase with the
 * production codec (src/snapshot-store/snapshot-codec.ts), and the bytes a parked cell stores.
 * Mirrors RunLifecycle.park/resume (src/runs/run-lifecycle.ts) without the Durable Object:
 *
 *   park   = vm.snapshot() + serializeSnapshot, then compress (gzip)
 *   resume = decompress, then deserializeSnapshot + GuestVm.restore, then deliver the
 *            yield_control result (vm.settle) + status + value (the cell completes)
 *
 * The guest has the demo plugin's tool metadata installed (as a production exec does), so
 * its snapshot matches what the gateway stores for the same cell.
 */
import { Catalog, guestMetadata } from "../src/catalog/catalog";
import { buildCatalog } from "../src/catalog/build-catalog";
import { OutputBudget } from "../src/code-mode/output-budget";
import { CODE_MODE_DEFAULTS } from "../src/config/codeModeOptions";
import { demoPlugin } from "../src/plugins/demo";
import { systemClock } from "../src/runtime/clock";
import { GuestVm, type GuestHost } from "../src/runtime/guest-vm";
import { InterruptGuard } from "../src/runtime/interrupt-guard";
import { newRunId, newSessionTag } from "../src/runs/run-id";
import { compress, decompress, deserializeSnapshot, serializeSnapshot } from "../src/snapshot-store/snapshot-codec";
import type { ParkedRunState } from "../src/snapshot-store/parked-run";

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

/** Resume a stored snapshot and check the program completes with the expected value. */
async function resumeStored(cell: CellName, bytes: Uint8Array, parked: Parked): Promise<void> {
  const vm = await GuestVm.restore(deserializeSnapshot(await decompress(bytes)), parked.controlToken, LIMITS, guard(), yieldHost());
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

/**
 * One sample: K cells parked and resumed phase by phase (K snapshots, then K compressions, …),
 * each phase's time divided by K (workerd's clock has a 1 ms step). Also times the exec
 * baseline of the same VM path: create + prelude + tools + run `return 2` + dispose.
 */
async function suspendBatch(k: number): Promise<{ phases: Phase; raw: number; stored: number }> {
  const parked: Parked[] = [];
  let t0 = performance.now();
  for (let i = 0; i < k; i++) parked.push(await parkedVm("small"));
  const tRun = performance.now() - t0;

  t0 = performance.now();
  const raws = parked.map((p) => serializeSnapshot(p.vm.snapshot()));
  const tSnap = performance.now() - t0;
  t0 = performance.now();
  const stored: Uint8Array[] = [];
  for (const r of raws) stored.push(await compress(r));
  const tCompress = performance.now() - t0;
  for (const p of parked) p.vm.dispose();

  t0 = performance.now();
  const rawBack: Uint8Array[] = [];
  for (const s of stored) rawBack.push(await decompress(s));
  const tDecompress = performance.now() - t0;
  t0 = performance.now();
  const restored: GuestVm[] = [];
  for (let i = 0; i < k; i++) restored.push(await GuestVm.restore(deserializeSnapshot(rawBack[i]!), parked[i]!.controlToken, LIMITS, guard(), yieldHost()));
  const tRestore = performance.now() - t0;
  t0 = performance.now();
  for (let i = 0; i < k; i++) {
    const vm = restored[i]!;
    vm.settle(parked[i]!.yieldId, true, undefined);
    const status = vm.status();
    const value = vm.valueJson();
    if (status.state !== "completed" || value !== "2") throw new Error(`resumed small cell: ${JSON.stringify(status)} ${value}`);
  }
  const tDeliver = performance.now() - t0;
  for (const vm of restored) vm.dispose();

  // Whole park and whole resume, one cell at a time (as a request runs them).
  t0 = performance.now();
  let tParkSeq = 0;
  let tResumeSeq = 0;
  for (let i = 0; i < k; i++) {
    const p = await parkedVm("small");
    const a = performance.now();
    const bytes = await compress(serializeSnapshot(p.vm.snapshot()));
    p.vm.dispose();
    const b = performance.now();
    await resumeStored("small", bytes, p);
    tParkSeq += b - a;
    tResumeSeq += performance.now() - b;
  }

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
      snapshotSerialize: tSnap / k,
      compress: tCompress / k,
      decompress: tDecompress / k,
      deserializeRestore: tRestore / k,
      deliverComplete: tDeliver / k,
      parkSequential: tParkSeq / k,
      resumeSequential: tResumeSeq / k,
      execNoPark: tExec / k,
    },
    raw: raws[0]!.length,
    stored: stored[0]!.length,
  };
}

function stats(samples: number[]) {
  const s = [...samples].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
  return { n: s.length, median: q(0.5), p90: q(0.9), min: s[0]!, max: s[s.length - 1]!, mean: s.reduce((a, b) => a + b, 0) / s.length };
}

export async function suspendTimings(n: number, k: number, warmup: number) {
  for (let i = 0; i < Math.ceil(warmup / k); i++) await suspendBatch(k);
  const batches = Math.max(1, Math.ceil(n / k));
  const rows: Phase[] = [];
  const raw: number[] = [];
  const stored: number[] = [];
  for (let i = 0; i < batches; i++) {
    const b = await suspendBatch(k);
    rows.push(b.phases);
    raw.push(b.raw);
    stored.push(b.stored);
  }
  const phases: Record<string, ReturnType<typeof stats>> = {};
  for (const key of Object.keys(rows[0]!)) phases[key] = stats(rows.map((r) => r[key]!));
  return { iterations: batches * k, batchSize: k, batches, phases, rawBytes: stats(raw), storedBytes: stats(stored), stateJsonBytes: stateJsonBytes() };
}

/** Bytes per parked cell (raw snapshot, stored = gzip, state JSON) and one-at-a-time park/resume times. */
export async function snapshotSizes(reps: number) {
  const out: Record<string, unknown> = {};
  for (const cell of Object.keys(CELLS) as CellName[]) {
    const park: number[] = [];
    const resume: number[] = [];
    let raw = 0;
    let stored = 0;
    for (let i = 0; i < reps; i++) {
      const p = await parkedVm(cell);
      const a = performance.now();
      const rawBytes = serializeSnapshot(p.vm.snapshot());
      const bytes = await compress(rawBytes);
      p.vm.dispose();
      const b = performance.now();
      await resumeStored(cell, bytes, p);
      park.push(b - a);
      resume.push(performance.now() - b);
      raw = rawBytes.length;
      stored = bytes.length;
    }
    out[cell] = { rawBytes: raw, storedBytes: stored, park: stats(park), resume: stats(resume) };
  }
  return { cells: out, stateJsonBytes: stateJsonBytes(), reps };
}
