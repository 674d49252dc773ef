import type { Sql } from "../sql";
import { SNAPSHOT_SCHEMA, SNAPSHOT_SCHEMA_RESUMING } from "../../src/snapshot-store";

const SCHEMA_VERSION = 14;

/** A migration: its statements in order, or a function for one that depends on what the session holds. */
type Migration = readonly string[] | ((sql: Sql) => void);

/** The approvals table's columns as migration 8 created them (frozen: a later column is a migration of its own). */
const APPROVALS_V8 = `approval_id TEXT PRIMARY KEY,
  turn_id TEXT NOT NULL,
  tenant_id TEXT NOT NULL,
  tool TEXT NOT NULL,
  input_preview TEXT NOT NULL,
  call_id TEXT,
  requested_at INTEGER NOT NULL,
  status TEXT NOT NULL,
  reason TEXT,
  decided_at INTEGER`;

const MIGRATIONS: Record<number, Migration> = {
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
    `CREATE TABLE IF NOT EXISTS approvals (${APPROVALS_V8})`,
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
  // Fewer pages in every commit that records a call: see rebuildForFewerPages.
  13: rebuildForFewerPages,
  // A catalog (a turn's tools: names, descriptions, schemas; ~360 KB for 800 tools) stored once per
  // session, shared by the turns that have it (`turn_specs.catalog`, its digest): a turn opened like an
  // earlier one writes its own fields, not ~90 pages. Specs stored before keep their catalog inline (catalog NULL).
  14: [
    "CREATE TABLE IF NOT EXISTS turn_catalogs (digest TEXT PRIMARY KEY, json TEXT NOT NULL)",
    "ALTER TABLE turn_specs ADD COLUMN catalog TEXT",
    "CREATE INDEX IF NOT EXISTS turn_specs_catalog ON turn_specs (catalog)",
  ],
};

/**
 * The tables exactly as MIGRATIONS 1..SCHEMA_VERSION leave them (columns in the same order, the same
 * keys, indexes and table options), created at once for a new session: every sub-agent and every
 * new session id pays its schema in its first request, and replaying the history cost it ~5 ms of
 * CPU (ALTER TABLEs, and schema 13's rebuilds of tables just created). A test checks the two agree
 * (test/e2e/fresh-schema.test.ts); a new migration changes both.
 */
const CURRENT: readonly string[] = [
  `CREATE TABLE turns (
     turn_id TEXT PRIMARY KEY,
     tenant_id TEXT NOT NULL,
     spec TEXT NOT NULL,
     counters TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     stored_bytes INTEGER NOT NULL DEFAULT 0,
     last_active_at INTEGER NOT NULL DEFAULT 0,
     trajectory_dropped INTEGER NOT NULL DEFAULT 0
   )`,
  ...SNAPSHOT_SCHEMA,
  ...SNAPSHOT_SCHEMA_RESUMING,
  "CREATE TABLE session_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
  "CREATE TABLE tool_data (key TEXT PRIMARY KEY, bytes INTEGER NOT NULL)",
  ...(MIGRATIONS[6] as readonly string[]),
  "CREATE TABLE chat_turns (turn_id TEXT PRIMARY KEY, state TEXT NOT NULL)",
  "CREATE TABLE transcript (seq INTEGER PRIMARY KEY, turn_id TEXT NOT NULL, message TEXT NOT NULL, bytes INTEGER NOT NULL)",
  "CREATE INDEX transcript_turn ON transcript (turn_id, seq)",
  "CREATE TABLE trajectory (seq INTEGER PRIMARY KEY, turn_id TEXT NOT NULL, at INTEGER NOT NULL, kind TEXT NOT NULL, body TEXT NOT NULL)",
  "CREATE INDEX trajectory_turn ON trajectory (turn_id, seq)",
  // Migration 9 added parent_call_id.
  `CREATE TABLE approvals (${APPROVALS_V8}, parent_call_id TEXT)`,
  "CREATE INDEX approvals_turn ON approvals (turn_id)",
  "CREATE TABLE untrusted_runs (run_id TEXT PRIMARY KEY, turn_id TEXT NOT NULL)",
  `CREATE TABLE open_calls (
     turn_id TEXT NOT NULL,
     call_id TEXT NOT NULL,
     tool TEXT NOT NULL,
     started_at INTEGER NOT NULL,
     PRIMARY KEY (turn_id, call_id)
   ) WITHOUT ROWID`,
  ...(MIGRATIONS[11] as readonly string[]),
  // Migration 14 added catalog.
  "CREATE TABLE turn_specs (turn_id TEXT PRIMARY KEY, spec TEXT NOT NULL, catalog TEXT)",
  "CREATE TABLE turn_catalogs (digest TEXT PRIMARY KEY, json TEXT NOT NULL)",
  "CREATE INDEX turn_specs_catalog ON turn_specs (catalog)",
];

/**
 * Brings the session's tables to SCHEMA_VERSION: a new session gets them as they are now (CURRENT),
 * one stored by an earlier build runs the migrations past its version. All or nothing: a migration
 * that fails part way (a table rebuilt, the storage full) rolls back with the version, so the next
 * start runs it again on the tables as they were, never on a half-migrated session.
 */
export function applySchema(sql: Sql): void {
  sql.transaction(() => {
    // New: neither the version table nor the first migration's table (a session from before versions had turns).
    const fresh = sql.one("SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name IN ('schema_version', 'turns')") === undefined;
    if (fresh) {
      for (const stmt of CURRENT) sql.run(stmt);
      sql.run("CREATE TABLE schema_version (version INTEGER NOT NULL)");
      sql.run("INSERT INTO schema_version (version) VALUES (?)", SCHEMA_VERSION);
      return;
    }
    migrate(sql);
  });
}

/** MIGRATIONS past the session's version (a session without a version row starts from the first). */
function migrate(sql: Sql): void {
  sql.run("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)");
  const row = sql.one<{ version: number }>("SELECT version FROM schema_version LIMIT 1");
  const current = row?.version ?? 0;
  for (let v = current + 1; v <= SCHEMA_VERSION; v++) {
    const migration = MIGRATIONS[v] ?? [];
    if (typeof migration === "function") migration(sql);
    else for (const stmt of migration) sql.run(stmt);
  }
  if (!row) sql.run("INSERT INTO schema_version (version) VALUES (?)", SCHEMA_VERSION);
  else if (current < SCHEMA_VERSION) sql.run("UPDATE schema_version SET version = ?", SCHEMA_VERSION);
}

/**
 * A table is rebuilt by a migration only while it holds at most this many rows: the copy runs in the
 * object's first request after a deploy, and a longer history keeps its layout (correct, only heavier
 * to write).
 */
export const REBUILD_MAX_ROWS = 20_000;

/**
 * Schema 13. An AUTOINCREMENT table rewrites its row of sqlite_sequence on each insert (one more page
 * in every commit that records an event or a message), and a rowid table with a composite key keeps
 * that key in an index of its own (two pages per open-call write): 30% fewer pages per recorded call
 * without them. A new rowid is the largest one plus one, so it sorts after every row that remains,
 * though it may reuse the number of a deleted row: nothing keeps a row's number past its row (the
 * one cached number, a turn's `omitted` row, is also matched by its turn). The new tables are named
 * `v13_*` while they are built, so no statement here begins like one the session writes.
 */
function rebuildForFewerPages(sql: Sql): void {
  rebuild(
    sql,
    "trajectory",
    "seq INTEGER PRIMARY KEY, turn_id TEXT NOT NULL, at INTEGER NOT NULL, kind TEXT NOT NULL, body TEXT NOT NULL",
    "seq, turn_id, at, kind, body",
    ["CREATE INDEX trajectory_turn ON trajectory (turn_id, seq)"],
  );
  rebuild(
    sql,
    "transcript",
    "seq INTEGER PRIMARY KEY, turn_id TEXT NOT NULL, message TEXT NOT NULL, bytes INTEGER NOT NULL",
    "seq, turn_id, message, bytes",
    ["CREATE INDEX transcript_turn ON transcript (turn_id, seq)"],
  );
  // A row per call in flight: always small.
  rebuild(
    sql,
    "open_calls",
    "turn_id TEXT NOT NULL, call_id TEXT NOT NULL, tool TEXT NOT NULL, started_at INTEGER NOT NULL, PRIMARY KEY (turn_id, call_id)",
    "turn_id, call_id, tool, started_at",
    [],
    " WITHOUT ROWID",
  );
}

function rebuild(sql: Sql, table: string, columns: string, names: string, after: readonly string[], options = ""): void {
  const rows = sql.one<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`)?.n ?? 0;
  if (rows > REBUILD_MAX_ROWS) return;
  sql.run(`CREATE TABLE v13_${table} (${columns})${options}`);
  sql.run(`INSERT INTO v13_${table} (${names}) SELECT ${names} FROM ${table}`);
  sql.run(`DROP TABLE ${table}`);
  sql.run(`ALTER TABLE v13_${table} RENAME TO ${table}`);
  for (const stmt of after) sql.run(stmt);
}
