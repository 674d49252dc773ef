/**
 * Section 2: QuickJS-WASI VM costs inside workerd, from the bench worker (bench/bench-worker.ts):
 * the raw engine (`/raw`), the engine with GuestVm's options (`/raw-limits`) and the project's
 * GuestVm with its prelude (`/guest`), and the pool's cycle of a cell then its VM's reset in
 * place (`/reuse`). The routes are called in interleaved rounds (order
 * reversing each round); each call returns per-batch phase times, pooled here, and each ratio is
 * taken per round between routes called in the same round.
 */
import type { Plan } from "./options.ts";
import { perRound, pooled, roundMedians, roundRatios, roundRatiosIfDefined, summarize, type RoundSamples, type Summary } from "./stats.ts";

type Route = "raw" | "rawLimits" | "guest" | "reuse";
const PATHS: Record<Route, string> = { raw: "/raw", rawLimits: "/raw-limits", guest: "/guest", reuse: "/reuse" };

/** What each route times per batch (ms per VM; bench-worker.ts). */
export interface VmPhases {
  raw: Record<"create" | "eval" | "dispose" | "sequentialTotal", Summary>;
  rawLimits: Record<"create" | "dispose" | "sequentialTotal", Summary>;
  guest: Record<"createWithPrelude" | "run" | "dispose" | "sequentialTotal", Summary>;
  /** A cell in a pool VM (bind, run, dispose) and the reset of its instance to the pristine image (GuestVm.reuse). */
  reuse: Record<"run" | "reset", Summary>;
}

export interface VmFigures {
  plan: Plan["vm"];
  clock: { minStepMs: number | null };
  batchesPerRound: number;
  batchSize: number;
  /** Batches pooled over all rounds. */
  phases: VmPhases;
  /** Per-round medians of the sequential create + eval/run + dispose totals (the goal's figure). */
  rawTotalRounds: Summary;
  guestTotalRounds: Summary;
  /** Time ratios against raw, per round (null: raw's median is below the clock's resolution in some round). */
  ratios: {
    limitsCreate: Summary;
    guestCreate: Summary;
    guestRun: Summary | null;
    guestTotal: Summary;
  };
  /** GuestVm.create − QuickJS.create with the same options, per round (ms). */
  preludeCost: Summary;
}

type Rows = Array<Record<string, number>>;

export async function measureVm(get: (route: string) => Promise<any>, plan: Plan["vm"], log: (msg: string) => void): Promise<VmFigures> {
  const clock = (await get("/clock")) as { minStepMs: number | null };
  const routes: Route[] = ["raw", "rawLimits", "guest", "reuse"];
  const rounds: Record<Route, Rows[]> = { raw: [], rawLimits: [], guest: [], reuse: [] };
  let batchSize = plan.batch;
  let batchesPerRound = 0;
  for (let r = 0; r < plan.rounds; r++) {
    for (const route of r % 2 === 0 ? routes : [...routes].reverse()) {
      // The first call of each route warms up longer (JIT, first instantiation); later calls one batch.
      const warmup = r === 0 ? plan.warmup : plan.batch;
      // A reuse cycle is ~20× shorter than a create: 5× the batch, so a batch spans several clock steps.
      const scale = route === "reuse" ? 5 : 1;
      const query = `n=${plan.perRound * scale}&batch=${plan.batch * scale}&warmup=${warmup * scale}`;
      const out = (await get(`${PATHS[route]}?${query}`)) as {
        rows: Rows;
        batchSize: number;
        batches: number;
      };
      rounds[route].push(out.rows);
      if (route === "reuse") continue;
      batchSize = out.batchSize;
      batchesPerRound = out.batches;
    }
  }
  log(`[2] vm: ${plan.rounds} interleaved rounds of /raw, /raw-limits, /guest, /reuse (${batchesPerRound} batches of ${batchSize} each) done`);

  const phase = (route: Route, key: string): RoundSamples => rounds[route].map((rows) => rows.map((row) => row[key]!));
  const all = <K extends string>(route: Route, keys: readonly K[]) =>
    Object.fromEntries(keys.map((k) => [k, pooled(phase(route, k))])) as Record<K, Summary>;
  const prelude = perRound(phase("guest", "createWithPrelude"), phase("rawLimits", "create"), (g, l) => g - l);
  return {
    plan,
    clock,
    batchesPerRound,
    batchSize,
    phases: {
      raw: all("raw", ["create", "eval", "dispose", "sequentialTotal"] as const),
      rawLimits: all("rawLimits", ["create", "dispose", "sequentialTotal"] as const),
      guest: all("guest", ["createWithPrelude", "run", "dispose", "sequentialTotal"] as const),
      reuse: all("reuse", ["run", "reset"] as const),
    },
    rawTotalRounds: summarize(roundMedians(phase("raw", "sequentialTotal"))),
    guestTotalRounds: summarize(roundMedians(phase("guest", "sequentialTotal"))),
    ratios: {
      limitsCreate: roundRatios(phase("rawLimits", "create"), phase("raw", "create")),
      guestCreate: roundRatios(phase("guest", "createWithPrelude"), phase("raw", "create")),
      guestRun: roundRatiosIfDefined(phase("guest", "run"), phase("raw", "eval")),
      guestTotal: roundRatios(phase("guest", "sequentialTotal"), phase("raw", "sequentialTotal")),
    },
    preludeCost: summarize(prelude),
  };
}
