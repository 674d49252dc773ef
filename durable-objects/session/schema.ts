import type { Sql } from "../sql";
import { SNAPSHOT_SCHEMA, SNAPSHOT_SCHEMA_RESUMING } from "../../src/snapshot-store";

const SCHEMA_VERSION = 13;

const MIGRATIONS: Record<number, string[]> = {
  1: [
    `CREATE TABLE IF NOT EXISTS turns (
       turn_id TEXT PRIMARY KEY,
       tenant_id TEXT NOT NULL,
       spec TEXT NOT NULL,
       counters TEXT NOT NULL,
       created_at INTEGER NOT NULL
     )`,
  ],
  2: SNAPSHOT_SCHEMA,
  3: ["CREATE TABLE IF NOT EXISTS session_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"],
  4: SNAPSHOT_SCHEMA_RESUMING,
  // Storage lifecycle (session-expiry.ts, storage-quota.ts): turn activity and size, tool data sizes.
  5: [
    "ALTER TABLE turns ADD COLUMN stored_bytes INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE turns ADD COLUMN last_active_at INTEGER NOT NULL DEFAULT 0",
    "UPDATE turns SET stored_bytes = length(CAST(spec AS BLOB)) + length(CAST(counters AS BLOB)), last_active_at = created_at",
    "CREATE TABLE IF NOT EXISTS tool_data (key TEXT PRIMARY KEY, bytes INTEGER NOT NULL)",
  ],
  // Client results accepted per turn, so a repeat is a 409 even after its run settled (turn-store.ts).
  6: [
    `CREATE TABLE IF NOT EXISTS delivered_calls (
       seq INTEGER PRIMARY KEY AUTOINCREMENT,
       turn_id TEXT NOT NULL,
       call_id TEXT NOT NULL,
       UNIQUE (turn_id, call_id)
     )`,
  ],
  // Agent turns (transcript-store.ts): the /chat state of a turn, its messages, its trajectory events.
  7: [
    "CREATE TABLE IF NOT EXISTS chat_turns (turn_id TEXT PRIMARY KEY, state TEXT NOT NULL)",
    `CREATE TABLE IF NOT EXISTS transcript (
       seq INTEGER PRIMARY KEY AUTOINCREMENT,
       turn_id TEXT NOT NULL,
       message TEXT NOT NULL,
       bytes INTEGER NOT NULL
     )`,
    "CREATE INDEX IF NOT EXISTS transcript_turn ON transcript (turn_id, seq)",
    `CREATE TABLE IF NOT EXISTS trajectory (
       seq INTEGER PRIMARY KEY AUTOINCREMENT,
       turn_id TEXT NOT NULL,
       at INTEGER NOT NULL,
       kind TEXT NOT NULL,
       body TEXT NOT NULL
     )`,
    "CREATE INDEX IF NOT EXISTS trajectory_turn ON trajectory (turn_id, seq)",
  ],
  // Operator approvals of nested and direct calls (approval-broker.ts).
  8: [
    `CREATE TABLE IF NOT EXISTS approvals (
       approval_id TEXT PRIMARY KEY,
       turn_id TEXT NOT NULL,
       tenant_id TEXT NOT NULL,
       tool TEXT NOT NULL,
       input_preview TEXT NOT NULL,
       call_id TEXT,
       requested_at INTEGER NOT NULL,
       status TEXT NOT NULL,
       reason TEXT,
       decided_at INTEGER
     )`,
    "CREATE INDEX IF NOT EXISTS approvals_turn ON approvals (turn_id)",
    // Parked runs that already read network-derived content: every later wait result is wrapped too.
    "CREATE TABLE IF NOT EXISTS untrusted_runs (run_id TEXT PRIMARY KEY, turn_id TEXT NOT NULL)",
  ],
  // Outer calls in flight (transcript-store.ts), and the outer call an approval was asked under: a new
  // incarnation records what its predecessor left unfinished as lost (reset-recovery.ts).
  9: [
    `CREATE TABLE IF NOT EXISTS open_calls (
       turn_id TEXT NOT NULL,
       call_id TEXT NOT NULL,
       tool TEXT NOT NULL,
       started_at INTEGER NOT NULL,
       PRIMARY KEY (turn_id, call_id)
     )`,
    "ALTER TABLE approvals ADD COLUMN parent_call_id TEXT",
  ],
  // Trajectory events removed (oldest first) to keep the session within its storage quota (transcript-store.ts).
  10: ["ALTER TABLE turns ADD COLUMN trajectory_dropped INTEGER NOT NULL DEFAULT 0"],
  // Client tools Tool Search's `tool_call` handed to the caller, until their result arrives (tool-call-clients.ts).
  11: [
    `CREATE TABLE IF NOT EXISTS tool_call_clients (
       turn_id TEXT NOT NULL,
       call_id TEXT NOT NULL,
       parent_call_id TEXT NOT NULL,
       tool TEXT NOT NULL,
       input TEXT NOT NULL,
       decision TEXT NOT NULL,
       started_at INTEGER NOT NULL,
       bytes INTEGER NOT NULL,
       PRIMARY KEY (turn_id, call_id)
     )`,
  ],
  // A turn's spec (most of it its catalog) in a row of its own: the turn row's small columns are
  // updated on every step (stored_bytes, counters, last_active_at), and SQLite rewrites a whole row,
  // overflow pages included, on any update of it.
  12: [
    "CREATE TABLE IF NOT EXISTS turn_specs (turn_id TEXT PRIMARY KEY, spec TEXT NOT NULL)",
    "INSERT OR IGNORE INTO turn_specs (turn_id, spec) SELECT turn_id, spec FROM turns",
    "UPDATE turns SET spec = ''",
  ],
  // Fewer pages in every commit that records a call: an AUTOINCREMENT table rewrites its row of
  // sqlite_sequence on each insert (one more page per event or message), and a rowid table with a
  // composite key keeps the key in an index of its own (two pages per open-call write). Trajectory
  // rows go oldest first or a whole turn at a time, and transcript rows a whole turn at a time, so
  // plain rowids still grow in insertion order among the rows that remain. (The new tables' temporary
  // names start with v13_, so no statement here begins like one the session writes.)
  13: [
    `CREATE TABLE v13_trajectory (
       seq INTEGER PRIMARY KEY,
       turn_id TEXT NOT NULL,
       at INTEGER NOT NULL,
       kind TEXT NOT NULL,
       body TEXT NOT NULL
     )`,
    "INSERT INTO v13_trajectory (seq, turn_id, at, kind, body) SELECT seq, turn_id, at, kind, body FROM trajectory",
    "DROP TABLE trajectory",
    "ALTER TABLE v13_trajectory RENAME TO trajectory",
    "CREATE INDEX trajectory_turn ON trajectory (turn_id, seq)",
    `CREATE TABLE v13_transcript (
       seq INTEGER PRIMARY KEY,
       turn_id TEXT NOT NULL,
       message TEXT NOT NULL,
       bytes INTEGER NOT NULL
     )`,
    "INSERT INTO v13_transcript (seq, turn_id, message, bytes) SELECT seq, turn_id, message, bytes FROM transcript",
    "DROP TABLE transcript",
    "ALTER TABLE v13_transcript RENAME TO transcript",
    "CREATE INDEX transcript_turn ON transcript (turn_id, seq)",
    `CREATE TABLE v13_open_calls (
       turn_id TEXT NOT NULL,
       call_id TEXT NOT NULL,
       tool TEXT NOT NULL,
       started_at INTEGER NOT NULL,
       PRIMARY KEY (turn_id, call_id)
     ) WITHOUT ROWID`,
    "INSERT INTO v13_open_calls (turn_id, call_id, tool, started_at) SELECT turn_id, call_id, tool, started_at FROM open_calls",
    "DROP TABLE open_calls",
    "ALTER TABLE v13_open_calls RENAME TO open_calls",
  ],
};

/**
 * Brings the session's tables to SCHEMA_VERSION. All or nothing: a migration that fails part way (a
 * table rebuilt, the storage full) rolls back with the version, so the next start runs it again on
 * the tables as they were, never on a half-migrated session.
 */
export function applySchema(sql: Sql): void {
  sql.transaction(() => {
    sql.run("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)");
    const row = sql.one<{ version: number }>("SELECT version FROM schema_version LIMIT 1");
    const current = row?.version ?? 0;
    for (let v = current + 1; v <= SCHEMA_VERSION; v++) for (const stmt of MIGRATIONS[v] ?? []) sql.run(stmt);
    if (current === 0) sql.run("INSERT INTO schema_version (version) VALUES (?)", SCHEMA_VERSION);
    else if (current < SCHEMA_VERSION) sql.run("UPDATE schema_version SET version = ?", SCHEMA_VERSION);
  });
}
