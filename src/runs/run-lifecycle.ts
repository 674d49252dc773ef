import { HostBridge, type Settlement } from "../bridge/host-bridge";
import { closeWith, driveCell, failed, failedWithBudget, type CellEnd, type CellEnvironment, type LiveCell } from "../cell/cell-runner";
import { OutputBudget } from "../code-mode/output-budget";
import type { CodeModeResult } from "../code-mode/types";
import { MAX_STATE_BYTES, MAX_SUSPENDED_RUNS } from "../limits";
import { logRecord } from "../observability/log";
import type { Snapshot } from "quickjs-wasi";
import { GuestVm } from "../runtime/guest-vm";
import { InterruptGuard } from "../runtime/interrupt-guard";
import { rawSnapshotBytes, type ParkedSnapshot, type SnapshotCodec } from "../snapshot-store/snapshot-codec";
import { restoreFailure, SnapshotRestoreError } from "../snapshot-store/snapshot-restore-error";
import type { ParkedRunState } from "../snapshot-store/parked-run";
import type { SnapshotStore } from "../snapshot-store/snapshot-store";
import type { TurnSpec } from "../turns/turn-spec";
import { RUN_INTERRUPTED, RUN_OTHER_SESSION, RUN_OTHER_TURN, RUN_UNAVAILABLE, TOO_MANY_SUSPENDED, WAIT_IN_FLIGHT } from "./messages";
import { deliveredMark, pendingCalls, sliceDelivered, withIncrementalOutput } from "./incremental-output";
import { newRunId, runIdScope } from "./run-id";

type FinishOptions = {
  runId?: string;
  restartSafe: boolean;
  delivered?: ParkedRunState["delivered"];
  deliveredCalls?: string[];
};


/** Per-cell host state kept in memory while a run is parked (lost on eviction, by design). */
type Live = { bridge: HostBridge; budget: OutputBudget };

export type RunDeps = {
  store: SnapshotStore;
  /** Snapshot bytes that a later build (after a deploy) can still restore. */
  codec: SnapshotCodec;
  /** Random per-session tag carried in run ids (never derived from tenant or session ids). */
  sessionTag(): string;
  now(): number;
  /** Run storage writes atomically (the session object's `transactionSync`). */
  transaction<T>(fn: () => T): T;
  /** Ask for an alarm at (or before) `at` so expiry does not wait for the next request. */
  scheduleExpiry(at: number): void;
};

/** What a turn contributes to a cell: limits, handlers, telemetry (without the output sink). */
export type CellEnvFactory = (spec: TurnSpec, signal: AbortSignal, restartSafe: boolean) => CellEnvironment;

const encoder = new TextEncoder();

/**
 * One owner per cell across exec, suspension and every resume: parks cells as durable
 * snapshots, resumes them for `wait`, stores results that arrive while parked, enforces the
 * 64-slot cap, TTL expiry and teardown.
 */
export class RunLifecycle {
  private readonly live = new Map<string, Live>();
  private readonly resuming = new Map<string, { abort: AbortController; bridge?: HostBridge; state?: ParkedRunState }>();

  constructor(private readonly deps: RunDeps) {}

  /** Turn an exec/wait end into the model-facing result, parking the cell if it suspended. */
  async finish(spec: TurnSpec, end: CellEnd, env: CellEnvironment, opts: FinishOptions): Promise<CodeModeResult> {
    if (end.kind === "result") {
      if (opts.runId) this.drop(opts.runId);
      return withIncrementalOutput(end.result, opts.delivered);
    }
    return this.park(spec, end.cell, end.reason, env, opts);
  }

  private async park(
    spec: TurnSpec,
    cell: LiveCell,
    reason: "pending_tools" | "yield",
    env: CellEnvironment,
    opts: FinishOptions,
  ): Promise<CodeModeResult> {
    const { store } = this.deps;
    if (!opts.runId && store.count() >= MAX_SUSPENDED_RUNS) {
      return closeWith(cell, failedWithBudget(cell, TOO_MANY_SUSPENDED, "invalid_input", env));
    }
    const runId = opts.runId ?? newRunId(this.deps.sessionTag());
    // Memory in use is a lower bound of the snapshot: refuse before copying the whole VM.
    const inUse = cell.vm.allocatedBytes();
    if (inUse > spec.options.maxSnapshotBytes) {
      this.drop(runId);
      return closeWith(
        cell,
        failedWithBudget(cell, `code mode snapshot would exceed maxSnapshotBytes (${spec.options.maxSnapshotBytes}); the run was dropped`, "snapshot_limit_exceeded", env),
      );
    }
    const where = { tenant: spec.tenantId, sessionId: spec.sessionId, turnId: spec.turnId, runId };
    let snapshot: Snapshot;
    try {
      snapshot = cell.vm.snapshot();
    } catch (error) {
      logRecord("host_error", { where: "park.snapshot", error, ...where });
      this.drop(runId);
      return closeWith(cell, failedWithBudget(cell, "the code mode VM could not be snapshotted", "internal_error", env));
    }
    const output = cell.budget.pending();
    const now = this.deps.now();
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
    if (size > spec.options.maxSnapshotBytes || stateBytes > MAX_STATE_BYTES) {
      this.drop(runId);
      return closeWith(
        cell,
        failedWithBudget(cell, `code mode snapshot is ${size} bytes, over maxSnapshotBytes (${spec.options.maxSnapshotBytes}); the run was dropped`, "snapshot_limit_exceeded", env),
      );
    }
    let bytes: Uint8Array;
    try {
      bytes = await this.deps.codec.encode(snapshot, cell.vm.abi);
    } catch (error) {
      logRecord("host_error", { where: "park.encode", error, ...where });
      this.drop(runId);
      return closeWith(cell, failedWithBudget(cell, "the code mode VM could not be snapshotted", "internal_error", env));
    }
    if (env.signal.aborted) {
      // Teardown or cancellation arrived while compressing: nothing may be parked.
      this.drop(runId);
      return closeWith(cell, failedWithBudget(cell, "the code mode run was aborted", "aborted", env));
    }
    // Host work that settled since the guest last ran (even while compressing) is kept as a
    // stored result; nothing that already happened may be lost by parking.
    const settled = cell.bridge.takeReady();
    const pending: ParkedRunState["pending"] = [...cell.bridge.pending(), ...settled.map((r) => ({ id: r.id, kind: "settled" as const }))];
    const state = makeState(pending);
    try {
      // One transaction: the run row, its chunks and its results appear together or not at all.
      this.deps.transaction(() => {
        store.clearResults(runId);
        store.put(state, bytes);
        for (const r of settled) store.storeResult(runId, r.id, r.settlement);
      });
    } catch (error) {
      logRecord("host_error", { where: "park.store", error, ...where });
      this.drop(runId);
      return closeWith(cell, failedWithBudget(cell, "the parked run could not be stored; it was dropped", "internal_error", env));
    }
    this.deps.scheduleExpiry(state.expiresAt);
    cell.vm.dispose();

    // Host tool calls keep running while parked; what they return is stored durably and
    // delivered by the next wait like any stored result (client results included).
    if (cell.bridge.hostCallsInFlight > 0) {
      cell.bridge.detach((id, settlement) => {
        try {
          if (this.deps.store.state(runId)) this.deps.store.storeResult(runId, id, settlement);
        } catch (error) {
          // Nobody awaits a parked run's host call: the next wait finds the result missing and says so.
          logRecord("host_error", { where: "park.store_result", error, ...where });
        }
      });
      this.live.set(runId, { bridge: cell.bridge, budget: cell.budget });
    } else {
      cell.bridge.close();
      this.live.delete(runId);
    }
    const newOutput = sliceDelivered(output, opts.delivered);
    return {
      status: "waiting",
      runId,
      reason,
      ...(pendingCalls(pending, spec.options.maxOutputBytes).length ? { pendingToolCalls: pendingCalls(pending, spec.options.maxOutputBytes) } : {}),
      ...(newOutput?.length ? { output: newOutput } : {}),
      telemetry: env.telemetry(),
    };
  }

  /**
   * Validate a wait before queueing it. Marks the run as resuming synchronously, so a second
   * concurrent wait for the same runId fails instead of queueing behind the first.
   */
  claim(spec: TurnSpec, input: unknown): { ok: true; runId: string } | { ok: false; message: string; code?: "internal_error" } {
    const runId = input !== null && typeof input === "object" ? (input as { runId?: unknown }).runId : undefined;
    if (typeof runId !== "string" || runId.length === 0) return { ok: false, message: "wait needs { runId } from a waiting result." };
    if (input !== null && typeof input === "object" && Object.keys(input).some((k) => k !== "runId")) {
      return { ok: false, message: "wait takes only { runId }." };
    }
    const scope = runIdScope(runId, this.deps.sessionTag());
    if (scope === "other-session") return { ok: false, message: RUN_OTHER_SESSION };
    if (scope === "malformed") return { ok: false, message: RUN_UNAVAILABLE };
    if (this.resuming.has(runId)) return { ok: false, message: WAIT_IN_FLIGHT };
    const state = this.deps.store.state(runId);
    if (!state) return { ok: false, message: RUN_UNAVAILABLE };
    if (state.turnId !== spec.turnId) return { ok: false, message: RUN_OTHER_TURN };
    if (this.deps.store.isResuming(runId)) {
      // A resume started and never finished (the object was reset mid-wait): what the program
      // did after its snapshot is unknown, so replaying it could repeat side effects.
      this.drop(runId);
      return { ok: false, message: RUN_INTERRUPTED, code: "internal_error" };
    }
    if (state.expiresAt <= this.deps.now()) {
      this.drop(runId);
      return { ok: false, message: RUN_UNAVAILABLE };
    }
    this.resuming.set(runId, { abort: new AbortController(), state });
    return { ok: true, runId };
  }

  /** `wait`: restore, deliver what settled, drive until completed, failed or waiting again. */
  async resume(spec: TurnSpec, runId: string, makeEnv: CellEnvFactory): Promise<CodeModeResult> {
    const claim = this.resuming.get(runId)!;
    try {
      // Read once at claim time; nothing else touches a claimed run's row.
      const state = claim.state ?? this.deps.store.state(runId);
      const env0 = makeEnv(spec, claim.abort.signal, state?.restartSafe ?? false);
      if (!state) return failed(RUN_UNAVAILABLE, "invalid_input", env0.telemetry());
      // Room in the isolate's VM memory before anything else: a wait that gets none within its
      // deadline fails with runtime_unavailable and leaves the run parked as it was, resumable
      // by a later wait. From here the reservation is released by the restored VM, or below.
      const deadline = this.deps.now() + spec.options.timeoutMs;
      const room = await env0.vms.pool.reserve(env0.options.memoryLimitBytes, { deadline, clock: env0.clock, signal: env0.signal, owner: env0.vms.owner });
      if (!room.ok && room.reason === "exhausted") return failed(room.message, "runtime_unavailable", env0.telemetry());
      if (!room.ok) {
        this.drop(runId);
        return failed("the code mode run was aborted", "aborted", env0.telemetry());
      }
      const bytes = this.deps.store.bytes(runId);
      // Decoded before the run is taken over (and before its results are read): when the
      // image registry does not answer, the run stays parked exactly as it was.
      let parked: ParkedSnapshot;
      try {
        if (!bytes) throw new SnapshotRestoreError("missing", "its stored snapshot is missing or incomplete");
        parked = await this.deps.codec.decode(bytes);
      } catch (error) {
        logRecord("host_error", { where: "resume.decode", error, tenant: spec.tenantId, sessionId: spec.sessionId, turnId: spec.turnId, runId });
        room.limits.reservation.release();
        const failure = restoreFailure(error);
        if (!failure.keepRun) this.drop(runId);
        return failed(failure.message, "internal_error", env0.telemetry());
      }
      const results = this.deps.store.results(runId);
      const live = this.live.get(runId);
      this.live.delete(runId);

      // A host call that was in flight when the object was evicted has no result and no
      // owner: resuming would hand the guest a missing result, so the run fails instead.
      if (!live) {
        const lost = state.pending.filter((p) => p.kind === "tool" && !results.has(p.id));
        if (lost.length > 0) {
          room.limits.reservation.release();
          this.drop(runId);
          const unique = [...new Set(lost.map((p) => (p.kind === "tool" ? p.tool : "")))];
          const names = unique.slice(0, 5).join(", ") + (unique.length > 5 ? `, and ${unique.length - 5} more` : "");
          return failed(
            `code mode run lost ${lost.length} nested tool call(s) (${names}) that were still running when the session object was restarted; their outcome is unknown. Inspect state before retrying; the run cannot be resumed.`,
            "internal_error",
            env0.telemetry(),
          );
        }
      }

      const budget = live?.budget ?? OutputBudget.fromJSON(state.budget);
      const guard = new InterruptGuard({ now: () => this.deps.now() }, deadline, spec.options.timeoutMs);
      const env: CellEnvironment = { ...env0, clock: env0.clock };
      let bridge: HostBridge;
      if (live) {
        bridge = live.bridge.reattach();
      } else {
        bridge = new HostBridge(
          { ...env.handlers, output: (kind, text) => (kind === "json" ? budget.pushJson(text) : budget.pushText(text)) },
          {
            maxPendingToolCalls: spec.options.maxPendingToolCalls,
            maxRequestBytes: Math.max(1024 * 1024, spec.options.maxOutputBytes),
            maxClientInputBytes: spec.options.maxOutputBytes,
          },
          env.clock,
        );
      }
      // Timers in due order (overdue ones fire in that order), client calls awaiting results.
      for (const p of duePendingOrder(state.pending)) bridge.adopt(p);
      claim.bridge = bridge;
      let vm: GuestVm;
      try {
        vm = await GuestVm.restore(parked.snapshot, state.controlToken, room.limits, guard, bridge, parked.abi);
      } catch (error) {
        logRecord("host_error", { where: "resume.restore", error, tenant: spec.tenantId, sessionId: spec.sessionId, turnId: spec.turnId, runId });
        room.limits.reservation.release();
        bridge.close();
        this.drop(runId);
        return failed(restoreFailure(error).message, "internal_error", env.telemetry());
      }
      // Once the resumed program starts a tool call it has moved past its snapshot with a
      // possible side effect: mark it first, so a reset cannot replay it. (Output gates hold
      // the call's outgoing traffic until the mark is durable.)
      bridge.beforeFirstCall = () => this.deps.store.markResuming(runId);
      // Everything that settled while parked is in storage, whether the bridge was kept or not.
      for (const [id, settlement] of results) bridge.deliver(id, settlement);
      const yields = state.pending.filter((p) => p.kind === "yield");
      if (yields.length > 0) bridge.clearYield();
      for (const y of yields) bridge.deliver(y.id, { ok: true, text: undefined });
      const cell: LiveCell = { vm, bridge, budget, guard };
      const end = await driveCell(cell, deadline, env);
      return await this.finish(spec, end, env, {
        runId,
        restartSafe: state.restartSafe,
        delivered: state.delivered,
        deliveredCalls: [...(state.deliveredCalls ?? []), ...state.pending.flatMap((p) => (p.kind === "client" && results.has(p.id) ? [p.callId] : []))],
      });
    } finally {
      this.resuming.delete(runId);
    }
  }

  /** Release a claim whose wait never ran (e.g. the turn was closed while it was queued). */
  release(runId: string): void {
    this.resuming.delete(runId);
  }

  /** A client tool result for a parked (or resuming) run of this turn. */
  deliverClientResult(turnId: string, callId: string, settlement: Settlement): { ok: true } | { ok: false; status: 404 | 409; message: string } {
    for (const state of this.deps.store.runsOfTurn(turnId)) {
      if (state.deliveredCalls?.includes(callId)) return { ok: false, status: 409, message: `a result for ${callId} was already delivered` };
      const call = state.pending.find((p) => p.kind === "client" && p.callId === callId);
      if (!call) continue;
      if (!this.deps.store.storeResult(state.runId, call.id, settlement)) {
        return { ok: false, status: 409, message: `a result for ${callId} was already delivered` };
      }
      this.resuming.get(state.runId)?.bridge?.deliver(call.id, settlement);
      return { ok: true };
    }
    return { ok: false, status: 404, message: `unknown callId ${JSON.stringify(callId)} for this turn` };
  }

  /** Teardown: cancel active waits and pending host work, drop every parked snapshot. */
  closeTurn(turnId: string): void {
    for (const state of this.deps.store.runsOfTurn(turnId)) {
      this.resuming.get(state.runId)?.abort.abort();
      this.drop(state.runId);
    }
  }

  /** Alarm: drop expired runs (not those being resumed right now) and re-arm. */
  expire(): number {
    let dropped = 0;
    for (const runId of this.deps.store.expiredRunIds(this.deps.now())) {
      if (this.resuming.has(runId)) continue;
      this.drop(runId);
      dropped++;
    }
    const next = this.deps.store.nextExpiry();
    // A run being resumed is skipped above; never re-arm in the past (that would spin).
    if (next !== undefined) this.deps.scheduleExpiry(Math.max(next, this.deps.now() + 1000));
    return dropped;
  }

  private drop(runId: string): void {
    this.live.get(runId)?.bridge.close();
    this.live.delete(runId);
    this.deps.store.delete(runId);
  }
}

/** Parked requests with timers sorted by due time (then id), the rest in their stored order. */
function duePendingOrder(pending: ParkedRunState["pending"]): ParkedRunState["pending"] {
  const timers = pending.filter((p) => p.kind === "timer").sort((a, b) => a.dueAt - b.dueAt || a.id - b.id);
  return [...pending.filter((p) => p.kind !== "timer"), ...timers];
}
