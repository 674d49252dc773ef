/**
 * In-memory adapters for every port of the turn service (src/session/ports.ts, `SessionPorts`), so
 * tests drive `TurnService` without a Durable Object or SQLite — as src/runs is driven over
 * `InMemoryRunStore`. Each adapter keeps the behaviour of its SQLite counterpart in
 * durable-objects/session/ that the service relies on (tenant-scoped turns, writes only for live
 * turns, the transcript's bound, the trajectory's bound and drop-oldest room making, quota
 * charges per turn), and every write goes through a `MemoryDb` whose transactions roll back
 * whole on a throw, as `transactionSync` does. VMs are real (`VmPool`, `MemoryLedger`), snapshots
 * are encoded by a `SnapshotCodec` without an image registry, time is a manual clock.
 */
import type { ChatState, TrajectoryRow } from "../../src/agent";
import type { Settlement } from "../../src/bridge";
import { loadGatewayConfig, SESSION_LIMIT_DEFAULTS, type SessionLimits } from "../../src/config";
import { DELIVERED_CALLS_LIMIT, MAX_TRAJECTORY_EVENTS, MAX_TRANSCRIPT_BYTES, NESTED_PREVIEW_BYTES } from "../../src/limits";
import { redactedPreview } from "../../src/observability";
import type { ApprovalAnswer, ApprovalRequester } from "../../src/policy";
import type { ModelMessage } from "../../src/providers";
import { FREE_SPACE, QuotaExceeded, quotaExceeded, Reservations, type Reservation } from "../../src/quota";
import { manualClock, MemoryLedger, VmPool, type CellVms } from "../../src/runtime";
import { newSessionTag, RunLifecycle, type RunStore } from "../../src/runs";
import {
  encodeTurn,
  TurnService,
  type Admission,
  type ApprovalDecisionInput,
  type ApprovalsPort,
  type EncodedTurn,
  type ExpiryPort,
  type PendingApproval,
  type Promised,
  type QuotaPort,
  type Redaction,
  type SessionPorts,
  type SessionStoragePort,
  type StoredTurn,
  type ToolCallClient,
  type ToolCallClientsPort,
  type TranscriptPort,
  type TurnStorePort,
} from "../../src/session";
import { RESULT_ROW_OVERHEAD, SnapshotCodec, type ParkedRunState, type WriteGuard } from "../../src/snapshot-store";
import type { SessionStore, ToolPlugin } from "../../src/tools";
import type { TurnCounters, TurnSpec } from "../../src/turns";

const utf8 = new TextEncoder();
const byteLength = (text: string): number => utf8.encode(text).length;

export type ManualClock = ReturnType<typeof manualClock>;

// --- Tables and transactions -------------------------------------------------------------------

/**
 * The session's storage as plain maps. Writes inside `transaction` are undone, newest first, when
 * its callback throws (nested transactions roll back to their own start), as the Durable Object's
 * `transactionSync` does. Stored values are replaced, never changed in place: that is what makes an
 * undo a restore.
 */
export class MemoryDb {
  private log: Array<() => void> | undefined;
  private readonly tables: Array<Table<unknown, unknown>> = [];
  /** Transactions that committed (outermost ones only). */
  committed = 0;
  /** Transactions rolled back by a throw (any depth). */
  rolledBack = 0;

  table<K, V>(): Table<K, V> {
    const t = new Table<K, V>((undo) => this.log?.push(undo));
    this.tables.push(t as Table<unknown, unknown>);
    return t;
  }

  transaction<T>(fn: () => T): T {
    const outer = this.log;
    const log: Array<() => void> = [];
    this.log = log;
    const undo = () => {
      for (let i = log.length - 1; i >= 0; i--) log[i]!();
      this.rolledBack++;
    };
    let out: T;
    try {
      out = fn();
    } catch (error) {
      undo();
      throw error;
    } finally {
      this.log = outer;
    }
    // transactionSync commits when its callback returns: an async callback's later writes would be outside it.
    if (out !== null && typeof out === "object" && typeof (out as { then?: unknown }).then === "function") {
      undo();
      throw new Error("a storage transaction's callback must be synchronous");
    }
    if (outer) outer.push(...log);
    else this.committed++;
    return out;
  }

  /** Everything the session stored goes (the object's `deleteAll`). */
  wipe(): void {
    for (const t of this.tables) t.clear();
  }
}

/** One table: a map whose writes are recorded for the enclosing transaction's undo. */
export class Table<K, V> {
  private readonly rows = new Map<K, V>();

  constructor(private readonly record: (undo: () => void) => void) {}

  get size(): number {
    return this.rows.size;
  }
  get(key: K): V | undefined {
    return this.rows.get(key);
  }
  has(key: K): boolean {
    return this.rows.has(key);
  }
  keys(): K[] {
    return [...this.rows.keys()];
  }
  values(): V[] {
    return [...this.rows.values()];
  }
  entries(): Array<[K, V]> {
    return [...this.rows.entries()];
  }
  set(key: K, value: V): void {
    const had = this.rows.has(key);
    const old = this.rows.get(key);
    this.rows.set(key, value);
    this.record(() => (had ? this.rows.set(key, old as V) : this.rows.delete(key)));
  }
  delete(key: K): boolean {
    if (!this.rows.has(key)) return false;
    const old = this.rows.get(key) as V;
    this.rows.delete(key);
    this.record(() => this.rows.set(key, old));
    return true;
  }
  clear(): void {
    for (const key of this.keys()) this.delete(key);
  }
}

// --- Parked runs ---------------------------------------------------------------------------------

type RunRow = { state: ParkedRunState; bytes: Uint8Array; resuming: boolean };

/** The run store over plain maps: what the run lifecycle needs, nothing of SQLite (SnapshotStore's behaviour). */
export class InMemoryRunStore implements RunStore {
  readonly runs: Table<string, RunRow>;
  /** Results stored for parked runs, one row per (run, request). */
  readonly stored: Table<string, { runId: string; requestId: number; settlement: Settlement }>;

  constructor(
    db: MemoryDb = new MemoryDb(),
    /** Checks what a write adds against the session's quota (absent: unguarded). */
    private readonly guard: WriteGuard = (_bytes, write) => write(),
  ) {
    this.runs = db.table();
    this.stored = db.table();
  }

  count = (): number => this.runs.size;

  put(state: ParkedRunState, bytes: Uint8Array): void {
    const old = this.runs.get(state.runId);
    const oldBytes = old ? old.bytes.length + byteLength(JSON.stringify(old.state)) : 0;
    this.guard(
      bytes.length + byteLength(JSON.stringify(state)) - oldBytes,
      () => this.runs.set(state.runId, { state: structuredClone(state), bytes: bytes.slice(), resuming: false }),
      "parking this run",
    );
  }
  state = (runId: string): ParkedRunState | undefined => {
    const r = this.runs.get(runId);
    return r ? structuredClone(r.state) : undefined;
  };
  bytes = (runId: string): Uint8Array | undefined => this.runs.get(runId)?.bytes.slice();
  storedBytes = (runId: string): number | undefined => this.runs.get(runId)?.bytes.length;
  runsOfTurn = (turnId: string): ParkedRunState[] =>
    this.runs
      .values()
      .filter((r) => r.state.turnId === turnId)
      .map((r) => structuredClone(r.state));
  markResuming(runId: string): void {
    const r = this.runs.get(runId);
    if (r) this.runs.set(runId, { ...r, resuming: true });
  }
  isResuming = (runId: string): boolean => this.runs.get(runId)?.resuming === true;
  expiredRunIds = (now: number): string[] =>
    this.runs
      .values()
      .filter((r) => r.state.expiresAt <= now)
      .map((r) => r.state.runId);
  nextExpiry(): number | undefined {
    const all = this.runs.values().map((r) => r.state.expiresAt);
    return all.length === 0 ? undefined : Math.min(...all);
  }
  storeResult(runId: string, requestId: number, settlement: Settlement): boolean {
    const key = `${runId}\u0000${requestId}`;
    if (this.stored.has(key)) return false;
    const text = settlement.ok ? settlement.text : settlement.message;
    this.guard(
      RESULT_ROW_OVERHEAD + (text === undefined ? 0 : byteLength(text)),
      () => this.stored.set(key, { runId, requestId, settlement: { ...settlement } }),
      "storing this result for the parked run",
    );
    return true;
  }
  results = (runId: string): Map<number, Settlement> =>
    new Map(
      this.stored
        .values()
        .filter((r) => r.runId === runId)
        .map((r) => [r.requestId, { ...r.settlement }]),
    );
  clearResults(runId: string): void {
    for (const [key, r] of this.stored.entries()) if (r.runId === runId) this.stored.delete(key);
  }
  delete(runId: string): void {
    this.clearResults(runId);
    this.runs.delete(runId);
  }

  /** What parked runs count against the session's quota: snapshot bytes, state, stored results. */
  parkedBytes(): number {
    let total = 0;
    for (const r of this.runs.values()) total += r.bytes.length + byteLength(JSON.stringify(r.state));
    for (const r of this.stored.values()) {
      const text = r.settlement.ok ? r.settlement.text : r.settlement.message;
      total += RESULT_ROW_OVERHEAD + (text === undefined ? 0 : byteLength(text));
    }
    return total;
  }
}

// --- Quota ---------------------------------------------------------------------------------------

/**
 * The session's storage quota. Admits everything until a test sets `maxStoredBytes` or `maxTurns`;
 * then it refuses as StorageQuota does (a turn that would not fit, a write that would grow the
 * session past the bound: `QuotaExceeded`, nothing written). Bytes are counted where the SQLite
 * quota counts them: on each turn's row, per tool key, and in parked runs.
 */
export class InMemoryQuota implements QuotaPort {
  maxStoredBytes = Number.POSITIVE_INFINITY;
  maxTurns = Number.POSITIVE_INFINITY;
  readonly reservations = new Reservations();
  /** What each turn's row is charged (`turns.stored_bytes`): its spec and counters, and what its stores added. */
  readonly turnBytes: Table<string, number>;
  /** What each tool (kv) key is charged. */
  readonly toolBytes: Table<string, number>;

  constructor(
    private readonly db: MemoryDb,
    private readonly ready: () => boolean,
    private readonly parkedBytes: () => number,
  ) {
    this.turnBytes = db.table();
    this.toolBytes = db.table();
  }

  usage(): { turns: number; bytes: number } {
    if (!this.ready()) return { turns: 0, bytes: 0 };
    const sum = (t: Table<string, number>) => t.values().reduce((n, b) => n + b, 0);
    return { turns: this.turnBytes.size, bytes: sum(this.turnBytes) + sum(this.toolBytes) + this.parkedBytes() };
  }

  /** By how many bytes a write of `bytes` would exceed the bound now (≤ 0: it fits). */
  shortfall(bytes: number, promised?: Promised): number {
    const take = promised ? Math.min(promised.take, promised.reservation.remaining) : 0;
    return this.usage().bytes + this.reservations.total - take + bytes - this.maxStoredBytes;
  }

  reserve(bytes: number): Reservation | undefined {
    return this.reservations.reserve(bytes, this.maxStoredBytes - this.usage().bytes);
  }

  admitTurn(bytes: number, extra = 0): Admission {
    const used = this.usage();
    if (used.turns >= this.maxTurns)
      return { ok: false, message: `this session holds ${used.turns} turns, the limit (maxTurnsPerSession = ${this.maxTurns}); ${FREE_SPACE}` };
    const after = used.bytes + this.reservations.total + bytes + extra;
    if (after > this.maxStoredBytes)
      return {
        ok: false,
        message: `this turn (${bytes + extra} bytes) would bring the session's storage to ${after} bytes, over maxStoredBytes (${this.maxStoredBytes}); ${FREE_SPACE}`,
      };
    return { ok: true };
  }

  /** The guarded write (StorageQuota.grow): checked, written and charged to `turnId` together, or refused whole. */
  grow<T>(turnId: string | null, bytes: number, write: () => T, what = "this write", promised?: Promised): T {
    return this.db.transaction(() => {
      if (bytes > 0) {
        const over = this.shortfall(bytes, promised);
        if (over > 0) throw quotaExceeded(what, bytes, this.maxStoredBytes + over, this.maxStoredBytes);
      }
      const out = write();
      const charged = turnId === null ? undefined : this.turnBytes.get(turnId);
      if (turnId !== null && charged !== undefined && bytes !== 0) this.turnBytes.set(turnId, Math.max(0, charged + bytes));
      if (promised) promised.reservation.take(promised.take);
      return out;
    });
  }

  /** A tool value of `bytes` under `key` (StorageQuota.charge): refused when it would grow the session past the bound. */
  charge(key: string, bytes: number, write: () => void): void {
    if (!this.ready()) throw new QuotaExceeded("this session was deleted; its storage is gone");
    this.db.transaction(() => {
      const old = this.toolBytes.get(key) ?? 0;
      if (bytes > old) {
        const over = this.shortfall(bytes - old);
        if (over > 0)
          throw quotaExceeded("this write", bytes, this.maxStoredBytes + over, this.maxStoredBytes, "delete tool data you no longer need, or ");
      }
      write();
      this.toolBytes.set(key, bytes);
    });
  }

  release(key: string, remove: () => boolean): boolean {
    if (!this.ready()) return false;
    return this.db.transaction(() => {
      const removed = remove();
      this.toolBytes.delete(key);
      return removed;
    });
  }
}

// --- Turns ---------------------------------------------------------------------------------------

type TurnRow = { tenantId: string; spec: string; counters: string; lastActiveAt: number };

/** A delivered-call record's own columns, counted with its call id (TurnStore). */
const DELIVERED_ROW_BYTES = 64;

/**
 * Turns, tenant-scoped, stored as their JSON text: every `get` parses a fresh copy, so a counter
 * changed and never saved (`saveCounters`) is not stored. (The SQLite store keeps recently used turns
 * parsed and hands out the same object; this one is stricter.) A held turn (`hold`, while a call
 * runs on it) is the exception, in both: its calls share one parsed copy, so their counters add up.
 */
export class InMemoryTurnStore implements TurnStorePort {
  readonly rows: Table<string, TurnRow>;
  private readonly delivered: Table<string, readonly string[]>;
  private readonly held = new Map<string, { n: number; turn: StoredTurn }>();

  constructor(
    db: MemoryDb,
    private readonly ready: () => boolean,
    private readonly quota: InMemoryQuota,
  ) {
    this.rows = db.table();
    this.delivered = db.table();
  }

  insert(spec: TurnSpec, counters: TurnCounters, row: EncodedTurn = encodeTurn(spec, counters)): void {
    if (this.rows.has(spec.turnId)) throw new Error(`UNIQUE constraint failed: turns.turn_id (${spec.turnId})`);
    this.rows.set(spec.turnId, { tenantId: spec.tenantId, spec: row.spec, counters: row.counters, lastActiveAt: spec.createdAt });
    this.quota.turnBytes.set(spec.turnId, row.charged);
  }

  get(tenantId: string, turnId: string): StoredTurn | undefined {
    if (!this.ready()) return undefined;
    const row = this.rows.get(turnId);
    if (!row || row.tenantId !== tenantId) return undefined;
    const held = this.held.get(turnId);
    if (held) return held.turn;
    return { spec: JSON.parse(row.spec) as TurnSpec, counters: JSON.parse(row.counters) as TurnCounters };
  }

  /** While held, every `get` of the turn answers one parsed copy (the SQLite store's cache does the same). */
  hold(tenantId: string, turnId: string): { turn: StoredTurn; release: () => void } | undefined {
    const turn = this.get(tenantId, turnId);
    if (!turn) return undefined;
    const held = this.held.get(turnId) ?? { n: 0, turn };
    held.n++;
    this.held.set(turnId, held);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      if (--held.n === 0) this.held.delete(turnId);
    };
    return { turn: held.turn, release };
  }

  saveCounters(turnId: string, counters: TurnCounters): void {
    const row = this.rows.get(turnId);
    if (row) this.rows.set(turnId, { ...row, counters: JSON.stringify(counters) });
  }

  /** Newest first: the insertion order reversed (turns are inserted as they open). */
  ids(): string[] {
    return this.ready() ? [...this.rows.keys()].reverse() : [];
  }

  forget(): void {
    // Nothing is cached.
  }

  recordDelivered(turnId: string, callId: string): void {
    if (this.wasDelivered(turnId, callId)) return;
    const list = this.delivered.get(turnId) ?? [];
    this.quota.grow(
      turnId,
      DELIVERED_ROW_BYTES + byteLength(callId),
      () => this.delivered.set(turnId, [...list, callId]),
      "recording this client result",
    );
    const now = this.delivered.get(turnId)!;
    if (now.length <= DELIVERED_CALLS_LIMIT) return;
    const gone = now.slice(0, now.length - DELIVERED_CALLS_LIMIT);
    const freed = gone.reduce((n, c) => n + DELIVERED_ROW_BYTES + byteLength(c), 0);
    this.quota.grow(turnId, -freed, () => this.delivered.set(turnId, now.slice(gone.length)));
  }

  wasDelivered(turnId: string, callId: string): boolean {
    return this.delivered.get(turnId)?.includes(callId) === true;
  }

  delete(turnId: string): boolean {
    this.delivered.delete(turnId);
    this.quota.turnBytes.delete(turnId);
    return this.rows.delete(turnId);
  }

  /** The turn's last recorded activity (its idle expiry counts from here). */
  lastActive(turnId: string): number | undefined {
    return this.rows.get(turnId)?.lastActiveAt;
  }

  setLastActive(turnId: string, at: number): void {
    const row = this.rows.get(turnId);
    if (row) this.rows.set(turnId, { ...row, lastActiveAt: at });
  }
}

// --- Transcript ----------------------------------------------------------------------------------

/** A trajectory row's own columns, counted with its kind and body (TranscriptStore). */
const EVENT_ROW_OVERHEAD = 64;
/** Trajectory slots kept for the turn's own lifecycle once nested activity filled the rest (TranscriptStore). */
const NESTED_RESERVE = 200;
const eventBytes = (kind: string, body: string): number => EVENT_ROW_OVERHEAD + byteLength(kind) + byteLength(body);

type EventRow = { seq: number; turnId: string; at: number; kind: string; body: string };

/**
 * A turn's /chat state, transcript, trajectory, open outer calls and untrusted runs, with
 * TranscriptStore's behaviour: writes only for a live turn; `append` answers false once the
 * transcript is past MAX_TRANSCRIPT_BYTES (the message is kept); messages and state that the session
 * cannot hold are refused (`QuotaExceeded`); trajectory events past MAX_TRAJECTORY_EVENTS are only
 * counted (`omitted`, nested and policy events stop NESTED_RESERVE early); an event the quota cannot
 * hold removes the turn's oldest events (nested and policy first) or is counted as dropped.
 */
export class InMemoryTranscript implements TranscriptPort {
  private readonly states: Table<string, string>;
  private readonly messageRows: Table<number, { turnId: string; text: string; bytes: number }>;
  private readonly eventRows: Table<number, EventRow>;
  private readonly dropped: Table<string, number>;
  private readonly open: Table<string, { turnId: string; callId: string; tool: string; startedAt: number }>;
  private readonly untrusted: Table<string, string>;
  private seq = 0;

  constructor(
    db: MemoryDb,
    private readonly ready: () => boolean,
    private readonly turnExists: (turnId: string) => boolean,
    private readonly quota: InMemoryQuota,
  ) {
    this.states = db.table();
    this.messageRows = db.table();
    this.eventRows = db.table();
    this.dropped = db.table();
    this.open = db.table();
    this.untrusted = db.table();
  }

  private live(turnId: string): boolean {
    return this.ready() && this.turnExists(turnId);
  }

  state(turnId: string): ChatState | undefined {
    if (!this.ready()) return undefined;
    const text = this.states.get(turnId);
    return text === undefined ? undefined : (JSON.parse(text) as ChatState);
  }

  saveState(turnId: string, state: ChatState, promised?: Promised): void {
    if (!this.live(turnId)) return;
    const text = JSON.stringify(state);
    const old = this.states.get(turnId);
    this.quota.grow(
      turnId,
      byteLength(text) - (old === undefined ? 0 : byteLength(old)),
      () => this.states.set(turnId, text),
      "this turn's /chat state",
      promised,
    );
  }

  append(turnId: string, message: ModelMessage, promised?: Promised): boolean {
    return this.appendAll(turnId, [message], promised);
  }

  appendAll(turnId: string, messages: readonly ModelMessage[], promised?: Promised): boolean {
    if (!this.live(turnId)) return false;
    const rows = messages.map((m) => {
      const text = JSON.stringify(m);
      return { turnId, text, bytes: byteLength(text) };
    });
    const total = rows.reduce((n, r) => n + r.bytes, 0);
    const what = rows.length === 1 ? "this transcript message" : `these ${rows.length} transcript messages`;
    this.quota.grow(
      turnId,
      total,
      () => {
        for (const r of rows) this.messageRows.set(++this.seq, r);
      },
      what,
      promised,
    );
    return this.transcriptBytes(turnId) <= MAX_TRANSCRIPT_BYTES;
  }

  transcriptBytes(turnId: string): number {
    return this.messageRows
      .values()
      .filter((r) => r.turnId === turnId)
      .reduce((n, r) => n + r.bytes, 0);
  }

  messages(turnId: string): ModelMessage[] {
    return this.messageRows
      .entries()
      .filter(([, r]) => r.turnId === turnId)
      .sort(([a], [b]) => a - b)
      .map(([, r]) => JSON.parse(r.text) as ModelMessage);
  }

  private turnEvents(turnId: string): EventRow[] {
    return this.eventRows
      .values()
      .filter((r) => r.turnId === turnId)
      .sort((a, b) => a.seq - b.seq);
  }

  event(turnId: string, at: number, kind: string, body: Record<string, unknown>): void {
    if (!this.live(turnId)) return;
    const n = this.turnEvents(turnId).length;
    const room = (kind === "nested" || kind === "policy" ? MAX_TRAJECTORY_EVENTS - NESTED_RESERVE : MAX_TRAJECTORY_EVENTS) - 1;
    if (n < room) {
      const text = JSON.stringify(body);
      const seq = ++this.seq;
      this.insertEvent(turnId, eventBytes(kind, text), () => this.eventRows.set(seq, { seq, turnId, at, kind, body: text }));
      return;
    }
    const omitted = this.turnEvents(turnId).find((r) => r.kind === "omitted");
    if (omitted) {
      const count = (JSON.parse(omitted.body) as { count: number }).count + 1;
      this.eventRows.set(omitted.seq, { ...omitted, body: JSON.stringify({ count }) });
    } else {
      const seq = ++this.seq;
      this.insertEvent(turnId, eventBytes("omitted", JSON.stringify({ count: Number.MAX_SAFE_INTEGER })), () =>
        this.eventRows.set(seq, { seq, turnId, at, kind: "omitted", body: JSON.stringify({ count: 1 }) }),
      );
    }
  }

  private insertEvent(turnId: string, bytes: number, write: () => void): void {
    if (!this.makeRoom(turnId, bytes)) return this.countDropped(turnId, 1);
    try {
      this.quota.grow(turnId, bytes, write, "this trajectory event");
    } catch {
      this.countDropped(turnId, 1);
    }
  }

  private makeRoom(turnId: string, bytes: number): boolean {
    const need = this.quota.shortfall(bytes);
    if (need <= 0) return true;
    const candidates = this.turnEvents(turnId)
      .filter((r) => r.kind !== "omitted")
      .sort((a, b) => rank(a) - rank(b) || a.seq - b.seq);
    const own = candidates.reduce((n, r) => n + eventBytes(r.kind, r.body), 0);
    if (own < need) return false;
    let freed = 0;
    let removed = 0;
    for (const r of candidates) {
      if (freed >= need) break;
      const b = eventBytes(r.kind, r.body);
      this.quota.grow(turnId, -b, () => this.eventRows.delete(r.seq));
      freed += b;
      removed++;
    }
    this.countDropped(turnId, removed);
    return freed >= need;
  }

  private countDropped(turnId: string, n: number): void {
    if (n > 0 && this.turnExists(turnId)) this.dropped.set(turnId, (this.dropped.get(turnId) ?? 0) + n);
  }

  droppedEvents(turnId: string): number {
    return this.ready() ? (this.dropped.get(turnId) ?? 0) : 0;
  }

  events(turnId: string): TrajectoryRow[] {
    if (!this.ready()) return [];
    return this.turnEvents(turnId).map((r) => ({ at: r.at, kind: r.kind, body: JSON.parse(r.body) as Record<string, unknown> }));
  }

  parentOf(turnId: string, invocationId: string): string | undefined {
    for (const r of this.turnEvents(turnId)) {
      if (r.kind !== "client_call") continue;
      const body = JSON.parse(r.body) as { invocationId?: string; parentCallId?: string };
      if (body.invocationId === invocationId) return body.parentCallId ?? undefined;
    }
    return undefined;
  }

  callStarted(turnId: string, callId: string, tool: string, at: number): void {
    if (this.live(turnId)) this.open.set(`${turnId}\u0000${callId}`, { turnId, callId, tool, startedAt: at });
  }

  callEnded(turnId: string, callId: string): void {
    if (this.ready()) this.open.delete(`${turnId}\u0000${callId}`);
  }

  openCalls(): Array<{ turnId: string; callId: string; tool: string; startedAt: number }> {
    if (!this.ready()) return [];
    return this.open
      .values()
      .sort((a, b) => a.startedAt - b.startedAt)
      .map((c) => ({ ...c }));
  }

  runningTurns(): string[] {
    if (!this.ready()) return [];
    return this.states
      .entries()
      .filter(([, text]) => (JSON.parse(text) as ChatState).status === "running")
      .map(([turnId]) => turnId);
  }

  markUntrusted(turnId: string, runId: string): void {
    if (this.live(turnId) && !this.untrusted.has(runId)) this.untrusted.set(runId, turnId);
  }

  isUntrusted(runId: string): boolean {
    return this.ready() && this.untrusted.has(runId);
  }

  deleteTurn(turnId: string): void {
    for (const [key, c] of this.open.entries()) if (c.turnId === turnId) this.open.delete(key);
    for (const [runId, t] of this.untrusted.entries()) if (t === turnId) this.untrusted.delete(runId);
    this.states.delete(turnId);
    for (const [seq, r] of this.messageRows.entries()) if (r.turnId === turnId) this.messageRows.delete(seq);
    for (const r of this.turnEvents(turnId)) this.eventRows.delete(r.seq);
    this.dropped.delete(turnId);
  }
}

/** Nested calls and policy decisions make room first (TranscriptStore.makeRoom). */
const rank = (r: EventRow): number => (r.kind === "nested" || r.kind === "policy" ? 0 : 1);

// --- Tool Search's client calls ------------------------------------------------------------------

/** Client calls a Tool Search `tool_call` handed out, until their result arrives (ToolCallClients). */
export class InMemoryToolCallClients implements ToolCallClientsPort {
  readonly rows: Table<string, ToolCallClient & { bytes: number }>;

  constructor(
    db: MemoryDb,
    private readonly ready: () => boolean,
    private readonly turnExists: (turnId: string) => boolean,
    private readonly quota: InMemoryQuota,
  ) {
    this.rows = db.table();
  }

  count(turnId: string): number {
    return this.ready() ? this.rows.values().filter((r) => r.turnId === turnId).length : 0;
  }

  add(call: ToolCallClient): boolean {
    if (!this.ready() || !this.turnExists(call.turnId)) return false;
    const input = JSON.stringify(call.input ?? {});
    const bytes = byteLength(input) + call.tool.length + call.callId.length + call.parentCallId.length;
    this.quota.grow(
      call.turnId,
      bytes,
      () => this.rows.set(`${call.turnId}\u0000${call.callId}`, { ...call, input: JSON.parse(input) as unknown, bytes }),
      "a client call handed out by tool_call",
    );
    return true;
  }

  get(turnId: string, callId: string): ToolCallClient | undefined {
    if (!this.ready()) return undefined;
    const row = this.rows.get(`${turnId}\u0000${callId}`);
    if (!row) return undefined;
    const { bytes: _bytes, ...call } = row;
    return structuredClone(call);
  }

  settle(turnId: string, callId: string): void {
    const key = `${turnId}\u0000${callId}`;
    const row = this.rows.get(key);
    if (row) this.quota.grow(turnId, -row.bytes, () => this.rows.delete(key));
  }

  deleteTurn(turnId: string): void {
    for (const [key, r] of this.rows.entries()) if (r.turnId === turnId) this.rows.delete(key);
  }
}

// --- Approvals -----------------------------------------------------------------------------------

export type ApprovalStatus = "pending" | "allowed" | "denied" | "timed_out" | "cancelled";

/** One approval request as the port recorded it. */
export type ApprovalRow = {
  approvalId: string;
  tenantId: string;
  turnId: string;
  tool: string;
  input: unknown;
  inputPreview: string;
  callId?: string;
  parentCallId?: string;
  requestedAt: number;
  status: ApprovalStatus;
};

/** Decides a request as it is made; undefined leaves it pending for `decide` (as an operator would). */
export type ApprovalRule = (request: ApprovalRow) => ApprovalAnswer | undefined;

const STATUS_OF: Record<ApprovalAnswer["decision"], ApprovalStatus> = {
  allow: "allowed",
  deny: "denied",
  timeout: "timed_out",
  cancelled: "cancelled",
};

/**
 * Operator approvals (ApprovalBroker's behaviour, without previews' size ladder): a request is
 * recorded; `rule` (set by the test) may decide it at once, otherwise it waits for `decide`, its
 * timeout, or its call's abort (both fail closed). A decision is consumed once: a second is a
 * conflict. `asked` lists every request ever made, in order, for assertions.
 */
export class InMemoryApprovals implements ApprovalsPort {
  rule: ApprovalRule | undefined;
  readonly asked: ApprovalRow[] = [];
  readonly rows: Table<string, ApprovalRow>;
  private readonly waiters = new Map<string, (answer: ApprovalAnswer) => void>();
  private readonly watchers = new Set<() => void>();

  constructor(
    db: MemoryDb,
    private readonly ready: () => boolean,
    private readonly now: () => number,
  ) {
    this.rows = db.table();
  }

  requester(
    scope: { tenantId: string; turnId: string; parentCallId?: string },
    redaction: Redaction,
    turnExists: () => boolean = () => true,
  ): ApprovalRequester {
    return {
      request: async ({ tool, input, callId, signal, timeoutMs }) => {
        if (signal.aborted || !this.ready() || !turnExists()) return { decision: "cancelled", reason: "the turn is gone" };
        const row: ApprovalRow = {
          approvalId: `appr_${crypto.randomUUID()}`,
          tenantId: scope.tenantId,
          turnId: scope.turnId,
          tool,
          input,
          inputPreview: redactedPreview(input, NESTED_PREVIEW_BYTES, redaction),
          ...(callId !== undefined ? { callId } : {}),
          ...(scope.parentCallId !== undefined ? { parentCallId: scope.parentCallId } : {}),
          requestedAt: this.now(),
          status: "pending",
        };
        this.asked.push(row);
        const ruled = this.rule?.(row);
        if (ruled) {
          this.rows.set(row.approvalId, { ...row, status: STATUS_OF[ruled.decision] });
          return ruled;
        }
        this.rows.set(row.approvalId, row);
        return new Promise<ApprovalAnswer>((resolve) => {
          const finish = (answer: ApprovalAnswer, status?: ApprovalStatus) => {
            if (!this.waiters.has(row.approvalId)) return;
            this.waiters.delete(row.approvalId);
            clearTimeout(timer);
            signal.removeEventListener("abort", onAbort);
            if (status) this.close(row.approvalId, status);
            resolve(answer);
          };
          const onAbort = () => finish({ decision: "cancelled", reason: "the call was cancelled (turn deleted or caller gone)" }, "cancelled");
          const timer = setTimeout(() => finish({ decision: "timeout" }, "timed_out"), timeoutMs);
          this.waiters.set(row.approvalId, (answer) => finish(answer));
          signal.addEventListener("abort", onAbort, { once: true });
          for (const w of this.watchers) w();
        });
      },
    };
  }

  list(tenantId: string): PendingApproval[] {
    if (!this.ready()) return [];
    return this.rows
      .values()
      .filter((r) => r.tenantId === tenantId && r.status === "pending")
      .sort((a, b) => a.requestedAt - b.requestedAt || a.approvalId.localeCompare(b.approvalId))
      .map((r) => ({ approvalId: r.approvalId, turnId: r.turnId, tool: r.tool, inputPreview: r.inputPreview, requestedAt: r.requestedAt }));
  }

  decide(
    tenantId: string,
    approvalId: string,
    d: ApprovalDecisionInput,
  ): { ok: true } | { ok: false; reason: "not_found" | "conflict"; message: string } {
    const row = this.ready() ? this.rows.get(approvalId) : undefined;
    if (!row || row.tenantId !== tenantId) return { ok: false, reason: "not_found", message: "unknown approval" };
    const waiter = this.waiters.get(approvalId);
    if (row.status !== "pending" || !waiter)
      return { ok: false, reason: "conflict", message: `approval ${approvalId} is no longer pending (${row.status}); a decision is consumed once` };
    this.close(approvalId, d.decision === "allow" ? "allowed" : "denied");
    waiter(d.decision === "allow" ? { decision: "allow" } : { decision: "deny", ...(d.reason ? { reason: d.reason } : {}) });
    return { ok: true };
  }

  deleteTurn(turnId: string): void {
    for (const [id, r] of this.rows.entries()) if (r.turnId === turnId) this.rows.delete(id);
  }

  /** Resolves once `n` requests are pending (a call reached its approval); rejects after `timeoutMs`. */
  untilPending(n = 1, timeoutMs = 10_000): Promise<ApprovalRow[]> {
    const pending = () => this.rows.values().filter((r) => r.status === "pending" && this.waiters.has(r.approvalId));
    return new Promise((resolve, reject) => {
      const check = () => {
        const now = pending();
        if (now.length < n) return;
        cleanup();
        resolve(now);
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`${pending().length} approvals pending, expected ${n}`));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        this.watchers.delete(check);
      };
      this.watchers.add(check);
      check();
    });
  }

  private close(approvalId: string, status: ApprovalStatus): void {
    const row = this.rows.get(approvalId);
    if (row) this.rows.set(approvalId, { ...row, status });
  }
}

// --- Expiry, session storage, tool data ----------------------------------------------------------

/** How stale recorded activity may get before it is written again (SessionExpiry's slack). */
export function activitySlackMs(idleSeconds: number): number {
  return Math.min(60_000, Math.floor((idleSeconds * 1000) / 10));
}

/**
 * Idle expiry (SessionExpiry's rules): a turn is due `turnIdleSeconds` (plus slack) after its last
 * recorded activity or when its last parked run expires, whichever is later; the session likewise
 * after `sessionIdleSeconds`. Activity is written at most once per slack interval.
 */
export class InMemoryExpiry implements ExpiryPort {
  private readonly meta: Table<"lastActive", number>;

  constructor(
    db: MemoryDb,
    private readonly turns: InMemoryTurnStore,
    private readonly runs: InMemoryRunStore,
    private readonly now: () => number,
    private readonly limits: () => SessionLimits,
  ) {
    this.meta = db.table();
  }

  /** The session's storage was created: its activity starts now. */
  init(): void {
    if (!this.meta.has("lastActive")) this.meta.set("lastActive", this.now());
  }

  touch(turnId?: string): boolean {
    const now = this.now();
    const limits = this.limits();
    let wrote = false;
    if (turnId !== undefined) {
      const last = this.turns.lastActive(turnId);
      if (last !== undefined && now - last >= activitySlackMs(limits.turnIdleSeconds)) {
        this.turns.setLastActive(turnId, now);
        wrote = true;
      }
    }
    if (now - this.sessionLastActive() >= activitySlackMs(limits.sessionIdleSeconds)) {
      this.meta.set("lastActive", now);
      wrote = true;
    }
    return wrote;
  }

  dueTurns(): string[] {
    const now = this.now();
    return this.turnDeadlines()
      .filter(([, deadline]) => deadline <= now)
      .map(([turnId]) => turnId);
  }

  sessionDue(): boolean {
    return this.sessionDeadline() <= this.now();
  }

  nextDeadline(): number {
    const turns = this.turnDeadlines().map(([, d]) => d);
    return Math.min(this.sessionDeadline(), ...turns);
  }

  private turnDeadlines(): Array<[string, number]> {
    const idle = this.limits().turnIdleSeconds;
    const idleMs = idle * 1000 + activitySlackMs(idle);
    return this.turns.rows.entries().map(([turnId, row]) => {
      const runs = this.runs.runsOfTurn(turnId).map((r) => r.expiresAt);
      return [turnId, Math.max(row.lastActiveAt + idleMs, ...runs, 0)];
    });
  }

  private sessionDeadline(): number {
    const idle = this.limits().sessionIdleSeconds;
    const runs = this.runs.runs.values().map((r) => r.state.expiresAt);
    return Math.max(this.sessionLastActive() + idle * 1000 + activitySlackMs(idle), ...runs, 0);
  }

  private sessionLastActive(): number {
    return this.meta.get("lastActive") ?? 0;
  }
}

/** Whether the session stored anything; `wipe` deletes all of it (the object's `deleteAll` and its alarm). */
export class InMemorySessionStorage implements SessionStoragePort {
  private readonly meta: Table<"ready", true>;
  /** Kept across a wipe for this instance's life (SessionStorage): a run id of the deleted session reads as expired. */
  private tag: string | undefined;
  wipes = 0;

  constructor(
    private readonly db: MemoryDb,
    private readonly onReady: () => void,
    private readonly onWipe: () => void,
  ) {
    this.meta = db.table();
  }

  get ready(): boolean {
    return this.meta.has("ready");
  }

  ensure(): void {
    if (this.ready) return;
    this.meta.set("ready", true);
    this.onReady();
  }

  runTag(): string {
    return (this.tag ??= newSessionTag());
  }

  async wipe(): Promise<void> {
    this.wipes++;
    this.db.wipe();
    this.onWipe();
  }
}

/** Tool data (`ctx.store`): session-scoped, structured-cloned like the object's KV, charged to the quota per key. */
export class InMemoryKv implements SessionStore {
  readonly values: Table<string, unknown>;

  constructor(
    db: MemoryDb,
    private readonly quota: InMemoryQuota,
    /** Its area of the session's tool storage (the quota counts keys with it, as the SQLite adapter does). */
    private readonly area = "tool:",
  ) {
    this.values = db.table();
  }

  async get(key: string): Promise<unknown> {
    return structuredClone(this.values.get(key));
  }
  async put(key: string, value: unknown): Promise<void> {
    const bytes = byteLength(key) + byteLength(JSON.stringify(value) ?? "");
    this.quota.charge(this.area + key, bytes, () => this.values.set(key, structuredClone(value)));
  }
  async delete(key: string): Promise<boolean> {
    return this.quota.release(this.area + key, () => this.values.delete(key));
  }
  async list(prefix: string, limit: number): Promise<Array<{ key: string; value: unknown }>> {
    return this.values
      .keys()
      .filter((k) => k.startsWith(prefix))
      .sort()
      .slice(0, limit)
      .map((key) => ({ key, value: structuredClone(this.values.get(key)) }));
  }
}

/** The object's alarm: the earliest asked-for time wins; firing consumes it; a wipe deletes it. */
export class InMemoryAlarm {
  at: number | undefined;
  readonly asked: number[] = [];
  /** What firing runs (the object's `alarm()`: the turn service's). */
  handler: (() => Promise<void>) | undefined;
  arm(at: number): void {
    this.asked.push(at);
    if (this.at === undefined || at < this.at) this.at = at;
  }
  clear(): void {
    this.at = undefined;
  }
  /** The alarm goes off now (whether or not it was due): it is consumed, then the handler runs and may re-arm it. */
  async fire(): Promise<void> {
    this.at = undefined;
    await this.handler?.();
  }
}

// --- Assembly ------------------------------------------------------------------------------------

/** The VM pool tests share (one per isolate, as the gateway has): 64 MiB for VMs. */
let sharedPool: VmPool | undefined;
export function testVmPool(): VmPool {
  return (sharedPool ??= new VmPool(new MemoryLedger({ budgetBytes: 64 << 20 })));
}

export type InMemorySessionOptions = {
  /** The gateway config (CODEMODE_CONFIG) as a value; default: code mode on, nothing else. */
  config?: unknown;
  /** Other environment variables (CODEMODE_DEBUG, secrets). */
  env?: Record<string, unknown>;
  /** `gateway.sessions` (idle times); default SESSION_LIMIT_DEFAULTS. The quota's bounds are `ports.quota`'s own. */
  limits?: Partial<SessionLimits>;
  clock?: ManualClock;
  vms?: CellVms;
};

/** The in-memory adapters behind one turn service, and what the test may look at or change. */
export type InMemorySessionPorts = {
  db: MemoryDb;
  clock: ManualClock;
  alarm: InMemoryAlarm;
  vms: CellVms;
  turns: InMemoryTurnStore;
  transcript: InMemoryTranscript;
  toolCallClients: InMemoryToolCallClients;
  approvals: InMemoryApprovals;
  snapshots: InMemoryRunStore;
  runs: RunLifecycle;
  quota: InMemoryQuota;
  expiry: InMemoryExpiry;
  sessionStorage: InMemorySessionStorage;
  kv: InMemoryKv;
  /** What the service was built with: these adapters, with the overrides in place of theirs. */
  wired: SessionPorts;
};

/** Every port of `SessionPorts` over one `MemoryDb`, wired as session-object.ts wires the SQLite ones. */
export function inMemorySessionPorts(options: InMemorySessionOptions = {}, overrides: Partial<SessionPorts> = {}): InMemorySessionPorts {
  const db = new MemoryDb();
  const clock = options.clock ?? manualClock(1_700_000_000_000);
  const alarm = new InMemoryAlarm();
  const vms: CellVms = options.vms ?? { pool: testVmPool(), owner: `inmem-${crypto.randomUUID()}` };
  const limits = (): SessionLimits => ({ ...SESSION_LIMIT_DEFAULTS, ...options.limits });
  const env = { ...(options.config !== undefined ? { CODEMODE_CONFIG: JSON.stringify(options.config) } : {}), ...options.env };
  const ready = () => sessionStorage.ready;
  const snapshots: InMemoryRunStore = new InMemoryRunStore(db, (bytes, write, what) => quota.grow(null, bytes, write, what));
  const quota: InMemoryQuota = new InMemoryQuota(db, ready, () => snapshots.parkedBytes());
  const turns = new InMemoryTurnStore(db, ready, quota);
  const turnExists = (turnId: string) => turns.rows.has(turnId);
  const expiry = new InMemoryExpiry(db, turns, snapshots, () => clock.now(), limits);
  const sessionStorage: InMemorySessionStorage = new InMemorySessionStorage(
    db,
    () => expiry.init(),
    () => alarm.clear(),
  );
  const transcript = new InMemoryTranscript(db, ready, turnExists, quota);
  const toolCallClients = new InMemoryToolCallClients(db, ready, turnExists, quota);
  const approvals = new InMemoryApprovals(db, ready, () => clock.now());
  const kv = new InMemoryKv(db, quota);
  const taintMarks = new InMemoryKv(db, quota, "taint:");
  const transaction = <T>(fn: () => T): T => db.transaction(fn);
  const runs = new RunLifecycle({
    store: snapshots,
    codec: new SnapshotCodec(null),
    sessionTag: () => sessionStorage.runTag(),
    transaction,
    now: () => clock.now(),
    scheduleExpiry: (at) => alarm.arm(at),
  });
  const wired: SessionPorts = {
    turns,
    transcript,
    toolCallClients,
    approvals,
    snapshots,
    runs,
    quota,
    expiry,
    sessionStorage,
    kv,
    taintMarks,
    transaction,
    armAlarm: (at) => alarm.arm(at),
    alarmsWritten: async () => undefined,
    env: () => env,
    // Follows an overridden env, as the session object's reads its own.
    config: () => loadGatewayConfig(wired.env()),
    clock: () => clock,
    vms: () => vms,
    limits,
    providerFetch: () => undefined,
    // Background work of tools runs on; a failure is dropped, as the platform's ctx.waitUntil drops it.
    waitUntil: (promise) => void promise.catch(() => undefined),
    ...overrides,
  };
  return { db, clock, alarm, vms, turns, transcript, toolCallClients, approvals, snapshots, runs, quota, expiry, sessionStorage, kv, wired };
}

/** A turn service over in-memory ports; `ports` replaces any of them (e.g. a quota that refuses). */
export function inMemoryTurnService(
  plugins: readonly ToolPlugin[],
  overrides: InMemorySessionOptions & { ports?: Partial<SessionPorts> } = {},
): { service: TurnService; ports: InMemorySessionPorts } {
  const ports = inMemorySessionPorts(overrides, overrides.ports);
  const service = new TurnService(plugins, ports.wired);
  ports.alarm.handler = () => service.alarm();
  return { service, ports };
}
