import type { ChatState, TrajectoryRow } from "../../src/agent";
import { MAX_TRAJECTORY_EVENTS, MAX_TRANSCRIPT_BYTES } from "../../src/limits";
import type { ModelMessage } from "../../src/providers";
import type { Sql } from "./sql";

const utf8 = new TextEncoder();

/**
 * A turn's agent record in the session's SQLite: its /chat state, its transcript (the messages
 * provider replay is built from, `exec` source already redacted), and its trajectory events
 * (outer calls, nested activity, model calls, snapshot lifecycle, limits). Bounded per turn:
 * the transcript by MAX_TRANSCRIPT_BYTES (the loop stops once it is full), the trajectory by
 * MAX_TRAJECTORY_EVENTS (later events are counted, not stored). Transcript bytes count against
 * the session's storage quota with the turn row; everything goes with the turn.
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

  saveState(turnId: string, state: ChatState): void {
    this.sql.run("INSERT OR REPLACE INTO chat_turns (turn_id, state) VALUES (?, ?)", turnId, JSON.stringify(state));
  }

  /** Store one message; false once the turn's transcript is over its bound (the message is still kept: replay stays valid). */
  append(turnId: string, message: ModelMessage): boolean {
    const text = JSON.stringify(message);
    const bytes = utf8.encode(text).length;
    this.sql.run("INSERT INTO transcript (turn_id, message, bytes) VALUES (?, ?, ?)", turnId, text, bytes);
    this.sql.run("UPDATE turns SET stored_bytes = stored_bytes + ? WHERE turn_id = ?", bytes, turnId);
    return this.transcriptBytes(turnId) <= MAX_TRANSCRIPT_BYTES;
  }

  transcriptBytes(turnId: string): number {
    return this.sql.one<{ b: number | null }>("SELECT SUM(bytes) AS b FROM transcript WHERE turn_id = ?", turnId)?.b ?? 0;
  }

  messages(turnId: string): ModelMessage[] {
    return this.sql
      .all<{ message: string }>("SELECT message FROM transcript WHERE turn_id = ? ORDER BY seq", turnId)
      .map((r) => JSON.parse(r.message) as ModelMessage);
  }

  /** One trajectory event; past the bound only counted. */
  event(turnId: string, at: number, kind: string, body: Record<string, unknown>): void {
    if (!this.ready()) return;
    const n = this.sql.one<{ n: number }>("SELECT COUNT(*) AS n FROM trajectory WHERE turn_id = ?", turnId)?.n ?? 0;
    if (n < MAX_TRAJECTORY_EVENTS) {
      this.sql.run("INSERT INTO trajectory (turn_id, at, kind, body) VALUES (?, ?, ?, ?)", turnId, at, kind, JSON.stringify(body));
      return;
    }
    const omitted = this.sql.one<{ seq: number; body: string }>("SELECT seq, body FROM trajectory WHERE turn_id = ? AND kind = 'omitted'", turnId);
    if (omitted) {
      const count = (JSON.parse(omitted.body) as { count: number }).count + 1;
      this.sql.run("UPDATE trajectory SET body = ? WHERE seq = ?", JSON.stringify({ count }), omitted.seq);
    } else {
      // Replaces the bound's last slot, so the table never holds more than MAX_TRAJECTORY_EVENTS rows.
      this.sql.run("INSERT INTO trajectory (turn_id, at, kind, body) VALUES (?, ?, 'omitted', ?)", turnId, at, JSON.stringify({ count: 1 }));
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

  deleteTurn(turnId: string): void {
    this.sql.run("DELETE FROM chat_turns WHERE turn_id = ?", turnId);
    this.sql.run("DELETE FROM transcript WHERE turn_id = ?", turnId);
    this.sql.run("DELETE FROM trajectory WHERE turn_id = ?", turnId);
  }
}
