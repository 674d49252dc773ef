import type { SessionLimits } from "../../src/config";
import type { Sql } from "../sql";
import type { ExpiryPort } from "../../src/session";

export type ExpiryDeps = {
  sql: Sql;
  now(): number;
  limits(): SessionLimits;
};

/**
 * Activity is written at most once per this interval (a write holds the reply until it is
 * durable), so a deadline is `last written activity + idle + slack`: never earlier than promised,
 * at most `slack` later. Capped at a tenth of the idle time for short idle settings.
 */
export function activitySlackMs(idleSeconds: number): number {
  return Math.min(60_000, Math.floor((idleSeconds * 1000) / 10));
}

/** Turns whose last activity is kept in memory (the turns a session drives at once are few). */
const ACTIVE_LIMIT = 64;

/**
 * Idle expiry of turns and of the whole session (the session object's alarm acts on it).
 *
 * - A turn is due `turnIdleSeconds` after its last call, or when its last parked run expires,
 *   whichever is later: a parked run that is still valid keeps its turn.
 * - The session is due `sessionIdleSeconds` after its last activity (any call on any turn, or
 *   opening one), or when its last parked run expires, whichever is later.
 *
 * Times come from the object's injected clock; activity rows are `turns.last_active_at` and
 * `session_meta.last_active_at`.
 */
export class SessionExpiry implements ExpiryPort {
  /**
   * Activity as last written, per turn and for the session: this object is the only writer of
   * both, so a touch within the slack costs no statement. Read from SQL once (a miss, or after
   * `init`); a turn's entry is seeded when it opens.
   */
  private readonly turnActive = new Map<string, number>();
  private sessionActive: number | undefined;

  constructor(private readonly deps: ExpiryDeps) {}

  /** Called once the schema exists: a session from before activity was tracked starts now. */
  init(): void {
    this.turnActive.clear();
    this.sessionActive = undefined;
    this.deps.sql.run("INSERT OR IGNORE INTO session_meta (key, value) VALUES ('last_active_at', ?)", String(this.deps.now()));
  }

  /** A turn was stored with `at` as its activity (its row's `last_active_at`). */
  opened(turnId: string, at: number): void {
    this.remember(turnId, at);
  }

  /** A transaction rolled back activity this object wrote: read it from SQL again. */
  forget(): void {
    this.turnActive.clear();
    this.sessionActive = undefined;
  }

  /** A turn is gone: a later touch reads (and finds) nothing. */
  forgetTurn(turnId: string): void {
    this.turnActive.delete(turnId);
  }

  private remember(turnId: string, at: number): void {
    if (!this.turnActive.has(turnId) && this.turnActive.size >= ACTIVE_LIMIT) this.turnActive.delete(this.turnActive.keys().next().value!);
    this.turnActive.set(turnId, at);
  }

  private turnLastActive(turnId: string): number | undefined {
    const known = this.turnActive.get(turnId);
    if (known !== undefined) return known;
    const t = this.deps.sql.one<{ t: number }>("SELECT last_active_at AS t FROM turns WHERE turn_id = ?", turnId)?.t;
    if (t !== undefined) this.remember(turnId, t);
    return t;
  }

  /** Record activity on the session (and on `turnId`). True when something was written. */
  touch(turnId?: string): boolean {
    const { sql } = this.deps;
    const now = this.deps.now();
    const limits = this.deps.limits();
    let wrote = false;
    if (turnId !== undefined) {
      const last = this.turnLastActive(turnId);
      if (last !== undefined && now - last >= activitySlackMs(limits.turnIdleSeconds)) {
        sql.run("UPDATE turns SET last_active_at = ? WHERE turn_id = ?", now, turnId);
        this.remember(turnId, now);
        wrote = true;
      }
    }
    if (now - this.sessionLastActive() >= activitySlackMs(limits.sessionIdleSeconds)) {
      sql.run(
        "INSERT INTO session_meta (key, value) VALUES ('last_active_at', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        String(now),
      );
      this.sessionActive = now;
      wrote = true;
    }
    return wrote;
  }

  /** Turns whose idle deadline has passed. */
  dueTurns(): string[] {
    return this.deps.sql
      .all<{ turn_id: string }>(`SELECT turn_id FROM (${this.turnDeadlines()}) WHERE deadline <= ?`, this.turnIdleMs(), this.deps.now())
      .map((r) => r.turn_id);
  }

  sessionDue(): boolean {
    return this.sessionDeadline() <= this.deps.now();
  }

  /** The earliest idle deadline (a turn's or the session's). */
  nextDeadline(): number {
    const turn = this.deps.sql.one<{ t: number | null }>(`SELECT MIN(deadline) AS t FROM (${this.turnDeadlines()})`, this.turnIdleMs())?.t;
    const session = this.sessionDeadline();
    return turn === null || turn === undefined ? session : Math.min(turn, session);
  }

  private sessionDeadline(): number {
    const idle = this.deps.limits().sessionIdleSeconds;
    const runs = this.deps.sql.one<{ t: number | null }>("SELECT MAX(expires_at) AS t FROM runs")?.t ?? 0;
    return Math.max(this.sessionLastActive() + idle * 1000 + activitySlackMs(idle), runs);
  }

  private sessionLastActive(): number {
    this.sessionActive ??= Number(this.deps.sql.one<{ value: string }>("SELECT value FROM session_meta WHERE key = 'last_active_at'")?.value ?? 0);
    return this.sessionActive;
  }

  private turnIdleMs(): number {
    const idle = this.deps.limits().turnIdleSeconds;
    return idle * 1000 + activitySlackMs(idle);
  }

  /** One row per turn: its deadline (bound parameter: idle ms including slack). */
  private turnDeadlines(): string {
    return `SELECT t.turn_id, MAX(t.last_active_at + ?, COALESCE((SELECT MAX(r.expires_at) FROM runs r WHERE r.turn_id = t.turn_id), 0)) AS deadline FROM turns t`;
  }
}
