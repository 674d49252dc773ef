import type { HostBridge } from "../bridge";
import { cellBridge, driveCell, failed, queuedPastDeadline, type CellEnd, type CellEnvironment, type LiveCell } from "../cell";
import { OutputBudget } from "../code-mode";
import type { CodeModeErrorCode, CodeModeResult } from "../code-mode";
import { logRecord } from "../observability";
import { GuestVm } from "../runtime";
import { InterruptGuard } from "../runtime";
import type { MemoryReservation } from "../runtime";
import type { ParkedRunState } from "../snapshot-store";
import type { ParkedSnapshot } from "../snapshot-store";
import { restoreFailure, SnapshotRestoreError } from "../snapshot-store";
import type { TurnSpec } from "../turns";
import { RUN_INTERRUPTED, RUN_OTHER_SESSION, RUN_OTHER_TURN, RUN_UNAVAILABLE, WAIT_IN_FLIGHT } from "./messages";
import type { CellEnvFactory, FinishOptions, RunContext } from "./run-context";
import { runIdScope } from "./run-id";

export type ClaimResult = { ok: true; runId: string } | { ok: false; message: string; code?: "internal_error" };

/**
 * Validate a wait before queueing it. Marks the run as resuming synchronously, so a second
 * concurrent wait for the same runId fails instead of queueing behind the first.
 */
export function claim(ctx: RunContext, spec: TurnSpec, input: unknown): ClaimResult {
  const runId = input !== null && typeof input === "object" ? (input as { runId?: unknown }).runId : undefined;
  if (typeof runId !== "string" || runId.length === 0) return { ok: false, message: "wait needs { runId } from a waiting result." };
  if (input !== null && typeof input === "object" && Object.keys(input).some((k) => k !== "runId")) {
    return { ok: false, message: "wait takes only { runId }." };
  }
  const scope = runIdScope(runId, ctx.deps.sessionTag());
  if (scope === "other-session") return { ok: false, message: RUN_OTHER_SESSION };
  if (scope === "malformed") return { ok: false, message: RUN_UNAVAILABLE };
  if (ctx.resuming.has(runId)) return { ok: false, message: WAIT_IN_FLIGHT };
  const state = ctx.deps.store.state(runId);
  if (!state) return { ok: false, message: RUN_UNAVAILABLE };
  if (state.turnId !== spec.turnId) return { ok: false, message: RUN_OTHER_TURN };
  if (ctx.deps.store.isResuming(runId)) {
    // A resume started and never finished (the object was reset mid-wait): what the program
    // did after its snapshot is unknown, so replaying it could repeat side effects.
    ctx.drop(runId);
    return { ok: false, message: RUN_INTERRUPTED, code: "internal_error" };
  }
  if (state.expiresAt <= ctx.deps.now()) {
    ctx.drop(runId);
    return { ok: false, message: RUN_UNAVAILABLE };
  }
  ctx.resuming.set(runId, { abort: new AbortController(), state });
  return { ok: true, runId };
}

/** Why a wait stopped before its program ran: the failure, whether the run stays parked, the host error behind it. */
class ResumeStopped {
  constructor(
    readonly message: string,
    readonly code: CodeModeErrorCode,
    readonly keepRun: boolean,
    readonly where?: string,
    readonly cause?: unknown,
  ) {}
}

/** How a driven cell ends (parking again if it suspends): RunLifecycle.finish. */
export type Finish = (spec: TurnSpec, end: CellEnd, env: CellEnvironment, opts: FinishOptions) => Promise<CodeModeResult>;

/**
 * `wait`: reserve VM room, decode and restore the snapshot, deliver what settled while
 * parked, and drive the program until it completes, fails or parks again. Everything that
 * stops a wait before the program runs leaves by one exit that releases what was taken
 * (memory room, bridge), logs, and drops the run unless it can still be resumed.
 */
export async function resume(ctx: RunContext, spec: TurnSpec, runId: string, makeEnv: CellEnvFactory, finish: Finish): Promise<CodeModeResult> {
  const claimed = ctx.resuming.get(runId)!;
  // Read once at claim time; nothing else touches a claimed run's row.
  const state = claimed.state ?? ctx.deps.store.state(runId);
  const env = makeEnv(spec, claimed.abort.signal, state?.restartSafe ?? false);
  let reservation: MemoryReservation | undefined;
  let bridge: HostBridge | undefined;
  let vm: GuestVm | undefined;
  // Its VM may be replaced while driven (a cell asleep through an operator decision gets a new one).
  let cell: LiveCell | undefined;
  try {
    if (!state) throw new ResumeStopped(RUN_UNAVAILABLE, "invalid_input", false);
    // The wait's deadline counts from its admission to the session's queue: one whose deadline
    // passed there never resumes the program, and the run stays parked for a later wait.
    const now = ctx.deps.now();
    const admittedAt = Math.min(now, env.admittedAt ?? now);
    const deadline = admittedAt + spec.options.timeoutMs;
    if (deadline <= now) {
      const outcome = "the run was not resumed and stays parked; call wait again";
      throw new ResumeStopped(queuedPastDeadline(spec.options.timeoutMs, now - admittedAt, outcome), "timeout", true);
    }
    // Room in the isolate's VM memory before anything else: a wait that gets none within its
    // deadline fails with runtime_unavailable and leaves the run parked as it was, resumable
    // by a later wait. From here the reservation is released by the restored VM, or below.
    const roomWait = { deadline, clock: env.clock, signal: env.signal, owner: env.vms.owner };
    const room = await env.vms.pool.reserve(env.options.memoryLimitBytes, roomWait);
    if (!room.ok && room.reason === "exhausted") throw new ResumeStopped(room.message, "runtime_unavailable", true);
    if (!room.ok) throw new ResumeStopped("the code mode run was aborted", "aborted", false);
    reservation = room.limits.reservation;
    // Decoded before the run is taken over (and before its results are read): when the
    // image registry does not answer, the run stays parked exactly as it was.
    let parked: ParkedSnapshot;
    try {
      const bytes = ctx.deps.store.bytes(runId);
      if (!bytes) throw new SnapshotRestoreError("missing", "its stored snapshot is missing or incomplete");
      parked = await ctx.deps.codec.decode(bytes);
    } catch (error) {
      const failure = restoreFailure(error);
      throw new ResumeStopped(failure.message, "internal_error", failure.keepRun, "resume.decode", error);
    }
    // The restored VM holds its snapshot's memory from the start: room for all of it first.
    const fitted = await env.vms.pool.fit(room.limits, parked.snapshot.memory.byteLength, roomWait);
    if (!fitted.ok && fitted.reason === "exhausted") throw new ResumeStopped(fitted.message, "runtime_unavailable", true);
    if (!fitted.ok) throw new ResumeStopped("the code mode run was aborted", "aborted", false);
    const results = ctx.deps.store.results(runId);
    const live = ctx.live.get(runId);
    ctx.live.delete(runId);
    // A host call that was in flight when the object was evicted has no result and no
    // owner: resuming would hand the guest a missing result, so the run fails instead,
    // unless its tool re-attaches to the work it started (Swarm's sub-agents): issued again.
    const reissued = live
      ? []
      : state.pending.filter((p) => p.kind === "tool" && !results.has(p.id) && env.handlers.reissuable?.(p.tool) !== undefined);
    if (!live) {
      const lost = lostHostCalls(state, results, new Set(reissued.map((p) => p.id)));
      if (lost) throw new ResumeStopped(lost, "internal_error", false);
    }
    const budget = live?.budget ?? OutputBudget.fromJSON(state.budget);
    // The tick budget is what is left of timeoutMs after the queue (its measure on a frozen clock).
    const guard = new InterruptGuard({ now: () => ctx.deps.now() }, deadline, spec.options.timeoutMs - (now - admittedAt));
    bridge = live ? live.bridge.reattach() : cellBridge(env, budget);
    // Timers in due order (overdue ones fire in that order), client calls awaiting results.
    for (const p of duePendingOrder(state.pending)) bridge.adopt(p);
    for (const p of reissued) bridge.reissue(p);
    claimed.bridge = bridge;
    try {
      const instance = env.vms.pool.instanceFor(parked.snapshot.memory.byteLength);
      vm = env.vms.pool.keep(await GuestVm.restore(parked.snapshot, state.controlToken, room.limits, guard, bridge, parked.abi, instance));
    } catch (error) {
      throw new ResumeStopped(restoreFailure(error).message, "internal_error", false, "resume.restore", error);
    }
    reservation = undefined; // the VM owns it now
    // Once the resumed program starts a tool call it has moved past its snapshot with a
    // possible side effect: mark it first, so a reset cannot replay it. (Output gates hold
    // the call's outgoing traffic until the mark is durable.)
    bridge.beforeFirstCall = () => ctx.deps.store.markResuming(runId);
    // Everything that settled while parked is in storage, whether the bridge was kept or not.
    for (const [id, settlement] of results) bridge.deliver(id, settlement);
    const yields = state.pending.filter((p) => p.kind === "yield");
    if (yields.length > 0) bridge.clearYield();
    for (const y of yields) bridge.deliver(y.id, { ok: true, text: undefined });
    cell = { vm, bridge, budget, guard };
    const end = await driveCell(cell, deadline, env);
    return await finish(spec, end, env, {
      runId,
      restartSafe: state.restartSafe,
      delivered: state.delivered,
      deliveredCalls: [
        ...(state.deliveredCalls ?? []),
        ...state.pending.flatMap((p) => (p.kind === "client" && results.has(p.id) ? [p.callId] : [])),
      ],
    });
  } catch (error) {
    // The one exit of a wait that could not run its program.
    const stop =
      error instanceof ResumeStopped
        ? error
        : new ResumeStopped("the code mode run could not be resumed; it was dropped", "internal_error", false, "resume", error);
    if (stop.where)
      logRecord("host_error", { where: stop.where, error: stop.cause, tenant: spec.tenantId, sessionId: spec.sessionId, turnId: spec.turnId, runId });
    reservation?.release();
    bridge?.close();
    (cell?.vm ?? vm)?.dispose();
    if (!stop.keepRun) ctx.drop(runId);
    return failed(stop.message, stop.code, env.telemetry());
  } finally {
    ctx.resuming.delete(runId);
  }
}

/** The failure message when host calls a parked run waited for died with the object, or undefined. */
function lostHostCalls(state: ParkedRunState, results: Map<number, unknown>, reissued: ReadonlySet<number>): string | undefined {
  const lost = state.pending.filter((p) => p.kind === "tool" && !results.has(p.id) && !reissued.has(p.id));
  if (lost.length === 0) return undefined;
  const unique = [...new Set(lost.map((p) => (p.kind === "tool" ? p.tool : "")))];
  const names = unique.slice(0, 5).join(", ") + (unique.length > 5 ? `, and ${unique.length - 5} more` : "");
  return (
    `code mode run lost ${lost.length} nested tool call(s) (${names}) that were still running when the session object ` +
    "was restarted; their outcome is unknown. Inspect state before retrying; the run cannot be resumed."
  );
}

/** Parked requests with timers sorted by due time (then id), the rest in their stored order. */
function duePendingOrder(pending: ParkedRunState["pending"]): ParkedRunState["pending"] {
  const timers = pending.filter((p) => p.kind === "timer").sort((a, b) => a.dueAt - b.dueAt || a.id - b.id);
  return [...pending.filter((p) => p.kind !== "timer"), ...timers];
}
