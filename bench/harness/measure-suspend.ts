/**
 * Section 4: suspension (park and resume).
 *   4.1 over HTTP on the production build: rounds of cycles (exec that never parks, exec that
 *       parks, `wait` that resumes it, refused `wait`), so every figure has its baseline in the
 *       same round; and in-isolate in the bench worker (bench/bench-suspend.ts: phases of park
 *       and resume with the production codec and the old full-gzip format, per batch).
 *   4.2 stored bytes per parked cell (bench worker, `/snapshot-sizes`).
 *   4.3 64 cells parked then resumed in one session over HTTP, a few repetitions.
 * The bench worker's figures are taken as it returns them; only the per-batch ratios are added here.
 */
import { deleteTurn, expectCompleted, expectFailed, expectParked, expectRefusedWait, openTurn, timedTool, type Check, type Gateway } from "./http.ts";
import type { Plan } from "./options.ts";
import { pooled, roundDifferences, roundRatios, summarize, type RoundSamples, type Summary } from "./stats.ts";

/** Summary statistics as the bench worker computes them (floor-index quantiles). */
export interface WorkerStats {
  n: number;
  median: number;
  p90: number;
  min: number;
  max: number;
  mean: number;
}

export interface SuspendHttpFigures {
  plan: Plan["suspend"];
  measures: Record<"noPark" | "park" | "wait" | "refused", Summary>;
  /** Time ratio against the exec that never parks, per round. */
  ratios: Record<"park" | "wait" | "refused", Summary>;
  /** Per round: wait − refused wait (the session object's share of a wait), park − exec. */
  waitInObject: Summary;
  parkInObject: Summary;
  throughput: Throughput;
}

export interface Throughput {
  cells: number;
  reps: number;
  /** Per-cell times pooled over repetitions. */
  noPark: Summary;
  park: Summary;
  wait: Summary;
  /** Totals (ms) over repetitions. */
  noParkTotal: Summary;
  parkTotal: Summary;
  waitTotal: Summary;
  bothTotal: Summary;
  concurrentWaitTotal: Summary;
  /** Total / the baseline's total in the same repetition. */
  ratios: Record<"park" | "wait" | "both" | "concurrentWait", Summary>;
}

export async function measureSuspendHttp(gw: Gateway, plan: Plan["suspend"], log: (msg: string) => void): Promise<SuspendHttpFigures> {
  const turn = await openTurn(gw, "bench-park");
  const noPark = () => timedTool(gw, turn, "exec", { code: plan.noParkCode }, expectCompleted("exec return 2", 2));
  const park = () => timedTool(gw, turn, "exec", { code: plan.parkCode }, expectParked("exec that parks"));
  const wait = (runId: string) => timedTool(gw, turn, "wait", { runId }, expectCompleted("wait", 2));
  const refused = () => timedTool(gw, turn, "wait", {}, expectRefusedWait);

  log(`[4] suspend: warm-up (${plan.warmup} park + wait)`);
  for (let i = 0; i < plan.warmup; i++) {
    await noPark();
    await wait((await park()).json.runId);
    await refused();
  }
  const s: Record<"noPark" | "park" | "wait" | "refused", RoundSamples> = { noPark: [], park: [], wait: [], refused: [] };
  for (let round = 0; round < plan.rounds; round++) {
    const r = { noPark: [] as number[], park: [] as number[], wait: [] as number[], refused: [] as number[] };
    for (let i = 0; i < plan.perRound; i++) {
      r.noPark.push((await noPark()).ms);
      const p = await park();
      r.park.push(p.ms);
      r.wait.push((await wait(p.json.runId)).ms);
      r.refused.push((await refused()).ms);
    }
    for (const k of ["noPark", "park", "wait", "refused"] as const) s[k].push(r[k]);
  }
  log(`[4] suspend: ${plan.rounds} rounds of ${plan.perRound} cycles (exec, park, wait, refused wait) — all verified`);
  const throughput = await measureThroughput(gw, plan);
  log(`[4] suspend: ${throughput.reps} × (${throughput.cells} exec, parks, waits, concurrent waits) — all verified`);
  return {
    plan,
    measures: { noPark: pooled(s.noPark), park: pooled(s.park), wait: pooled(s.wait), refused: pooled(s.refused) },
    ratios: { park: roundRatios(s.park, s.noPark), wait: roundRatios(s.wait, s.noPark), refused: roundRatios(s.refused, s.noPark) },
    waitInObject: roundDifferences(s.wait, s.refused),
    parkInObject: roundDifferences(s.park, s.noPark),
    throughput,
  };
}

/** Fill the 64 slots of one session, prove the cap, resume them all; again with all waits in flight. */
async function measureThroughput(gw: Gateway, plan: Plan["suspend"]): Promise<Throughput> {
  const N = plan.throughputCells;
  const cell = (i: number) => `let n = ${i}; await yield_control(); return n + 1;`;
  const reps: Array<{
    noPark: number[];
    park: number[];
    wait: number[];
    noParkTotal: number;
    parkTotal: number;
    waitTotal: number;
    concurrentWaitTotal: number;
  }> = [];
  for (let rep = 0; rep < plan.throughputReps; rep++) {
    const t = await openTurn(gw, "bench-64");
    const execAs = (code: string, check: Check) => timedTool(gw, t, "exec", { code }, check);
    const r = { noPark: [] as number[], park: [] as number[], wait: [] as number[] };
    let t0 = performance.now();
    for (let i = 0; i < N; i++) r.noPark.push((await execAs(`return ${i};`, expectCompleted("exec", i))).ms);
    const noParkTotal = performance.now() - t0;

    const runIds: string[] = [];
    t0 = performance.now();
    for (let i = 0; i < N; i++) {
      const p = await execAs(cell(i), expectParked(`park ${i}`));
      r.park.push(p.ms);
      runIds.push(p.json.runId);
    }
    const parkTotal = performance.now() - t0;
    // The cap is full: one more park is refused (proves all N were parked at once).
    await execAs(cell(N), expectFailed(`park ${N + 1} over the cap`));
    t0 = performance.now();
    for (let i = 0; i < N; i++) r.wait.push((await timedTool(gw, t, "wait", { runId: runIds[i] }, expectCompleted(`wait ${i}`, i + 1))).ms);
    const waitTotal = performance.now() - t0;

    // Again, resumed with all waits in flight at once (the session object runs them one by one).
    const again: string[] = [];
    for (let i = 0; i < N; i++) again.push((await execAs(cell(i), expectParked(`park ${i}`))).json.runId);
    t0 = performance.now();
    await Promise.all(again.map((runId, i) => timedTool(gw, t, "wait", { runId }, expectCompleted(`concurrent wait ${i}`, i + 1))));
    const concurrentWaitTotal = performance.now() - t0;

    await deleteTurn(gw, t);
    reps.push({ ...r, noParkTotal, parkTotal, waitTotal, concurrentWaitTotal });
  }
  const totals = (f: (r: (typeof reps)[number]) => number) => summarize(reps.map(f));
  const vsBase = (f: (r: (typeof reps)[number]) => number) => summarize(reps.map((r) => f(r) / r.noParkTotal));
  return {
    cells: N,
    reps: reps.length,
    noPark: summarize(reps.flatMap((r) => r.noPark)),
    park: summarize(reps.flatMap((r) => r.park)),
    wait: summarize(reps.flatMap((r) => r.wait)),
    noParkTotal: totals((r) => r.noParkTotal),
    parkTotal: totals((r) => r.parkTotal),
    waitTotal: totals((r) => r.waitTotal),
    bothTotal: totals((r) => r.parkTotal + r.waitTotal),
    concurrentWaitTotal: totals((r) => r.concurrentWaitTotal),
    ratios: {
      park: vsBase((r) => r.parkTotal),
      wait: vsBase((r) => r.waitTotal),
      both: vsBase((r) => r.parkTotal + r.waitTotal),
      concurrentWait: vsBase((r) => r.concurrentWaitTotal),
    },
  };
}

/** `/suspend` of the bench worker (bench-suspend.ts suspendTimings), plus its per-batch rows. */
export interface SuspendIsolate {
  iterations: number;
  batchSize: number;
  batches: number;
  codecWarmup: {
    imageBuildMs: number;
    imageBytes: number;
    firstEncodeMs: number;
    firstDecodeMs: number;
    warmEncodeMs: number;
    warmDecodeMs: number;
    warmReps: number;
  };
  phases: Record<string, WorkerStats>;
  bytes: Record<"memory" | "limit" | "stored" | "changedPages" | "pages" | "fullRaw" | "fullStored", WorkerStats>;
  stateJsonBytes: number;
  rows: Array<Record<string, number>>;
}

/** `/snapshot-sizes` of the bench worker (bench-suspend.ts snapshotSizes). */
export interface SnapshotSizes {
  reps: number;
  stateJsonBytes: number;
  cells: Record<
    string,
    {
      memoryBytes: number;
      pages: number;
      changedPages: WorkerStats;
      storedBytes: WorkerStats;
      fullStoredBytes: WorkerStats;
      park: WorkerStats;
      resume: WorkerStats;
      fullPark: WorkerStats;
      fullResume: WorkerStats;
    }
  >;
}

export interface SuspendIsolateFigures {
  suspend: SuspendIsolate;
  sizes: SnapshotSizes;
  /** Every phase of /suspend over batches (host quantiles, IQR included). */
  phases: Record<string, Summary>;
  /** Phase / the never-parking exec of the same batch, over batches (null: below the clock's resolution). */
  vsExec: Record<string, Summary | null>;
  /** Old full-gzip format / production codec, per batch: above 1 the production codec is faster. */
  codec: Record<"park" | "resume" | "encode" | "decode", Summary | null>;
}

export async function measureSuspendIsolate(
  get: (route: string) => Promise<any>,
  plan: Plan["suspend"],
  log: (msg: string) => void,
): Promise<SuspendIsolateFigures> {
  const suspend = (await get(`/suspend?n=${plan.iterations}&batch=${plan.batch}&warmup=${plan.warmupIterations}`)) as SuspendIsolate;
  const sizes = (await get(`/snapshot-sizes?reps=${plan.sizeReps}`)) as SnapshotSizes;
  log(
    `[4] suspend: in-isolate park/resume, production codec and old full-gzip format (${suspend.iterations} cells, batches of ${suspend.batchSize}) ` +
      `and sizes (${sizes.reps} per cell) done; images built in ${suspend.codecWarmup.imageBuildMs.toFixed(1)} ms (one-time)`,
  );
  const rows = suspend.rows;
  const col = (key: string) => rows.map((r) => r[key]!);
  const sum = (...keys: string[]) => rows.map((r) => keys.reduce((a, k) => a + r[k]!, 0));
  /** Per batch a / b, or null when some batch's b is 0 (below the 1 ms clock / batch size). */
  const ratio = (a: number[], b: number[]) => (b.some((x) => x <= 0) ? null : summarize(a.map((x, i) => x / b[i]!)));
  const phases = Object.fromEntries(Object.keys(rows[0] ?? {}).map((k) => [k, summarize(col(k))]));
  const vsExec = Object.fromEntries(Object.keys(phases).map((k) => [k, ratio(col(k), col("execNoPark"))]));
  return {
    suspend,
    sizes,
    phases,
    vsExec,
    codec: {
      park: ratio(col("fullParkSequential"), col("parkSequential")),
      resume: ratio(col("fullResumeSequential"), col("resumeSequential")),
      encode: ratio(sum("fullSerialize", "fullCompress"), col("encode")),
      decode: ratio(sum("fullDecompress", "fullDeserialize"), col("decode")),
    },
  };
}
