import { abortAllDurableObjects } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, exec, freshTurn, openTurn, sessionProbe, withInlineCatalogs } from "./helpers";
import { REBUILD_MAX_ROWS } from "../../durable-objects/session/schema";

// Schema 13 records calls in fewer pages: the trajectory and transcript tables lose AUTOINCREMENT
// (each insert also rewrote their row of sqlite_sequence) and open_calls keeps its composite key
// in the table itself (WITHOUT ROWID, no index of its own). A session stored by an earlier build is
// migrated by its next incarnation, its rows, their order and its open calls kept.

const tableSql = async (session: string, name: string): Promise<string> =>
  String((await sessionProbe(session).storageRows("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", name))[0]?.sql ?? "");

const sequenced = async (session: string): Promise<string[]> => {
  const probe = sessionProbe(session);
  if ((await probe.storageRows("SELECT name FROM sqlite_master WHERE name = 'sqlite_sequence'")).length === 0) return [];
  return (await probe.storageRows("SELECT name FROM sqlite_sequence")).map((r) => String(r.name));
};

const events = (session: string, turnId: string) =>
  sessionProbe(session).storageRows("SELECT seq, kind, body FROM trajectory WHERE turn_id = ? ORDER BY seq", turnId);

/** The session's tables as schema 12 left them: AUTOINCREMENT trajectory and transcript, open_calls with a rowid. */
async function asSchema12(session: string): Promise<void> {
  await withInlineCatalogs(session);
  const probe = sessionProbe(session);
  for (const stmt of [
    "CREATE TABLE trajectory_12 (seq INTEGER PRIMARY KEY AUTOINCREMENT, turn_id TEXT NOT NULL, at INTEGER NOT NULL, kind TEXT NOT NULL, body TEXT NOT NULL)",
    "INSERT INTO trajectory_12 SELECT seq, turn_id, at, kind, body FROM trajectory",
    "DROP TABLE trajectory",
    "ALTER TABLE trajectory_12 RENAME TO trajectory",
    "CREATE INDEX trajectory_turn ON trajectory (turn_id, seq)",
    "CREATE TABLE transcript_12 (seq INTEGER PRIMARY KEY AUTOINCREMENT, turn_id TEXT NOT NULL, message TEXT NOT NULL, bytes INTEGER NOT NULL)",
    "DROP TABLE transcript",
    "ALTER TABLE transcript_12 RENAME TO transcript",
    "CREATE INDEX transcript_turn ON transcript (turn_id, seq)",
    "DROP TABLE open_calls",
    "CREATE TABLE open_calls (turn_id TEXT NOT NULL, call_id TEXT NOT NULL, tool TEXT NOT NULL, started_at INTEGER NOT NULL, PRIMARY KEY (turn_id, call_id))",
    "UPDATE schema_version SET version = 12",
  ])
    await probe.storageWrite(stmt);
}

describe("the tables that record calls (schema 13)", () => {
  it("a new session records events and messages without sqlite_sequence, and open calls without a rowid", async () => {
    const { session, turnId } = await freshTurn();
    expect(await exec(session, turnId, "return 1")).toMatchObject({ status: "completed" });
    expect(await tableSql(session, "trajectory")).not.toMatch(/AUTOINCREMENT/i);
    expect(await tableSql(session, "transcript")).not.toMatch(/AUTOINCREMENT/i);
    expect(await tableSql(session, "open_calls")).toMatch(/WITHOUT ROWID/i);
    expect(await sequenced(session)).not.toContain("trajectory");
    expect((await events(session, turnId)).map((e) => e.kind)).toEqual(["outer_start", "outer_end"]);
  });

  it("a session stored by schema 12 is migrated when its object starts again: rows, order and open calls kept", async () => {
    const { session, turnId } = await freshTurn();
    expect(await exec(session, turnId, "return 20 + 1")).toMatchObject({ status: "completed", value: 21 });
    const probe = sessionProbe(session);
    await asSchema12(session);
    await probe.storageWrite(
      "INSERT INTO transcript (turn_id, message, bytes) VALUES (?, ?, 2), (?, ?, 2)",
      turnId,
      '{"role":"user"}',
      turnId,
      '{"role":"assistant"}',
    );
    // A call the earlier incarnation left running: the next one must still find it, and end it `lost`.
    await probe.storageWrite("INSERT INTO open_calls (turn_id, call_id, tool, started_at) VALUES (?, 'call_left_open', 'exec', 1)", turnId);
    expect(await sequenced(session)).toContain("trajectory");
    const before = await events(session, turnId);
    expect(before.map((e) => e.kind)).toEqual(["outer_start", "outer_end"]);

    await abortAllDurableObjects();
    expect(await exec(session, turnId, "return 40 + 2")).toMatchObject({ status: "completed", value: 42 });

    const after = sessionProbe(session);
    expect((await after.storageRows("SELECT version FROM schema_version"))[0]).toEqual({ version: 14 });
    expect(await tableSql(session, "trajectory")).not.toMatch(/AUTOINCREMENT/i);
    expect(await tableSql(session, "open_calls")).toMatch(/WITHOUT ROWID/i);
    expect(await sequenced(session)).not.toContain("trajectory");
    expect(await sequenced(session)).not.toContain("transcript");
    const rows = await events(session, turnId);
    // The old rows as they were, then the lost call's end (recovery), then the new call, in that order.
    expect(rows.slice(0, 2)).toEqual(before);
    expect(rows.slice(2).map((e) => [e.kind, JSON.parse(String(e.body)).status ?? JSON.parse(String(e.body)).limit])).toEqual([
      ["outer_end", "lost"],
      ["limit", "session_reset"],
      ["outer_start", undefined],
      ["outer_end", "completed"],
    ]);
    expect(JSON.parse(String(rows[2]!.body))).toMatchObject({ callId: "call_left_open" });
    expect(await after.storageRows("SELECT turn_id FROM open_calls")).toEqual([]);
    expect((await after.storageRows("SELECT message FROM transcript WHERE turn_id = ? ORDER BY seq", turnId)).map((r) => r.message)).toEqual([
      '{"role":"user"}',
      '{"role":"assistant"}',
    ]);
  });

  it("a session with a long history keeps its trajectory's layout (no copy at start), and goes on recording", async () => {
    const { session, turnId } = await freshTurn();
    expect(await exec(session, turnId, "return 1")).toMatchObject({ status: "completed" });
    await asSchema12(session);
    // Another turn's long history: more rows than a migration copies in the object's first request.
    await sessionProbe(session).storageWrite(
      `INSERT INTO trajectory (turn_id, at, kind, body)
       WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < ?) SELECT 'history', 0, 'nested', '{}' FROM n`,
      REBUILD_MAX_ROWS,
    );
    await abortAllDurableObjects();
    expect(await exec(session, turnId, "return 2")).toMatchObject({ status: "completed", value: 2 });
    expect((await sessionProbe(session).storageRows("SELECT version FROM schema_version"))[0]).toEqual({ version: 14 });
    expect(await tableSql(session, "trajectory")).toMatch(/AUTOINCREMENT/i);
    expect(await tableSql(session, "transcript")).not.toMatch(/AUTOINCREMENT/i);
    expect(await tableSql(session, "open_calls")).toMatch(/WITHOUT ROWID/i);
    expect((await events(session, turnId)).map((e) => e.kind)).toEqual(["outer_start", "outer_end", "outer_start", "outer_end"]);
  });

  it("a turn's events stay in order after the newest rows of the session are deleted (their numbers are reused)", async () => {
    const { session, turnId } = await freshTurn();
    const other = await openTurn(session);
    expect(await exec(session, turnId, "return 1")).toMatchObject({ status: "completed" });
    expect(await exec(session, other, "return 2")).toMatchObject({ status: "completed" });
    const newest = Number((await sessionProbe(session).storageRows("SELECT MAX(seq) AS s FROM trajectory"))[0]!.s);
    // The other turn holds the session's newest rows: deleting it frees the highest numbers.
    expect((await api("DELETE", `/v1/sessions/${session}/turns/${other}`)).status).toBe(200);
    expect(await exec(session, turnId, "return 3")).toMatchObject({ status: "completed" });
    const rows = await events(session, turnId);
    expect(rows.map((e) => e.kind)).toEqual(["outer_start", "outer_end", "outer_start", "outer_end"]);
    expect(rows.map((e) => Number(e.seq))).toEqual([...rows.map((e) => Number(e.seq))].sort((a, b) => a - b));
    // Reused: the new rows took numbers the deleted turn had (no AUTOINCREMENT), still above the turn's own.
    expect(Number(rows[2]!.seq)).toBeLessThanOrEqual(newest);
    const t = await api("GET", `/v1/sessions/${session}/turns/${turnId}/trajectory`);
    expect(t.status).toBe(200);
  });
});
