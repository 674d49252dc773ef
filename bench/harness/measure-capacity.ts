/**
 * Section 9a: capacity of one isolate. `cells` sessions (one turn each, one session object
 * each) send an `exec` whose cell waits `timerMs` on a guest timer, all at once, to the
 * production build that sections 1 and 4 serve (one workerd isolate hosts every session
 * object). Baseline in the same rounds: one such cell alone. The figure is the wall time from
 * the first request out to the last answer in, together against alone: ≈ 1× when the idle
 * cells really wait side by side, `cells`× when the isolate runs them one after another (as
 * when every VM reserved its full memory limit in the isolate's 80 MiB ledger).
 */
import { expectCompleted, openTurn, timedTool, type Gateway, type Turn } from "./http.ts";
import { runRounds } from "./rounds.ts";
import { pooled, roundRatios, summarize, type RoundSamples, type Summary } from "./stats.ts";

export interface CapacityPlan {
  cells: number;
  timerMs: number;
  rounds: number;
  warmup: number;
}

export interface CapacityFigures {
  plan: CapacityPlan;
  /** Wall time of one cell alone, and of `cells` cells of `cells` sessions sent at once (ms, one sample per round). */
  measures: { alone: Summary; together: Summary };
  /** together / alone per round. */
  ratio: Summary;
  /** The slowest single answer among the concurrent cells, per round (ms). */
  slowest: Summary;
  samples: { alone: RoundSamples; together: RoundSamples };
}

const CHECK_VALUE = "woke";

/** The cell: idle on a guest timer (no tool, no CPU), then a value the reply check knows. */
export function timerCell(timerMs: number): string {
  return `await new Promise((resolve) => setTimeout(resolve, ${timerMs})); return ${JSON.stringify(CHECK_VALUE)};`;
}

export async function measureCapacity(gw: Gateway, plan: CapacityPlan, log: (msg: string) => void): Promise<CapacityFigures> {
  log(`[9] capacity: ${plan.cells} sessions, each a cell waiting ${plan.timerMs} ms on a timer, at once; baseline one such cell alone`);
  const code = timerCell(plan.timerMs);
  const check = expectCompleted("timer cell", CHECK_VALUE);
  // Fresh sessions for every sample: a turn's session object is then the only one running its cell.
  const turns = (n: number, label: string): Promise<Turn[]> => Promise.all(Array.from({ length: n }, (_, i) => openTurn(gw, `${label}-${i}`)));
  const slowest: number[] = [];
  const alone = async (): Promise<number> => {
    const [turn] = await turns(1, "cap-alone");
    return (await timedTool(gw, turn!, "exec", { code }, check)).ms;
  };
  const together = async (): Promise<number> => {
    const open = await turns(plan.cells, "cap-many");
    const t0 = performance.now();
    const each = await Promise.all(open.map((turn) => timedTool(gw, turn, "exec", { code }, check)));
    const ms = performance.now() - t0;
    slowest.push(Math.max(...each.map((e) => e.ms)));
    return ms;
  };
  const r = await runRounds(
    plan.rounds,
    [
      { name: "alone", perRound: 1, warmup: plan.warmup, run: alone },
      { name: "together", perRound: 1, warmup: plan.warmup, run: together },
    ],
    (round) => log(`[9] capacity: round ${round + 1}/${plan.rounds}`),
  );
  // Warmup samples of `together` also pushed a slowest figure: keep the timed rounds' only.
  const timedSlowest = slowest.slice(slowest.length - plan.rounds);
  return {
    plan,
    measures: { alone: pooled(r.alone), together: pooled(r.together) },
    ratio: roundRatios(r.together, r.alone),
    slowest: summarize(timedSlowest),
    samples: { alone: r.alone, together: r.together },
  };
}
