import type { Snapshot } from "quickjs-wasi";
import { closeWith, failedWithBudget, type CellEnvironment, type LiveCell } from "../cell";
import type { CodeModeErrorCode, CodeModeResult } from "../code-mode";
import { MAX_STATE_BYTES, MAX_SUSPENDED_RUNS } from "../limits";
import { logRecord } from "../observability";
import { QuotaExceeded } from "../quota";
import type { ParkedRunState } from "../snapshot-store";
import { rawSnapshotBytes } from "../snapshot-store";
import type { TurnSpec } from "../turns";
import { deliveredMark, pendingCalls, sliceDelivered } from "./incremental-output";
import { TOO_MANY_SUSPENDED } from "./messages";
import type { FinishOptions, RunContext } from "./run-context";
import { newRunId } from "./run-id";

/** Why a cell could not be parked: the model-facing failure, and the host error behind it if any. */
class ParkRefused {
  constructor(
    readonly message: string,
    readonly code: CodeModeErrorCode,
    readonly where?: string,
    readonly cause?: unknown,
  ) {}
}

const encoder = new TextEncoder();

/**
 * Park a suspended cell: snapshot its VM, check the snapshot and state against the limits,
 * store both (and results that settled meanwhile) in one transaction, and answer `waiting`.
 * Every refusal leaves by one exit that logs a host error, drops the run and closes the cell.
 */
export async function park(
  ctx: RunContext,
  spec: TurnSpec,
  cell: LiveCell,
  reason: "pending_tools" | "yield",
  env: CellEnvironment,
  opts: FinishOptions,
): Promise<CodeModeResult> {
  const { store } = ctx.deps;
  const runId = opts.runId ?? newRunId(ctx.deps.sessionTag());
  try {
    if (!opts.runId && store.count() >= MAX_SUSPENDED_RUNS) throw new ParkRefused(TOO_MANY_SUSPENDED, "invalid_input");
    const limit = spec.options.maxSnapshotBytes;
    // Memory in use is a lower bound of the snapshot: refuse before copying the whole VM.
    if (cell.vm.allocatedBytes() > limit) {
      throw new ParkRefused(`code mode snapshot would exceed maxSnapshotBytes (${limit}); the run was dropped`, "snapshot_limit_exceeded");
    }
    let snapshot: Snapshot;
    try {
      snapshot = cell.vm.snapshot();
    } catch (error) {
      throw new ParkRefused("the code mode VM could not be snapshotted", "internal_error", "park.snapshot", error);
    }
    const output = cell.budget.pending();
    const now = ctx.deps.now();
    const makeState = (pending: ParkedRunState["pending"]): ParkedRunState => ({
      runId,
      turnId: spec.turnId,
      tenantId: spec.tenantId,
      sessionId: spec.sessionId,
      reason,
      controlToken: cell.vm.controlToken,
      pending,
      budget: cell.budget.toJSON(),
      delivered: deliveredMark(output),
      deliveredCalls: opts.deliveredCalls ?? [],
      restartSafe: opts.restartSafe,
      createdAt: now,
      expiresAt: now + spec.options.snapshotTtlSeconds * 1000,
    });
    // The limit covers the raw snapshot plus its metadata, checked before anything is stored.
    const stateBytes = encoder.encode(JSON.stringify(makeState(cell.bridge.pending()))).length;
    const size = rawSnapshotBytes(snapshot) + stateBytes;
    if (size > limit || stateBytes > MAX_STATE_BYTES) {
      throw new ParkRefused(`code mode snapshot is ${size} bytes, over maxSnapshotBytes (${limit}); the run was dropped`, "snapshot_limit_exceeded");
    }
    let bytes: Uint8Array;
    try {
      bytes = await ctx.deps.codec.encode(snapshot, cell.vm.abi);
    } catch (error) {
      throw new ParkRefused("the code mode VM could not be snapshotted", "internal_error", "park.encode", error);
    }
    // Teardown or cancellation arrived while compressing: nothing may be parked.
    if (env.signal.aborted) throw new ParkRefused("the code mode run was aborted", "aborted");
    // Host work that settled since the guest last ran (even while compressing) is kept as a
    // stored result; nothing that already happened may be lost by parking.
    const settled = cell.bridge.takeReady();
    const pending: ParkedRunState["pending"] = [...cell.bridge.pending(), ...settled.map((r) => ({ id: r.id, kind: "settled" as const }))];
    const state = makeState(pending);
    try {
      // One transaction: the run row, its chunks and its results appear together or not at all.
      ctx.deps.transaction(() => {
        store.clearResults(runId);
        store.put(state, bytes);
        for (const r of settled) store.storeResult(runId, r.id, r.settlement);
      });
    } catch (error) {
      // The session's storage quota: the seed's code for a run that cannot be kept, with the quota's message.
      if (error instanceof QuotaExceeded) throw new ParkRefused(`${error.message}; the run was dropped`, "snapshot_limit_exceeded");
      throw new ParkRefused("the parked run could not be stored; it was dropped", "internal_error", "park.store", error);
    }
    ctx.deps.scheduleExpiry(state.expiresAt);
    cell.vm.dispose();
    keepHostWork(ctx, spec, runId, cell);
    const newOutput = sliceDelivered(output, opts.delivered);
    const calls = pendingCalls(pending, spec.options.maxOutputBytes);
    return {
      status: "waiting",
      runId,
      reason,
      ...(calls.length ? { pendingToolCalls: calls } : {}),
      ...(newOutput?.length ? { output: newOutput } : {}),
      telemetry: env.telemetry(),
    };
  } catch (error) {
    // The one exit of a refused park. Anything unforeseen is the gateway's failure.
    const refusal =
      error instanceof ParkRefused ? error : new ParkRefused("the run could not be parked; it was dropped", "internal_error", "park", error);
    if (refusal.where)
      logRecord("host_error", {
        where: refusal.where,
        error: refusal.cause,
        tenant: spec.tenantId,
        sessionId: spec.sessionId,
        turnId: spec.turnId,
        runId,
      });
    ctx.drop(runId);
    return closeWith(cell, failedWithBudget(cell, refusal.message, refusal.code, env));
  }
}

/**
 * Host tool calls keep running while parked; what they return is stored durably and
 * delivered by the next wait like any stored result (client results included).
 */
function keepHostWork(ctx: RunContext, spec: TurnSpec, runId: string, cell: LiveCell): void {
  if (cell.bridge.hostCallsInFlight === 0) {
    cell.bridge.close();
    ctx.live.delete(runId);
    return;
  }
  cell.bridge.detach((id, settlement) => {
    try {
      if (ctx.deps.store.state(runId)) ctx.deps.store.storeResult(runId, id, settlement);
    } catch (error) {
      // Nobody awaits a parked run's host call: the next wait finds the result missing and says so.
      logRecord("host_error", { where: "park.store_result", error, tenant: spec.tenantId, sessionId: spec.sessionId, turnId: spec.turnId, runId });
    }
  });
  ctx.live.set(runId, { bridge: cell.bridge, budget: cell.budget });
}
