import type { ChatState, TrajectoryRow } from "../../src/agent";
import { MAX_TRAJECTORY_EVENTS, MAX_TRANSCRIPT_BYTES } from "../../src/limits";
import type { ModelMessage } from "../../src/providers";
import type { Sql } from "../sql";
import type { Promised, StorageQuota } from "./storage-quota";
import type { TranscriptPort } from "../../src/session";

const utf8 = new TextEncoder();

/** What a trajectory row counts against the quota: its columns, kind and body (the same as ROW_BYTES_SQL). */
const rowBytes = (kind: string, body: string): number => ROW_OVERHEAD + utf8.encode(kind).length + utf8.encode(body).length;

/** A trajectory row's own columns (turn id, time, sequence), counted with its kind and body. */
const ROW_OVERHEAD = 64;
const ROW_BYTES_SQL = `(${ROW_OVERHEAD} + length(CAST(kind AS BLOB)) + length(CAST(body AS BLOB)))`;

/** Trajectory slots kept for the turn's own lifecycle once nested activity has filled the rest. */
const NESTED_RESERVE = 200;

/** Turns whose sizes are kept in memory (the turns a session drives at once are few). */
const SIZES_LIMIT = 64;

/** What a turn's writes need to know of what it stores, read from SQL once and kept up to date by those writes. */
/** `omitted`: the turn's `omitted` counter row (null: none yet), read once: a turn past its bound counts every later event in it. */
type TurnSizes = { events?: number; stateBytes?: number; transcriptBytes?: number; omitted?: { seq: number; count: number } | null };

/**
 * A turn's agent record in the session's SQLite: its /chat state, its transcript (the messages
 * provider replay is built from, `exec` source already redacted), and its trajectory events
 * (outer calls, nested activity, model calls, snapshot lifecycle, limits). Bounded per turn:
 * the transcript by MAX_TRANSCRIPT_BYTES (the loop stops once it is full), the trajectory by
 * MAX_TRAJECTORY_EVENTS (later events are counted, not stored). Every row is written through the
 * session's guarded write path (storage-quota.ts) and charged to the turn's row: a transcript
 * message or /chat state that does not fit is refused (`QuotaExceeded`, nothing written); a
 * trajectory event that does not fit makes room by removing the turn's oldest events (counted in
 * `turns.trajectory_dropped`: the trajectory keeps a bounded tail), or is counted itself when even
 * that would not make room. Everything goes with the turn.
 *
 * A turn's event count, state size and transcript size are read once and then followed by its own
 * writes (this store is their only writer): a write costs its insert and its charge, not a recount.
 */
export class TranscriptStore implements TranscriptPort {
  private readonly sizes = new Map<string, TurnSizes>();

  constructor(
    private readonly sql: Sql,
    private readonly ready: () => boolean,
    private readonly quota: StorageQuota,
    /** Whether the turn's row exists (the turn store knows the turns it holds parsed). */
    private readonly exists: (turnId: string) => boolean = (turnId) =>
      this.sql.one("SELECT 1 AS x FROM turns WHERE turn_id = ?", turnId) !== undefined,
  ) {}

  /** A transaction rolled back writes of this store: read sizes from SQL again. */
  forget(): void {
    this.sizes.clear();
  }

  /** A turn was just stored: it has no state, messages or events yet (nothing to read back). */
  opened(turnId: string): void {
    this.sizes.delete(turnId);
    Object.assign(this.sized(turnId), { events: 0, stateBytes: 0, transcriptBytes: 0 });
  }

  /** Writes of one step in one transaction, each turn row charged once (storage-quota.ts `step`). */
  step<T>(fn: () => T): T {
    return this.quota.step(fn);
  }

  private sized(turnId: string): TurnSizes {
    let s = this.sizes.get(turnId);
    if (!s) {
      if (this.sizes.size >= SIZES_LIMIT) this.sizes.delete(this.sizes.keys().next().value!);
      s = {};
      this.sizes.set(turnId, s);
    }
    return s;
  }

  state(turnId: string): ChatState | undefined {
    if (!this.ready()) return undefined;
    const row = this.sql.one<{ state: string }>("SELECT state FROM chat_turns WHERE turn_id = ?", turnId);
    return row ? (JSON.parse(row.state) as ChatState) : undefined;
  }

  /** Writes only for a turn that still exists: a loop whose turn (or session) was deleted leaves nothing behind. */
  private live(turnId: string): boolean {
    return this.ready() && this.exists(turnId);
  }

  /** Replace the turn's /chat state, charged by how much it grows; throws `QuotaExceeded` (state unchanged) when it does not fit. */
  saveState(turnId: string, state: ChatState, promised?: Promised): void {
    if (!this.live(turnId)) return;
    const text = JSON.stringify(state);
    const sizes = this.sized(turnId);
    const old =
      sizes.stateBytes ?? this.sql.one<{ b: number }>("SELECT length(CAST(state AS BLOB)) AS b FROM chat_turns WHERE turn_id = ?", turnId)?.b ?? 0;
    const bytes = utf8.encode(text).length;
    this.quota.grow(
      turnId,
      bytes - old,
      // Updated in place (an upsert, not a replace: no new row, its key's index entry untouched).
      () =>
        this.sql.run(
          "INSERT INTO chat_turns (turn_id, state) VALUES (?, ?) ON CONFLICT (turn_id) DO UPDATE SET state = excluded.state",
          turnId,
          text,
        ),
      "this turn's /chat state",
      promised,
    );
    sizes.stateBytes = bytes;
  }

  /**
   * Store one message; false once the turn's transcript is over its bound (the message is still kept:
   * replay stays valid). Throws `QuotaExceeded`, storing nothing, when the session cannot hold it.
   */
  append(turnId: string, message: ModelMessage, promised?: Promised): boolean {
    return this.appendAll(turnId, [message], promised);
  }

  /** Store messages all together or none (one guarded write). */
  appendAll(turnId: string, messages: readonly ModelMessage[], promised?: Promised): boolean {
    if (!this.live(turnId)) return false;
    const rows = messages.map((m) => {
      const text = JSON.stringify(m);
      return { text, bytes: utf8.encode(text).length };
    });
    const total = rows.reduce((n, r) => n + r.bytes, 0);
    const what = rows.length === 1 ? "this transcript message" : `these ${rows.length} transcript messages`;
    this.quota.grow(
      turnId,
      total,
      () => {
        const insert = () => {
          for (const r of rows) this.sql.run("INSERT INTO transcript (turn_id, message, bytes) VALUES (?, ?, ?)", turnId, r.text, r.bytes);
        };
        // Several messages stand or fall together, also inside a step.
        if (rows.length > 1) this.quota.allOrNothing(insert);
        else insert();
      },
      what,
      promised,
    );
    const sizes = this.sized(turnId);
    if (sizes.transcriptBytes !== undefined) sizes.transcriptBytes += total;
    return this.transcriptBytes(turnId) <= MAX_TRANSCRIPT_BYTES;
  }

  transcriptBytes(turnId: string): number {
    const sizes = this.sized(turnId);
    sizes.transcriptBytes ??= this.sql.one<{ b: number | null }>("SELECT SUM(bytes) AS b FROM transcript WHERE turn_id = ?", turnId)?.b ?? 0;
    return sizes.transcriptBytes;
  }

  messages(turnId: string): ModelMessage[] {
    return this.sql
      .all<{ message: string }>("SELECT message FROM transcript WHERE turn_id = ? ORDER BY seq", turnId)
      .map((r) => JSON.parse(r.message) as ModelMessage);
  }

  /**
   * One trajectory event; past the bound only counted. Nested activity and policy decisions stop
   * NESTED_RESERVE events early, so a turn's own lifecycle (outer calls, model calls, snapshots,
   * limits) still fits; the last slot is the `omitted` counter: never more than the bound in rows.
   * Never refused by the storage quota: over it, the turn's oldest events make room (`dropped`).
   */
  event(turnId: string, at: number, kind: string, body: Record<string, unknown>): void {
    if (!this.live(turnId)) return;
    const sizes = this.sized(turnId);
    const n = (sizes.events ??= this.sql.one<{ n: number }>("SELECT COUNT(*) AS n FROM trajectory WHERE turn_id = ?", turnId)?.n ?? 0);
    const room = (kind === "nested" || kind === "policy" ? MAX_TRAJECTORY_EVENTS - NESTED_RESERVE : MAX_TRAJECTORY_EVENTS) - 1;
    if (n < room) {
      const text = JSON.stringify(body);
      this.insertEvent(turnId, rowBytes(kind, text), () =>
        this.sql.run("INSERT INTO trajectory (turn_id, at, kind, body) VALUES (?, ?, ?, ?)", turnId, at, kind, text),
      );
      return;
    }
    // Found by a scan of the turn's events once, then kept (a rolled-back write clears it with the rest: `forget`).
    if (sizes.omitted === undefined) {
      const row = this.sql.one<{ seq: number; body: string }>("SELECT seq, body FROM trajectory WHERE turn_id = ? AND kind = 'omitted'", turnId);
      sizes.omitted = row ? { seq: row.seq, count: (JSON.parse(row.body) as { count: number }).count } : null;
    }
    const omitted = sizes.omitted;
    if (omitted) {
      // Keyed by the turn as well: a row number can be reused once its row is gone (schema 13: no AUTOINCREMENT).
      this.sql.run(
        "UPDATE trajectory SET body = ? WHERE seq = ? AND turn_id = ? AND kind = 'omitted'",
        JSON.stringify({ count: omitted.count + 1 }),
        omitted.seq,
        turnId,
      );
      omitted.count++;
    } else {
      // The bound's last slot (see `room`): the table never holds more than MAX_TRAJECTORY_EVENTS rows.
      // Charged once at the size of a large count: the counter grows in place.
      this.insertEvent(turnId, rowBytes("omitted", JSON.stringify({ count: Number.MAX_SAFE_INTEGER })), () => {
        const row = this.sql.one<{ seq: number }>(
          "INSERT INTO trajectory (turn_id, at, kind, body) VALUES (?, ?, 'omitted', ?) RETURNING seq",
          turnId,
          at,
          JSON.stringify({ count: 1 }),
        );
        if (row) sizes.omitted = { seq: row.seq, count: 1 };
      });
    }
  }

  /** Write a trajectory row of `bytes`, removing the turn's oldest events first when the session cannot hold it. */
  private insertEvent(turnId: string, bytes: number, write: () => void): void {
    if (!this.makeRoom(turnId, bytes)) return this.countDropped(turnId, 1);
    try {
      // makeRoom just checked (or made) the room: the session's usage is not summed a second time.
      this.quota.growWithinRoom(turnId, bytes, write);
      const sizes = this.sizes.get(turnId);
      if (sizes?.events !== undefined) sizes.events++;
    } catch {
      // A quota refusal (room was made just before) or a statement the platform refused: the event is counted, not kept.
      this.countDropped(turnId, 1);
    }
  }

  /**
   * Remove the turn's oldest trajectory events (details first; never the `omitted` counter) until `bytes` more fit;
   * false, removing nothing, when even all of them would not make enough room.
   */
  private makeRoom(turnId: string, bytes: number): boolean {
    const need = this.quota.shortfall(bytes);
    if (need <= 0) return true;
    const own =
      this.sql.one<{ b: number | null }>(`SELECT SUM(${ROW_BYTES_SQL}) AS b FROM trajectory WHERE turn_id = ? AND kind != 'omitted'`, turnId)?.b ?? 0;
    if (own < need) return false;
    let freed = 0;
    let removed = 0;
    // Nested calls and policy decisions first, then the rest, oldest first: the outer calls and model
    // calls stay longest, with the most recent activity under them. In batches: rows are bounded events.
    while (freed < need) {
      const rows = this.sql.all<{ seq: number; b: number }>(
        `SELECT seq, ${ROW_BYTES_SQL} AS b FROM trajectory WHERE turn_id = ? AND kind != 'omitted'
         ORDER BY CASE WHEN kind IN ('nested', 'policy') THEN 0 ELSE 1 END, seq LIMIT 64`,
        turnId,
      );
      if (rows.length === 0) break;
      for (const r of rows) {
        if (freed >= need) break;
        this.quota.grow(turnId, -r.b, () => this.sql.run("DELETE FROM trajectory WHERE seq = ?", r.seq));
        freed += r.b;
        removed++;
      }
    }
    // Rows went: the turn's event count is read again at its next event.
    if (removed > 0) delete this.sized(turnId).events;
    this.countDropped(turnId, removed);
    return freed >= need;
  }

  /** Events removed or never stored to stay within the session's quota (an integer updated in place on the turn row). */
  private countDropped(turnId: string, n: number): void {
    if (n > 0) this.sql.run("UPDATE turns SET trajectory_dropped = trajectory_dropped + ? WHERE turn_id = ?", n, turnId);
  }

  /** How many of the turn's trajectory events the storage quota removed (oldest first) or kept out. */
  droppedEvents(turnId: string): number {
    if (!this.ready()) return 0;
    return this.sql.one<{ n: number }>("SELECT trajectory_dropped AS n FROM turns WHERE turn_id = ?", turnId)?.n ?? 0;
  }

  events(turnId: string): TrajectoryRow[] {
    if (!this.ready()) return [];
    return this.sql
      .all<{ at: number; kind: string; body: string }>("SELECT at, kind, body FROM trajectory WHERE turn_id = ? ORDER BY seq", turnId)
      .map((r) => ({ at: r.at, kind: r.kind, body: JSON.parse(r.body) as Record<string, unknown> }));
  }

  /** The outer call a nested invocation (e.g. a client call) was started under. */
  parentOf(turnId: string, invocationId: string): string | undefined {
    const row = this.sql.one<{ body: string }>(
      "SELECT body FROM trajectory WHERE turn_id = ? AND kind = 'client_call' AND json_extract(body, '$.invocationId') = ?",
      turnId,
      invocationId,
    );
    return row ? ((JSON.parse(row.body) as { parentCallId?: string }).parentCallId ?? undefined) : undefined;
  }

  /** An outer call started: open until `callEnded` (a reset leaves it open for the next incarnation to close). */
  callStarted(turnId: string, callId: string, tool: string, at: number): void {
    if (this.live(turnId))
      this.sql.run("INSERT OR REPLACE INTO open_calls (turn_id, call_id, tool, started_at) VALUES (?, ?, ?, ?)", turnId, callId, tool, at);
  }

  callEnded(turnId: string, callId: string): void {
    if (this.ready()) this.sql.run("DELETE FROM open_calls WHERE turn_id = ? AND call_id = ?", turnId, callId);
  }

  /** Outer calls started and never ended: at construction, those an earlier incarnation was running. */
  openCalls(): Array<{ turnId: string; callId: string; tool: string; startedAt: number }> {
    if (!this.ready()) return [];
    return this.sql
      .all<{ turn_id: string; call_id: string; tool: string; started_at: number }>("SELECT * FROM open_calls ORDER BY started_at, turn_id, call_id")
      .map((r) => ({ turnId: r.turn_id, callId: r.call_id, tool: r.tool, startedAt: r.started_at }));
  }

  /** /chat turns stored as `running`: at construction, those an earlier incarnation was driving. */
  runningTurns(): string[] {
    if (!this.ready()) return [];
    return this.sql
      .all<{ turn_id: string }>("SELECT turn_id FROM chat_turns WHERE json_extract(state, '$.status') = 'running'")
      .map((r) => r.turn_id);
  }

  /** A parked run whose cell read network-derived content: what it returns later stays untrusted. */
  markUntrusted(turnId: string, runId: string): void {
    if (this.live(turnId)) this.sql.run("INSERT OR IGNORE INTO untrusted_runs (run_id, turn_id) VALUES (?, ?)", runId, turnId);
  }

  isUntrusted(runId: string): boolean {
    return this.ready() && this.sql.one("SELECT 1 AS x FROM untrusted_runs WHERE run_id = ?", runId) !== undefined;
  }

  deleteTurn(turnId: string): void {
    this.sizes.delete(turnId);
    this.sql.run("DELETE FROM open_calls WHERE turn_id = ?", turnId);
    this.sql.run("DELETE FROM untrusted_runs WHERE turn_id = ?", turnId);
    this.sql.run("DELETE FROM chat_turns WHERE turn_id = ?", turnId);
    this.sql.run("DELETE FROM transcript WHERE turn_id = ?", turnId);
    this.sql.run("DELETE FROM trajectory WHERE turn_id = ?", turnId);
  }
}
