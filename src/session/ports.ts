import type { ChatRecords, Promised } from "../agent";
import type { ConfigResult, SessionLimits } from "../config";
import type { CellVms, Clock } from "../runtime";
import type { RunLifecycle, RunStore } from "../runs";
import type { SessionStore } from "../tools";
import type { ApprovalRequester } from "../policy";
import type { Reservation } from "../quota";
import type { TurnCounters, TurnSpec } from "../turns";
import type { PendingApproval } from "./session-rpc";

/**
 * What the turn service needs from the session's storage. The session Durable Object implements
 * these over its SQLite database (durable-objects/session/*-store.ts); the service never sees
 * SQL, and tests drive it with in-memory adapters. Each port is named after what it stores.
 */

export type { Promised };

export type StoredTurn = { spec: TurnSpec; counters: TurnCounters };
/**
 * A turn as it is stored. `bytes`: its row now (spec + counters, bounded by MAX_TURN_ROW_BYTES);
 * `charged`: what it counts against the session's `maxStoredBytes` — the spec plus the counters at
 * their largest (every count at 2^53−1, every catalog tool the turn can record in `called`), so a
 * counter update never grows the session past what was admitted and needs no check of its own.
 */
export type EncodedTurn = {
  spec: string;
  counters: string;
  bytes: number;
  charged: number;
  /**
   * `spec` in two parts: the spec without its catalog, and the catalog's JSON. With `catalogDigest`
   * (its SHA-256, catalogDigest) the store keeps the catalog once per session, shared by the turns
   * that have it; without, `spec` whole in the turn's own row.
   */
  head: string;
  catalog: string;
  catalogDigest?: string;
};

/** Turns: their spec (catalog, surface), counters, and the client results already delivered. */
export interface TurnStorePort {
  insert(spec: TurnSpec, counters: TurnCounters, row?: EncodedTurn): void;
  get(tenantId: string, turnId: string): StoredTurn | undefined;
  saveCounters(turnId: string, counters: TurnCounters): void;
  /**
   * `get`, and keep that parsed form (so its counters object) while a call runs on it: every call of
   * the turn meanwhile gets the same object, so their counter updates add up. `release` ends the hold.
   */
  hold(tenantId: string, turnId: string): { turn: StoredTurn; release: () => void } | undefined;
  /** Newest first. */
  ids(): string[];
  forget(): void;
  recordDelivered(turnId: string, callId: string): void;
  wasDelivered(turnId: string, callId: string): boolean;
  delete(turnId: string): boolean;
}

/** A turn's /chat state, transcript (messages), trajectory (events) and open outer calls. */
export interface TranscriptPort extends Omit<ChatRecords, "reserve" | "step"> {
  /** Writes of one step in one transaction (absent: each write is its own). */
  step?<T>(fn: () => T): T;
  /** A turn was just stored with nothing else yet (its sizes need not be read back). */
  opened?(turnId: string): void;
  droppedEvents(turnId: string): number;
  parentOf(turnId: string, invocationId: string): string | undefined;
  callStarted(turnId: string, callId: string, tool: string, at: number): void;
  openCalls(): Array<{ turnId: string; callId: string; tool: string; startedAt: number }>;
  runningTurns(): string[];
  markUntrusted(turnId: string, runId: string): void;
  isUntrusted(runId: string): boolean;
  deleteTurn(turnId: string): void;
}

/** A client tool call Tool Search's `tool_call` handed to the caller, waiting for its result. */
export type ToolCallClient = {
  turnId: string;
  /** The gateway id the caller answers (`ccall_…`). */
  callId: string;
  /** The outer `tool_call` it was made under. */
  parentCallId: string;
  /** The client tool's own name. */
  tool: string;
  /** The input policy let through (what the caller was given). */
  input: unknown;
  decision: string;
  startedAt: number;
};

export interface ToolCallClientsPort {
  count(turnId: string): number;
  add(call: ToolCallClient): boolean;
  get(turnId: string, callId: string): ToolCallClient | undefined;
  settle(turnId: string, callId: string): void;
  deleteTurn(turnId: string): void;
}

export type ApprovalDecisionInput = { decision: "allow" | "deny"; reason?: string };

/** An approval whose waiting call died with an earlier incarnation of the object. */
export type LostApproval = {
  approvalId: string;
  tenantId: string;
  turnId: string;
  tool: string;
  inputPreview: string;
  /** The call it was asked for (absent: the outer call itself, e.g. exec's own approval). */
  callId?: string;
  /** The outer call it was asked under (absent in rows of older builds). */
  parentCallId?: string;
  requestedAt: number;
};

export type Redaction = { secrets: readonly string[]; patterns: readonly RegExp[] };

/** Operator approvals: asked for by calls (the requester), listed and decided over HTTP. */
export interface ApprovalsPort {
  requester(scope: { tenantId: string; turnId: string; parentCallId?: string }, redaction: Redaction, turnExists?: () => boolean): ApprovalRequester;
  list(tenantId: string): PendingApproval[];
  decide(
    tenantId: string,
    approvalId: string,
    d: ApprovalDecisionInput,
  ): { ok: true } | { ok: false; reason: "not_found" | "conflict"; message: string };
  deleteTurn(turnId: string): void;
}

export type Admission = { ok: true } | { ok: false; message: string };

/** The session's storage quota (`gateway.sessions`): admission of a new turn, room held for later writes. */
export interface QuotaPort {
  usage(): { turns: number; bytes: number };
  reserve(bytes: number): Reservation | undefined;
  admitTurn(bytes: number, extra?: number): Admission;
}

/** Idle expiry of turns and of the whole session. */
export interface ExpiryPort {
  touch(turnId?: string): boolean;
  /** A turn was stored with `at` as its last activity; `forgetTurn`: it is gone. */
  opened?(turnId: string, at: number): void;
  forgetTurn?(turnId: string): void;
  dueTurns(): string[];
  sessionDue(): boolean;
  nextDeadline(): number;
}

/** The session's storage as a whole: created by its first turn, wiped by its deletion. */
export interface SessionStoragePort {
  readonly ready: boolean;
  ensure(): void;
  wipe(): Promise<void>;
}

/**
 * What the turn service runs on: the session's stores (SQLite adapters in the Durable Object,
 * in-memory ones in tests), its transaction, its alarm, and what the object resolves per call
 * (environment, clock, VM pool, limits). Functions, not values, where a call must see the
 * current one.
 */
export type SessionPorts = {
  turns: TurnStorePort;
  transcript: TranscriptPort;
  toolCallClients: ToolCallClientsPort;
  approvals: ApprovalsPort;
  /** Parked runs (the run lifecycle's store), and the stored size of one. */
  snapshots: RunStore & { storedBytes(runId: string): number | undefined };
  runs: RunLifecycle;
  /** The session's storage quota (admission of turns, room held for later writes); the stores check their own writes. */
  quota: QuotaPort;
  expiry: ExpiryPort;
  sessionStorage: SessionStoragePort;
  /** Tool data (`ctx.store`), session-scoped and counted against the quota. */
  kv: SessionStore;
  /** Marks beside tool data written by untrusted calls (src/tools/taint-store.ts), counted like it. */
  taintMarks: SessionStore;
  /** Every write inside `fn` is durable together or not at all. */
  transaction<T>(fn: () => T): T;
  /** Ask for an alarm at `at` (the earliest asked for wins); `alarmsWritten` resolves once asked ones are stored. */
  armAlarm(at: number): void;
  alarmsWritten(): Promise<void>;
  env(): Record<string, unknown> & { CODEMODE_CONFIG?: string; CODEMODE_DEBUG?: string };
  /** The gateway configuration: the defaults, the entry's config module and `CODEMODE_CONFIG`, layered (loadGatewayConfig). */
  config(): ConfigResult;
  /** Keep a tool's background work alive past its call (the object's `ctx.waitUntil`). */
  waitUntil(promise: Promise<unknown>): void;
  clock(): Clock;
  vms(): CellVms;
  limits(): SessionLimits;
  /** The provider transport of /chat (absent: the platform's fetch; in-memory tests pass their own). */
  providerFetch(): typeof fetch | undefined;
};
