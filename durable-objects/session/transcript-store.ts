import type { ChatState, TrajectoryRow } from "../../src/agent";
import { MAX_TRAJECTORY_EVENTS, MAX_TRANSCRIPT_BYTES } from "../../src/limits";
import type { ModelMessage } from "../../src/providers";
import type { Sql } from "../sql";

const utf8 = new TextEncoder();

/** A trajectory row's own columns (turn id, time, sequence), counted with its kind and body. */
const ROW_OVERHEAD = 64;

/** Trajectory slots kept for the turn's own lifecycle once nested activity has filled the rest. */
const NESTED_RESERVE = 200;

/**
 * A turn's agent record in the session's SQLite: its /chat state, its transcript (the messages
 * provider replay is built from, `exec` source already redacted), and its trajectory events
 * (outer calls, nested activity, model calls, snapshot lifecycle, limits). Bounded per turn:
 * the transcript by MAX_TRANSCRIPT_BYTES (the loop stops once it is full), the trajectory by
 * MAX_TRAJECTORY_EVENTS (later events are counted, not stored). Transcript and trajectory bytes
 * count against the session's storage quota with the turn row (`turns.stored_bytes`): a session
 * whose turns recorded much refuses new turns sooner. Everything goes with the turn.
 */
export class TranscriptStore {
  constructor(
    private readonly sql: Sql,
    private readonly ready: () => boolean,
  ) {}

  state(turnId: string): ChatState | undefined {
    if (!this.ready()) return undefined;
    const row = this.sql.one<{ state: string }>("SELECT state FROM chat_turns WHERE turn_id = ?", turnId);
    return row ? (JSON.parse(row.state) as ChatState) : undefined;
  }

  /** Writes only for a turn that still exists: a loop whose turn (or session) was deleted leaves nothing behind. */
  private live(turnId: string): boolean {
    return this.ready() && this.sql.one("SELECT 1 AS x FROM turns WHERE turn_id = ?", turnId) !== undefined;
  }

  saveState(turnId: string, state: ChatState): void {
    if (!this.live(turnId)) return;
    this.sql.run("INSERT OR REPLACE INTO chat_turns (turn_id, state) VALUES (?, ?)", turnId, JSON.stringify(state));
  }

  /** Store one message; false once the turn's transcript is over its bound (the message is still kept: replay stays valid). */
  append(turnId: string, message: ModelMessage): boolean {
    if (!this.live(turnId)) return false;
    const text = JSON.stringify(message);
    const bytes = utf8.encode(text).length;
    this.sql.run("INSERT INTO transcript (turn_id, message, bytes) VALUES (?, ?, ?)", turnId, text, bytes);
    this.charge(turnId, bytes);
    return this.transcriptBytes(turnId) <= MAX_TRANSCRIPT_BYTES;
  }

  /** Count `bytes` more against the session's quota, on the turn's row (freed with the turn). */
  private charge(turnId: string, bytes: number): void {
    this.sql.run("UPDATE turns SET stored_bytes = stored_bytes + ? WHERE turn_id = ?", bytes, turnId);
  }

  transcriptBytes(turnId: string): number {
    return this.sql.one<{ b: number | null }>("SELECT SUM(bytes) AS b FROM transcript WHERE turn_id = ?", turnId)?.b ?? 0;
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
   */
  event(turnId: string, at: number, kind: string, body: Record<string, unknown>): void {
    if (!this.live(turnId)) return;
    const n = this.sql.one<{ n: number }>("SELECT COUNT(*) AS n FROM trajectory WHERE turn_id = ?", turnId)?.n ?? 0;
    const room = (kind === "nested" || kind === "policy" ? MAX_TRAJECTORY_EVENTS - NESTED_RESERVE : MAX_TRAJECTORY_EVENTS) - 1;
    if (n < room) {
      const text = JSON.stringify(body);
      this.sql.run("INSERT INTO trajectory (turn_id, at, kind, body) VALUES (?, ?, ?, ?)", turnId, at, kind, text);
      this.charge(turnId, ROW_OVERHEAD + kind.length + utf8.encode(text).length);
      return;
    }
    const omitted = this.sql.one<{ seq: number; body: string }>("SELECT seq, body FROM trajectory WHERE turn_id = ? AND kind = 'omitted'", turnId);
    if (omitted) {
      const count = (JSON.parse(omitted.body) as { count: number }).count + 1;
      this.sql.run("UPDATE trajectory SET body = ? WHERE seq = ?", JSON.stringify({ count }), omitted.seq);
    } else {
      // The bound's last slot (see `room`): the table never holds more than MAX_TRAJECTORY_EVENTS rows.
      // Charged once at the size of a large count: the counter grows in place.
      this.sql.run("INSERT INTO trajectory (turn_id, at, kind, body) VALUES (?, ?, 'omitted', ?)", turnId, at, JSON.stringify({ count: 1 }));
      this.charge(turnId, ROW_OVERHEAD + "omitted".length + JSON.stringify({ count: Number.MAX_SAFE_INTEGER }).length);
    }
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
      .all<{ turn_id: string; call_id: string; tool: string; started_at: number }>("SELECT * FROM open_calls ORDER BY started_at")
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
    this.sql.run("DELETE FROM open_calls WHERE turn_id = ?", turnId);
    this.sql.run("DELETE FROM untrusted_runs WHERE turn_id = ?", turnId);
    this.sql.run("DELETE FROM chat_turns WHERE turn_id = ?", turnId);
    this.sql.run("DELETE FROM transcript WHERE turn_id = ?", turnId);
    this.sql.run("DELETE FROM trajectory WHERE turn_id = ?", turnId);
  }
}
