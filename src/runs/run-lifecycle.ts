import type { Settlement } from "../bridge";
import type { CellEnd, CellEnvironment } from "../cell";
import type { CodeModeResult } from "../code-mode";
import type { TurnSpec } from "../turns";
import { deliverClientResult, type DeliveryRefusal } from "./deliver";
import { withIncrementalOutput } from "./incremental-output";
import { park } from "./park";
import { claim, resume, type ClaimResult } from "./resume";
import type { CellEnvFactory, Claim, FinishOptions, LiveRun, RunContext, RunDeps } from "./run-context";

export type { CellEnvFactory, RunDeps } from "./run-context";

/**
 * One owner per cell across exec, suspension and every resume. It holds the state those
 * share (runs parked with host calls still running, runs being resumed) and hands each step
 * to its module: park.ts (snapshot and store), resume.ts (claim and wait), deliver.ts (client
 * results); it enforces TTL expiry and teardown itself.
 */
export class RunLifecycle {
  private readonly ctx: RunContext;

  constructor(deps: RunDeps) {
    const live = new Map<string, LiveRun>();
    const resuming = new Map<string, Claim>();
    this.ctx = {
      deps,
      live,
      resuming,
      drop(runId) {
        live.get(runId)?.bridge.close();
        live.delete(runId);
        deps.store.delete(runId);
      },
    };
  }

  /** Turn an exec/wait end into the model-facing result, parking the cell if it suspended. */
  finish = async (spec: TurnSpec, end: CellEnd, env: CellEnvironment, opts: FinishOptions): Promise<CodeModeResult> => {
    if (end.kind === "result") {
      if (opts.runId) this.ctx.drop(opts.runId);
      return withIncrementalOutput(end.result, opts.delivered);
    }
    return park(this.ctx, spec, end.cell, end.reason, env, opts);
  };

  /** Validate a wait before queueing it (see resume.ts). */
  claim(spec: TurnSpec, input: unknown): ClaimResult {
    return claim(this.ctx, spec, input);
  }

  /**
   * `wait` of a claimed run. A Tool Search cell (`toolSearch`) counts its resumed end with
   * `toolSearchEnd` (it parks only for client calls) and reports its whole output each time: in
   * /chat the model reads only its final answer, never the waiting ones before it.
   */
  resume(
    spec: TurnSpec,
    runId: string,
    makeEnv: CellEnvFactory,
    toolSearch?: (end: CellEnd, env: CellEnvironment) => CellEnd,
  ): Promise<CodeModeResult> {
    if (!toolSearch) return resume(this.ctx, spec, runId, makeEnv, this.finish);
    return resume(this.ctx, spec, runId, makeEnv, (s, end, env, opts) =>
      this.finish(s, toolSearch(end, env), env, { ...opts, delivered: undefined }),
    );
  }

  /** Release a claim whose wait never ran (e.g. the turn was closed while it was queued). */
  release(runId: string): void {
    this.ctx.resuming.delete(runId);
  }

  deliverClientResult(turnId: string, callId: string, settlement: Settlement): { ok: true } | DeliveryRefusal {
    return deliverClientResult(this.ctx, turnId, callId, settlement);
  }

  /** Teardown: cancel active waits and pending host work, drop every parked snapshot. */
  closeTurn(turnId: string): void {
    for (const state of this.ctx.deps.store.runsOfTurn(turnId)) {
      this.ctx.resuming.get(state.runId)?.abort.abort();
      this.ctx.drop(state.runId);
    }
  }

  /** Alarm: drop expired runs (not those being resumed right now) and re-arm. */
  expire(): number {
    const { deps, resuming } = this.ctx;
    let dropped = 0;
    for (const runId of deps.store.expiredRunIds(deps.now())) {
      if (resuming.has(runId)) continue;
      this.ctx.drop(runId);
      dropped++;
    }
    const next = deps.store.nextExpiry();
    // A run being resumed is skipped above; never re-arm in the past (that would spin).
    if (next !== undefined) deps.scheduleExpiry(Math.max(next, deps.now() + 1000));
    return dropped;
  }
}
