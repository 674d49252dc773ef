import type { SessionLimits } from "../../src/config";
import type { Sql } from "../sql";

export type QuotaDeps = {
  sql: Sql;
  /** Run storage writes atomically (the session object's `transactionSync`). */
  transaction<T>(fn: () => T): T;
  limits(): SessionLimits;
  /** False while the session has no tables (nothing stored yet, or wiped). */
  ready(): boolean;
};

export type Admission = { ok: true } | { ok: false; message: string };

/** A tool's write over the session's bound; the executor turns it into a guest-catchable Error. */
export class StorageQuotaError extends Error {
  override readonly name = "StorageQuotaError";
}

const FREE_SPACE = "delete a turn (DELETE /v1/sessions/:sessionId/turns/:turnId) or the whole session (DELETE /v1/sessions/:sessionId) to free space";

/**
 * Bounded per-session storage: at most `maxTurnsPerSession` turns, and at most `maxStoredBytes` of
 * turn rows (spec + counters, `turns.stored_bytes`) plus tool data (keys and values written through
 * `sessionKv`). Parked runs are not counted here: they have their own bound (64 slots of at most
 * `maxSnapshotBytes` each, and a TTL).
 *
 * Tool data sizes are tracked per key in `tool_data`, with their running total in `session_meta`
 * (`tool_bytes`), updated in the same storage transaction as the write: checking a write costs two
 * indexed reads and one `SUM` over the (at most `maxTurnsPerSession`) turn rows, not a scan.
 */
export class StorageQuota {
  constructor(private readonly deps: QuotaDeps) {}

  /** Called once the schema exists: account tool data written before sizes were tracked. */
  init(storage: DurableObjectStorage): void {
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

  /** What the session stores now (turn rows + tool data), and how many turns it holds. */
  usage(): { turns: number; bytes: number } {
    if (!this.deps.ready()) return { turns: 0, bytes: 0 };
    const t = this.deps.sql.one<{ n: number; b: number | null }>("SELECT COUNT(*) AS n, SUM(stored_bytes) AS b FROM turns");
    return { turns: t?.n ?? 0, bytes: (t?.b ?? 0) + this.toolBytes() };
  }

  /** May a turn of `bytes` be opened? */
  admitTurn(bytes: number): Admission {
    const limits = this.deps.limits();
    const used = this.usage();
    if (used.turns >= limits.maxTurnsPerSession) {
      return {
        ok: false,
        message: `this session holds ${used.turns} turns, the limit (gateway.sessions.maxTurnsPerSession = ${limits.maxTurnsPerSession}); ${FREE_SPACE}`,
      };
    }
    if (used.bytes + bytes > limits.maxStoredBytes) {
      return {
        ok: false,
        message: `this turn (${bytes} bytes) would bring the session's storage to ${used.bytes + bytes} bytes, over gateway.sessions.maxStoredBytes (${limits.maxStoredBytes}); ${FREE_SPACE}`,
      };
    }
    return { ok: true };
  }

  /**
   * Write a tool value of `bytes` under `key` (`write` does the KV put) and account for it, in one
   * transaction. Throws a `StorageQuotaError` when the write would grow the session over its bound;
   * a write that does not grow the key (replace with smaller, or equal) is always allowed.
   */
  charge(key: string, bytes: number, write: () => void): void {
    if (!this.deps.ready()) throw new StorageQuotaError("this session was deleted; its storage is gone");
    const { sql } = this.deps;
    this.deps.transaction(() => {
      const old = sql.one<{ bytes: number }>("SELECT bytes FROM tool_data WHERE key = ?", key)?.bytes ?? 0;
      if (bytes > old) {
        const max = this.deps.limits().maxStoredBytes;
        const after = this.usage().bytes - old + bytes;
        if (after > max) {
          throw new StorageQuotaError(
            `session storage is full: this write (${bytes} bytes) would bring the session to ${after} bytes, over gateway.sessions.maxStoredBytes (${max}); delete tool data you no longer need, or ${FREE_SPACE}`,
          );
        }
      }
      write();
      sql.run("INSERT INTO tool_data (key, bytes) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET bytes = excluded.bytes", key, bytes);
      this.setToolBytes(this.toolBytes() - old + bytes);
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
        this.setToolBytes(this.toolBytes() - old);
      }
      return removed;
    });
  }

  private toolBytes(): number {
    return Number(this.deps.sql.one<{ value: string }>("SELECT value FROM session_meta WHERE key = 'tool_bytes'")?.value ?? 0);
  }

  private setToolBytes(total: number): void {
    this.deps.sql.run(
      "INSERT INTO session_meta (key, value) VALUES ('tool_bytes', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      String(Math.max(0, total)),
    );
  }
}

/** Tool data lives in the object's KV storage under this prefix (see session-kv.ts). */
export const TOOL_PREFIX = "tool:";

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
