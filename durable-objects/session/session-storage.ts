import { newSessionTag } from "../../src/runs";
import type { Sql } from "../sql";
import type { AlarmSchedule } from "./alarm-schedule";
import { applySchema } from "./schema";
import type { SessionStoragePort } from "../../src/session";

/**
 * Whether this session has stored anything, and the end of it.
 *
 * The schema is created by the first write (opening a turn), not by constructing the object: a
 * request naming an unknown session id leaves no database behind. `wipe()` deletes everything the
 * session stored (tables, tool KV data, the alarm), so the Durable Object's database goes away;
 * the next turn starts a new, empty session under the same id.
 */
export class SessionStorage implements SessionStoragePort {
  private isReady: boolean;
  /** Kept across a wipe for this instance's life, so a run id of the deleted session reads as expired. */
  private tag: string | undefined;

  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly sql: Sql,
    private readonly alarm: AlarmSchedule,
    /** Called once the schema exists (at construction, or by `ensure`): per-concept meta rows. */
    private readonly onReady: () => void,
  ) {
    this.isReady = sql.one("SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'") !== undefined;
    if (this.isReady) this.init();
    // Alarms are armed only once tables exist, and a wipe deletes them with the tables.
    else alarm.assumeNone();
  }

  /** True once the session stored something (and until it is wiped). */
  get ready(): boolean {
    return this.isReady;
  }

  /** Create the schema before the session's first write. */
  ensure(): void {
    if (this.isReady) return;
    this.isReady = true;
    this.init();
  }

  /** The random per-session tag carried in run ids (only asked for once the session has a turn). */
  runTag(): string {
    if (this.tag === undefined) this.tag = newSessionTag();
    return this.tag;
  }

  /** Delete everything this session stored, the alarm included. The caller cancelled active work first. */
  async wipe(): Promise<void> {
    this.isReady = false;
    // Both issued at once; input gates hold other events until storage operations complete.
    await Promise.all([this.alarm.clear(), this.storage.deleteAll()]);
  }

  private init(): void {
    applySchema(this.sql);
    const stored = this.sql.one<{ value: string }>("SELECT value FROM session_meta WHERE key = 'run_tag'")?.value;
    if (stored !== undefined) this.tag = stored;
    else this.sql.run("INSERT INTO session_meta (key, value) VALUES ('run_tag', ?)", this.runTag());
    this.onReady();
  }
}
