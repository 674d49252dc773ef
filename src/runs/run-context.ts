import type { HostBridge, Settlement } from "../bridge";
import type { CellEnvironment } from "../cell";
import type { OutputBudget } from "../code-mode";
import type { ParkedRunState, SnapshotCodec } from "../snapshot-store";
import type { TurnSpec } from "../turns";

/**
 * Where parked runs are kept: the session object's SQLite (SnapshotStore) in production, an
 * in-memory map in the lifecycle's unit tests.
 */
export interface RunStore {
  count(): number;
  put(state: ParkedRunState, bytes: Uint8Array): void;
  state(runId: string): ParkedRunState | undefined;
  bytes(runId: string): Uint8Array | undefined;
  runsOfTurn(turnId: string): ParkedRunState[];
  markResuming(runId: string): void;
  isResuming(runId: string): boolean;
  expiredRunIds(now: number): string[];
  nextExpiry(): number | undefined;
  /** False when a result for that request was already stored. */
  storeResult(runId: string, requestId: number, settlement: Settlement): boolean;
  results(runId: string): Map<number, Settlement>;
  clearResults(runId: string): void;
  delete(runId: string): void;
}

/** Snapshot bytes that a later build (after a deploy) can still restore. */
export type RunCodec = Pick<SnapshotCodec, "encode" | "decode">;

/** What the run modules need from the session object. */
export type RunDeps = {
  store: RunStore;
  codec: RunCodec;
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

/** Per-cell host state kept in memory while a run is parked with host calls running (lost on eviction, by design). */
export type LiveRun = { bridge: HostBridge; budget: OutputBudget };

/** A `wait` that claimed its run: the run is resuming until the wait ends. */
export type Claim = { abort: AbortController; bridge?: HostBridge; state?: ParkedRunState };

/** How an exec or wait that ends may park: the run it continues, and what earlier results delivered. */
export type FinishOptions = {
  runId?: string;
  restartSafe: boolean;
  delivered?: ParkedRunState["delivered"];
  deliveredCalls?: string[];
};

/** The state the park, resume and delivery modules share (owned by RunLifecycle). */
export type RunContext = {
  readonly deps: RunDeps;
  /** Parked runs whose host calls still run in this instance. */
  readonly live: Map<string, LiveRun>;
  /** Runs being resumed by a wait right now. */
  readonly resuming: Map<string, Claim>;
  /** Forget a run: stop its kept host work and delete everything stored for it. */
  drop(runId: string): void;
};
