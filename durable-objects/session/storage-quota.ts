import type { SessionLimits } from "../../src/config";
import { FREE_SPACE, QuotaExceeded, quotaExceeded, Reservations, type Reservation } from "../../src/quota";
import { RESULT_ROW_OVERHEAD } from "../../src/snapshot-store";
import type { Sql } from "../sql";
import type { Promised, QuotaPort } from "../../src/session";

export type QuotaDeps = {
  sql: Sql;
  /** Run storage writes atomically (the session object's `transactionSync`). */
  transaction<T>(fn: () => T): T;
  /** A write failed inside a step (whose transaction goes on): the stores' running totals sum again from SQL. */
  forgetTotals(): void;
  limits(): SessionLimits;
  /** False while the session has no tables (nothing stored yet, or wiped). */
  ready(): boolean;
};

export type Admission = { ok: true } | { ok: false; message: string };

/** A write that was promised room: up to `take` of its bytes come out of `reservation`. */
export type { Promised };

/**
 * The session's one guarded write path. Everything a session stores counts against
 * `maxStoredBytes`, and every write that grows it goes through `grow` (or, for tool data, `charge`):
 * checked against the bound before it is made, charged in the same storage transaction, refused
 * with a `QuotaExceeded` (code `quota_exceeded`) that names the limit and how to free space.
 *
 * What is counted: turn rows (`turns.stored_bytes`: spec, counters at their largest, and what the
 * turn's stores charge to it — transcript, trajectory, /chat state, approvals, delivered client
 * results), tool data (keys and values written through `sessionKv`, tracked per key in `tool_data`
 * with their total in `session_meta`), and parked runs (snapshot bytes, run state and stored
 * results, summed from their own tables: at most 64 rows). The session's usage is summed from SQL
 * once and then kept as a running total, adjusted by every write charged here in the same step:
 * checking a write costs no statement. What changes the sums elsewhere says so (`turnAdded`,
 * `forget`: a turn deleted, a parked run written, a transaction rolled back), and the next check
 * sums again.
 *
 * Bytes promised to writes that keep a record consistent (see src/quota/reservations.ts) are not
 * room for anyone else.
 */
export class StorageQuota implements QuotaPort {
  readonly reservations = new Reservations();

  /** The session's usage as last summed and adjusted since (undefined: sum it again). */
  private total: { turns: number; turnBytes: number; toolBytes: number; parkedBytes: number } | undefined;

  /** Inside `step`: what its writes charged each turn row so far, written to the rows once at its end. */
  private pending: Map<string, number> | undefined;

  constructor(private readonly deps: QuotaDeps) {}

  /** Called once the schema exists: account tool data written before sizes were tracked. */
  init(storage: DurableObjectStorage): void {
    this.forget();
    const { sql } = this.deps;
    if (sql.one("SELECT 1 AS x FROM session_meta WHERE key = 'tool_bytes'")) return;
    let total = 0;
    for (const [key, value] of storage.kv.list({ prefix: TOOL_PREFIX })) {
      const bytes = estimateStoredBytes(key, value);
      sql.run("INSERT OR REPLACE INTO tool_data (key, bytes) VALUES (?, ?)", key, bytes);
      total += bytes;
    }
    sql.run("INSERT INTO session_meta (key, value) VALUES ('tool_bytes', ?)", String(total));
  }

  /** What the session stores now (turn rows, tool data, parked runs), and how many turns it holds. */
  usage(): { turns: number; bytes: number } {
    if (!this.deps.ready()) return { turns: 0, bytes: 0 };
    const t = this.summed();
    return { turns: t.turns, bytes: t.turnBytes + t.toolBytes + t.parkedBytes };
  }

  /**
   * Something changed the session's stored sizes without going through the quota (a turn deleted,
   * a parked run written or removed) or a transaction rolled writes back: sum again at the next check.
   */
  forget(): void {
    this.total = undefined;
  }

  /** A turn row of `bytes` was inserted (its opener was admitted by `admitTurn`). */
  turnAdded(bytes: number): void {
    if (this.total) {
      this.total.turns++;
      this.total.turnBytes += bytes;
    }
  }

  private summed(): NonNullable<StorageQuota["total"]> {
    if (this.total) return this.total;
    const t = this.deps.sql.one<{ n: number; b: number | null }>("SELECT COUNT(*) AS n, SUM(stored_bytes) AS b FROM turns");
    // Charges of the step in progress are not in the rows yet.
    let pending = 0;
    for (const bytes of this.pending?.values() ?? []) pending += bytes;
    this.total = { turns: t?.n ?? 0, turnBytes: (t?.b ?? 0) + pending, toolBytes: this.toolBytes(), parkedBytes: this.parkedBytes() };
    return this.total;
  }

  /**
   * The writes of one step (a model reply with its state and message, a round's last result with
   * the state) in one transaction: each is checked and charged as on its own, and what they charge
   * a turn's row is written to it once, at the end, in the same transaction. Nested: part of the
   * enclosing step. A throw rolls back the whole step.
   */
  step<T>(fn: () => T): T {
    if (this.pending) return fn();
    return this.deps.transaction(() => {
      const pending = new Map<string, number>();
      this.pending = pending;
      try {
        const out = fn();
        this.pending = undefined;
        for (const [turnId, bytes] of pending) if (bytes !== 0) this.chargeRow(turnId, bytes, true);
        return out;
      } finally {
        this.pending = undefined;
      }
    });
  }

  /** By how many bytes a write of `bytes` would exceed the bound now (≤ 0: it fits). */
  shortfall(bytes: number, promised?: Promised): number {
    const take = promised ? Math.min(promised.take, promised.reservation.remaining) : 0;
    return this.usage().bytes + this.reservations.total - take + bytes - this.deps.limits().maxStoredBytes;
  }

  /** Hold `bytes` for writes that must still happen (undefined: the session has not that much room). */
  reserve(bytes: number): Reservation | undefined {
    return this.reservations.reserve(bytes, this.deps.limits().maxStoredBytes - this.usage().bytes);
  }

  /** May a turn of `bytes` (and `extra` bytes its opener stores with it) be opened? */
  admitTurn(bytes: number, extra = 0): Admission {
    const limits = this.deps.limits();
    const used = this.usage();
    if (used.turns >= limits.maxTurnsPerSession) {
      return {
        ok: false,
        message: `this session holds ${used.turns} turns, the limit (gateway.sessions.maxTurnsPerSession = ${limits.maxTurnsPerSession}); ${FREE_SPACE}`,
      };
    }
    const after = used.bytes + this.reservations.total + bytes + extra;
    if (after > limits.maxStoredBytes) {
      return {
        ok: false,
        message: `this turn (${bytes + extra} bytes) would bring the session's storage to ${after} bytes, over gateway.sessions.maxStoredBytes (${limits.maxStoredBytes}); ${FREE_SPACE}`,
      };
    }
    return { ok: true };
  }

  /**
   * The guarded write: `write` runs only if `bytes` more fit under the bound (after what is
   * reserved, minus what this write was promised), and `bytes` are charged to `turnId`'s row in
   * the same transaction. `turnId` null: the bytes are counted where they are stored (parked runs).
   * Throws `QuotaExceeded` before anything is written. A write that does not grow (bytes ≤ 0) is
   * never refused: that is how space is given back.
   */
  grow<T>(turnId: string | null, bytes: number, write: () => T, what = "this write", promised?: Promised): T {
    return this.atomic(() => {
      if (bytes > 0) {
        const over = this.shortfall(bytes, promised);
        if (over > 0) {
          const max = this.deps.limits().maxStoredBytes;
          throw quotaExceeded(what, bytes, max + over, max);
        }
      }
      const out = this.charged(turnId, bytes, write);
      if (promised) promised.reservation.take(promised.take);
      return out;
    });
  }

  /**
   * `grow` for a write its caller made room for in the same synchronous step (`shortfall` ≤ 0 once
   * that room was made; nothing else can write in between): charged, not checked a second time.
   */
  growWithinRoom<T>(turnId: string, bytes: number, write: () => T): T {
    return this.atomic(() => this.charged(turnId, bytes, write));
  }

  /**
   * A guarded write's own transaction, or, inside a `step`, the step's: a write is one statement
   * (SQLite undoes a failed statement whole), and the checks and charges around it change nothing
   * before it succeeds, so a savepoint of its own would only cost two statements more. A write of
   * several statements that must stand or fall together inside a step takes `allOrNothing`.
   */
  private atomic<T>(fn: () => T): T {
    if (!this.pending) return this.deps.transaction(fn);
    try {
      return fn();
    } catch (error) {
      // As a rolled-back savepoint would: what a failed write may have moved is summed again.
      this.deps.forgetTotals();
      throw error;
    }
  }

  /** Statements that stand or fall together, also inside a step (there, a savepoint of their own). */
  allOrNothing<T>(fn: () => T): T {
    return this.pending ? this.deps.transaction(fn) : fn();
  }

  private charged<T>(turnId: string | null, bytes: number, write: () => T): T {
    const out = write();
    // Parked runs are summed from their own tables: their writes are known here only by size.
    if (turnId === null) this.forget();
    else if (bytes !== 0) {
      if (this.pending) {
        // Written to the row at the step's end; the running total moves now (later checks of the step see it).
        this.pending.set(turnId, (this.pending.get(turnId) ?? 0) + bytes);
        if (this.total) this.total.turnBytes += bytes;
      } else this.chargeRow(turnId, bytes, false);
    }
    return out;
  }

  /** Add `bytes` to the turn's row (`counted`: the running total already moved by them). */
  private chargeRow(turnId: string, bytes: number, counted: boolean): void {
    const row = this.deps.sql.one<{ b: number }>(
      "UPDATE turns SET stored_bytes = max(0, stored_bytes + ?) WHERE turn_id = ? RETURNING stored_bytes AS b",
      bytes,
      turnId,
    );
    // The running total follows the row exactly, unless the row was clamped at 0 or is gone (then sum again).
    if (!row || (bytes < 0 && row.b <= 0)) this.forget();
    else if (this.total && !counted) this.total.turnBytes += bytes;
  }

  /**
   * Write a tool value of `bytes` under `key` (`write` does the KV put) and account for it, in one
   * transaction. Throws `QuotaExceeded` when the write would grow the session over its bound;
   * a write that does not grow the key (replace with smaller, or equal) is always allowed.
   */
  charge(key: string, bytes: number, write: () => void): void {
    if (!this.deps.ready()) throw new QuotaExceeded("this session was deleted; its storage is gone");
    const { sql } = this.deps;
    this.deps.transaction(() => {
      const old = sql.one<{ bytes: number }>("SELECT bytes FROM tool_data WHERE key = ?", key)?.bytes ?? 0;
      if (bytes > old) {
        const over = this.shortfall(bytes - old);
        if (over > 0) {
          const max = this.deps.limits().maxStoredBytes;
          throw quotaExceeded("this write", bytes, max + over, max, "delete tool data you no longer need, or ");
        }
      }
      write();
      sql.run("INSERT INTO tool_data (key, bytes) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET bytes = excluded.bytes", key, bytes);
      this.setToolBytes(this.summed().toolBytes - old + bytes);
    });
  }

  /** Delete a tool value (`remove` does the KV delete) and release its bytes. */
  release(key: string, remove: () => boolean): boolean {
    if (!this.deps.ready()) return false;
    const { sql } = this.deps;
    return this.deps.transaction(() => {
      const old = sql.one<{ bytes: number }>("SELECT bytes FROM tool_data WHERE key = ?", key)?.bytes;
      const removed = remove();
      if (old !== undefined) {
        sql.run("DELETE FROM tool_data WHERE key = ?", key);
        this.setToolBytes(this.summed().toolBytes - old);
      }
      return removed;
    });
  }

  /** Parked runs: snapshot bytes, run state and results stored for them (see RESULT_ROW_OVERHEAD). */
  private parkedBytes(): number {
    const { sql } = this.deps;
    const runs = sql.one<{ b: number | null }>("SELECT SUM(stored_bytes + length(CAST(state AS BLOB))) AS b FROM runs")?.b ?? 0;
    const results =
      sql.one<{ b: number | null }>(`SELECT SUM(${RESULT_ROW_OVERHEAD} + coalesce(length(CAST(text AS BLOB)), 0)) AS b FROM run_results`)?.b ?? 0;
    return runs + results;
  }

  private toolBytes(): number {
    return Number(this.deps.sql.one<{ value: string }>("SELECT value FROM session_meta WHERE key = 'tool_bytes'")?.value ?? 0);
  }

  private setToolBytes(total: number): void {
    const value = Math.max(0, total);
    this.deps.sql.run(
      "INSERT INTO session_meta (key, value) VALUES ('tool_bytes', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      String(value),
    );
    if (this.total) this.total.toolBytes = value;
  }
}

/** Tool data lives in the object's KV storage under this prefix (see session-kv.ts). */
export const TOOL_PREFIX = "tool:";
/** Marks of tool data written by untrusted calls (src/tools/taint-store.ts), beside it, counted the same way. */
export const TAINT_PREFIX = "taint:";

const utf8 = new TextEncoder();

/**
 * The bytes a tool value is charged: its key plus an estimate of the value's stored size — UTF-8
 * length of strings, byte length of binary data, 8 per number or date, 1 per boolean or null,
 * plus keys of objects and entries of maps and sets. Shared references are counted once.
 */
export function estimateStoredBytes(key: string, value: unknown): number {
  let total = utf8.encode(key).length;
  const seen = new Set<object>();
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === "string") total += utf8.encode(v).length;
    else if (typeof v === "number" || typeof v === "bigint") total += 8;
    else if (typeof v === "boolean" || v === null || v === undefined) total += 1;
    else if (typeof v === "object") {
      if (seen.has(v)) continue;
      seen.add(v);
      if (v instanceof ArrayBuffer) total += v.byteLength;
      else if (ArrayBuffer.isView(v)) total += v.byteLength;
      else if (v instanceof Date) total += 8;
      else if (v instanceof Map) for (const [k, x] of v) stack.push(k, x);
      else if (v instanceof Set) for (const x of v) stack.push(x);
      else if (Array.isArray(v)) {
        total += 1;
        for (const x of v) stack.push(x);
      } else {
        for (const [k, x] of Object.entries(v)) {
          total += utf8.encode(k).length;
          stack.push(x);
        }
      }
    } else total += 1;
  }
  return total;
}
