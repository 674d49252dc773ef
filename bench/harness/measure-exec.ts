/**
 * Section 1: `exec` of a trivial cell through the real path (HTTP → Worker → session Durable
 * Object → VM → JSON) against its two baselines, a Node process per cell and a bare
 * quickjs-wasi VM per cell in Node (baselines.ts), with two floors under an exec: `GET /healthz`
 * (HTTP + Worker) and a refused `wait` (HTTP + Worker + Durable Object, no VM). All five take a
 * block of samples in every round (rounds.ts); each ratio is per round, summarized across rounds.
 */
import { bareVmCell, collectGarbage, nodeProcessCell } from "./baselines.ts";
import { expectCompleted, expectRefusedWait, getJson, getJsonViaFetch, openTurn, timedJson, timedTool, type Check, type Gateway } from "./http.ts";
import type { Plan } from "./options.ts";
import { runRounds, type Step } from "./rounds.ts";
import { pooled, roundDifferences, roundMedians, roundP90Ratios, roundRatios, summarize, type Summary } from "./stats.ts";

export const EXEC_MEASURES = ["exec", "execFetch", "healthz", "wait", "execPaced", "waitPaced", "node", "bareVm"] as const;
export type ExecMeasure = (typeof EXEC_MEASURES)[number];
export type ExecBaseline = "node" | "bareVm";

export interface ExecFigures {
  plan: Plan["exec"];
  /** All samples of each measure, pooled over rounds. */
  measures: Record<ExecMeasure, Summary>;
  /** Time ratio measure / baseline, per round, summarized over rounds (below 1: the measure is faster). */
  ratios: Record<ExecBaseline, Record<ExecMeasure, Summary>>;
  /** Each round's median of each measure (ms), in round order: kept in results.json to compare runs. */
  roundMedians: Record<ExecMeasure, number[]>;
  /** exec over the refused `wait` (a Durable Object round trip without a VM), per round: of the medians and of the p90s. */
  vsDurableObject: { median: Summary; p90: Summary };
  /** The same, each request after a pause (`plan.pauseMs`), as between a model's calls: the previous request's deferred work is done. */
  vsDurableObjectPaced: { median: Summary; p90: Summary };
  /** Differences of per-round medians (ms): where an exec's time goes. */
  breakdown: { workerHttp: Summary; durableObject: Summary; cell: Summary; cellPaced: Summary; overBareVm: Summary };
}

export async function measureExec(gw: Gateway, plan: Plan["exec"], childTimeoutMs: number, log: (msg: string) => void): Promise<ExecFigures> {
  // A turn keeps its first 2,000 trajectory events and only counts the rest (MAX_TRAJECTORY_EVENTS), which
  // makes a call cheaper: each round takes a new turn of the same session, so every call is recorded as
  // a model's turn (tens of calls, not thousands) has them recorded, in every round alike.
  let turn = await openTurn(gw, "bench");
  const post =
    (tool: string, body: unknown, check: Check, get = getJson) =>
    async () =>
      (await timedTool(gw, turn, tool, body, check, get)).ms;
  const healthz = async () =>
    (
      await timedJson(`${gw.base}/healthz`, {}, gw.timeoutMs, (r) => {
        if (r.status !== 200 || r.json.ok !== true) throw new Error(`healthz returned ${r.status} ${JSON.stringify(r.json)}`);
      })
    ).ms;

  const steps: Array<Step<ExecMeasure>> = [
    {
      name: "exec",
      perRound: plan.execPerRound,
      warmup: plan.warmup,
      run: post("exec", { code: plan.code }, expectCompleted("exec", plan.expected)),
      lead: 1,
    },
    // A Durable Object round trip without a VM: `wait` without a runId, refused after the turn lookup.
    // As many samples as exec: both p90s come from blocks of the same size. Next to each of exec's blocks
    // (the order reverses every round), so the two are timed side by side; each block's first sample is
    // not kept (it would carry the other block's deferred work, or not be back to back).
    { name: "wait", perRound: plan.execPerRound, warmup: plan.warmup, run: post("wait", {}, expectRefusedWait), lead: 1 },
    // The same exec through the runtime's fetch(): what the client alone costs (reference row).
    {
      name: "execFetch",
      perRound: plan.floorPerRound,
      warmup: plan.warmup,
      run: post("exec", { code: plan.code }, expectCompleted("exec via fetch", plan.expected), getJsonViaFetch),
    },
    { name: "node", perRound: plan.nodePerRound, warmup: plan.nodeWarmup, run: nodeProcessCell(plan.code, plan.expected, childTimeoutMs) },
    {
      name: "bareVm",
      perRound: plan.vmPerRound,
      warmup: plan.warmup,
      run: await bareVmCell(plan.code, plan.expected),
      after: collectGarbage,
    },
    { name: "healthz", perRound: plan.floorPerRound, warmup: plan.warmup, run: healthz },
    // Both again, each request after a pause: what a model's calls, seconds apart, see. Back to back, each exec
    // also pays for the previous one's work deferred past its answer (its VM's reset for the pool, timers, GC).
    {
      name: "execPaced",
      perRound: plan.pacedPerRound,
      warmup: 0,
      run: paced(post("exec", { code: plan.code }, expectCompleted("exec", plan.expected))),
    },
    { name: "waitPaced", perRound: plan.pacedPerRound, warmup: 0, run: paced(post("wait", {}, expectRefusedWait)) },
  ];
  function paced(run: () => Promise<number>): () => Promise<number> {
    return async () => {
      await new Promise((resolve) => setTimeout(resolve, plan.pauseMs));
      return run();
    };
  }
  log(`[1] exec: warm-up, then ${plan.rounds} interleaved rounds`);
  const s = await runRounds(plan.rounds, steps, undefined, {
    block: plan.block,
    beforeRound: async () => {
      turn = await openTurn(gw, "bench", turn);
    },
  });
  log(`[1] exec: ${EXEC_MEASURES.map((m) => `${s[m].flat().length} ${m}`).join(", ")} — all verified`);

  const measures = Object.fromEntries(EXEC_MEASURES.map((m) => [m, pooled(s[m])])) as Record<ExecMeasure, Summary>;
  const against = (base: ExecBaseline) =>
    Object.fromEntries(EXEC_MEASURES.map((m) => [m, roundRatios(s[m], s[base])])) as Record<ExecMeasure, Summary>;
  return {
    plan,
    measures,
    ratios: { node: against("node"), bareVm: against("bareVm") },
    vsDurableObject: { median: roundRatios(s.exec, s.wait), p90: roundP90Ratios(s.exec, s.wait) },
    vsDurableObjectPaced: { median: roundRatios(s.execPaced, s.waitPaced), p90: roundP90Ratios(s.execPaced, s.waitPaced) },
    roundMedians: Object.fromEntries(EXEC_MEASURES.map((m) => [m, roundMedians(s[m])])) as Record<ExecMeasure, number[]>,
    breakdown: {
      workerHttp: summarize(roundMedians(s.healthz)),
      durableObject: roundDifferences(s.wait, s.healthz),
      cell: roundDifferences(s.exec, s.wait),
      cellPaced: roundDifferences(s.execPaced, s.waitPaced),
      overBareVm: roundDifferences(s.exec, s.bareVm),
    },
  };
}
