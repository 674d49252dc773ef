import type { Settlement } from "../bridge";
import { SNAPSHOT_CHUNK_BYTES } from "../limits";
import type { ParkedRunState } from "./parked-run";

/** A stored result row's own columns (run id, request id, flag), counted with its text. */
export const RESULT_ROW_OVERHEAD = 48;

/** The SQL surface the store needs (the session object's `Sql` helper). */
export interface SqlRunner {
  all<T>(query: string, ...params: SqlStorageValue[]): T[];
  one<T>(query: string, ...params: SqlStorageValue[]): T | undefined;
  run(query: string, ...params: SqlStorageValue[]): void;
}

/**
 * The session's guarded write path (its storage quota): `write` runs only if `bytes` more fit, else it
 * throws (src/quota's `QuotaExceeded`) before anything is written. Parked runs are counted where they
 * are stored, so the guard only checks. Absent: unguarded (benchmarks, unit tests).
 */
export type WriteGuard = <T>(bytes: number, write: () => T, what: string) => T;

const unguarded: WriteGuard = (_bytes, write) => write();

const utf8 = new TextEncoder();

/** Set when a resume starts; a re-park clears it. Still set at claim time = the resume died. */
export const SNAPSHOT_SCHEMA_RESUMING = ["ALTER TABLE runs ADD COLUMN resuming INTEGER NOT NULL DEFAULT 0"];

export const SNAPSHOT_SCHEMA = [
  `CREATE TABLE IF NOT EXISTS runs (
     run_id TEXT PRIMARY KEY,
     turn_id TEXT NOT NULL,
     tenant_id TEXT NOT NULL,
     state TEXT NOT NULL,
     stored_bytes INTEGER NOT NULL,
     chunks INTEGER NOT NULL,
     expires_at INTEGER NOT NULL
   )`,
  `CREATE TABLE IF NOT EXISTS run_chunks (
     run_id TEXT NOT NULL,
     seq INTEGER NOT NULL,
     data BLOB NOT NULL,
     PRIMARY KEY (run_id, seq)
   )`,
  `CREATE TABLE IF NOT EXISTS run_results (
     run_id TEXT NOT NULL,
     request_id INTEGER NOT NULL,
     ok INTEGER NOT NULL,
     text TEXT,
     PRIMARY KEY (run_id, request_id)
   )`,
  "CREATE INDEX IF NOT EXISTS runs_by_turn ON runs (turn_id)",
  "CREATE INDEX IF NOT EXISTS runs_by_expiry ON runs (expires_at)",
];

/**
 * Parked runs in the session object's SQLite: compressed snapshot bytes in chunks under the
 * 2 MB production row limit, run state as JSON, and host results that settle while parked.
 */
// The run lifecycle's RunStore port (src/runs), checked structurally where the two are wired:
// the store does not import its consumer.
export class SnapshotStore {
  constructor(
    private readonly sql: SqlRunner,
    private readonly guard: WriteGuard = unguarded,
  ) {}

  count(): number {
    return this.sql.one<{ n: number }>("SELECT COUNT(*) AS n FROM runs")?.n ?? 0;
  }

  /** Write (or replace) a parked run; refused by the guard when the session cannot hold what it adds. */
  put(state: ParkedRunState, bytes: Uint8Array): void {
    const text = JSON.stringify(state);
    const old = this.sql.one<{ b: number }>("SELECT stored_bytes + length(CAST(state AS BLOB)) AS b FROM runs WHERE run_id = ?", state.runId)?.b ?? 0;
    this.guard(bytes.length + utf8.encode(text).length - old, () => this.write(state, text, bytes), "parking this run");
  }

  private write(state: ParkedRunState, text: string, bytes: Uint8Array): void {
    this.deleteChunks(state.runId);
    const chunks = Math.ceil(bytes.length / SNAPSHOT_CHUNK_BYTES);
    for (let i = 0; i < chunks; i++) {
      // slice(), not subarray(): a view would store the whole backing buffer.
      const part = bytes.slice(i * SNAPSHOT_CHUNK_BYTES, (i + 1) * SNAPSHOT_CHUNK_BYTES);
      this.sql.run("INSERT INTO run_chunks (run_id, seq, data) VALUES (?, ?, ?)", state.runId, i, part.buffer as ArrayBuffer);
    }
    this.sql.run(
      `INSERT INTO runs (run_id, turn_id, tenant_id, state, stored_bytes, chunks, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (run_id) DO UPDATE SET state = excluded.state, stored_bytes = excluded.stored_bytes,
         chunks = excluded.chunks, expires_at = excluded.expires_at, resuming = 0`,
      state.runId,
      state.turnId,
      state.tenantId,
      text,
      bytes.length,
      chunks,
      state.expiresAt,
    );
  }

  state(runId: string): ParkedRunState | undefined {
    const row = this.sql.one<{ state: string }>("SELECT state FROM runs WHERE run_id = ?", runId);
    return row ? (JSON.parse(row.state) as ParkedRunState) : undefined;
  }

  /** Size of the stored (compressed) snapshot, without reading it; undefined for an unknown run. */
  storedBytes(runId: string): number | undefined {
    return this.sql.one<{ stored_bytes: number }>("SELECT stored_bytes FROM runs WHERE run_id = ?", runId)?.stored_bytes;
  }

  /** The stored snapshot bytes, reassembled; undefined when a chunk is missing. */
  bytes(runId: string): Uint8Array | undefined {
    const row = this.sql.one<{ chunks: number; stored_bytes: number }>("SELECT chunks, stored_bytes FROM runs WHERE run_id = ?", runId);
    if (!row) return undefined;
    const parts = this.sql.all<{ seq: number; data: ArrayBuffer }>("SELECT seq, data FROM run_chunks WHERE run_id = ? ORDER BY seq", runId);
    if (parts.length !== row.chunks) return undefined;
    const out = new Uint8Array(row.stored_bytes);
    let offset = 0;
    for (const p of parts) {
      const chunk = new Uint8Array(p.data);
      if (offset + chunk.length > out.length) return undefined;
      out.set(chunk, offset);
      offset += chunk.length;
    }
    return offset === out.length ? out : undefined;
  }

  runsOfTurn(turnId: string): ParkedRunState[] {
    return this.sql.all<{ state: string }>("SELECT state FROM runs WHERE turn_id = ?", turnId).map((r) => JSON.parse(r.state) as ParkedRunState);
  }

  markResuming(runId: string): void {
    this.sql.run("UPDATE runs SET resuming = 1 WHERE run_id = ?", runId);
  }

  isResuming(runId: string): boolean {
    return this.sql.one<{ resuming: number }>("SELECT resuming FROM runs WHERE run_id = ?", runId)?.resuming === 1;
  }

  expiredRunIds(now: number): string[] {
    return this.sql.all<{ run_id: string }>("SELECT run_id FROM runs WHERE expires_at <= ?", now).map((r) => r.run_id);
  }

  nextExpiry(): number | undefined {
    return this.sql.one<{ t: number | null }>("SELECT MIN(expires_at) AS t FROM runs")?.t ?? undefined;
  }

  /** Store a host or client result; false when one was already stored for that request. */
  storeResult(runId: string, requestId: number, settlement: Settlement): boolean {
    if (this.sql.one("SELECT 1 AS x FROM run_results WHERE run_id = ? AND request_id = ?", runId, requestId)) return false;
    const text = settlement.ok ? (settlement.text ?? null) : settlement.message;
    // Counted as the quota counts a stored result: its columns (PARKED_RESULT_OVERHEAD there) and its text.
    const bytes = RESULT_ROW_OVERHEAD + (text === null ? 0 : utf8.encode(text).length);
    this.guard(
      bytes,
      () => this.sql.run("INSERT INTO run_results (run_id, request_id, ok, text) VALUES (?, ?, ?, ?)", runId, requestId, settlement.ok ? 1 : 0, text),
      "storing this result for the parked run",
    );
    return true;
  }

  results(runId: string): Map<number, Settlement> {
    const rows = this.sql.all<{ request_id: number; ok: number; text: string | null }>(
      "SELECT request_id, ok, text FROM run_results WHERE run_id = ?",
      runId,
    );
    return new Map(rows.map((r) => [r.request_id, r.ok ? { ok: true, text: r.text ?? undefined } : { ok: false, message: r.text ?? "failed" }]));
  }

  /** Results already consumed by a resumed VM are dropped so they are not delivered twice. */
  clearResults(runId: string): void {
    this.sql.run("DELETE FROM run_results WHERE run_id = ?", runId);
  }

  delete(runId: string): void {
    // Usually nothing is stored for results; skip that statement when the run had none.
    this.deleteChunks(runId);
    if (this.sql.one("SELECT 1 AS x FROM run_results WHERE run_id = ? LIMIT 1", runId)) {
      this.sql.run("DELETE FROM run_results WHERE run_id = ?", runId);
    }
    this.sql.run("DELETE FROM runs WHERE run_id = ?", runId);
  }

  /** Rows held by parked runs (for tests and benchmarks). */
  footprint(): { runs: number; chunks: number; results: number; storedBytes: number } {
    const r = this.sql.one<{ runs: number; bytes: number | null }>("SELECT COUNT(*) AS runs, SUM(stored_bytes) AS bytes FROM runs");
    return {
      runs: r?.runs ?? 0,
      storedBytes: r?.bytes ?? 0,
      chunks: this.sql.one<{ n: number }>("SELECT COUNT(*) AS n FROM run_chunks")?.n ?? 0,
      results: this.sql.one<{ n: number }>("SELECT COUNT(*) AS n FROM run_results")?.n ?? 0,
    };
  }

  private deleteChunks(runId: string): void {
    this.sql.run("DELETE FROM run_chunks WHERE run_id = ?", runId);
  }
}
