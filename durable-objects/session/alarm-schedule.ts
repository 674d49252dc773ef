/**
 * The session object's one alarm: of the deadlines asked for, the earliest is kept.
 *
 * The alarm's time is read from storage once per incarnation, then followed in memory (this
 * object is its only writer). Arming it on the request path then reads nothing: a storage read
 * there yields to the event loop, so the request's writes were committed on their own and the
 * alarm's write in a second commit, which the answer (or the model call) waited for as well.
 * Now the alarm's write joins the request's commit.
 */
export class AlarmSchedule {
  /** The alarm as last read or written: a time, null for none, undefined when not known (read it first). */
  private known: number | null | undefined;
  /** Writes in the order asked, so a later request never overwrites an earlier alarm. */
  private writes: Promise<void> = Promise.resolve();
  /** Moves on each `clear`: what was asked before it is not written after it. */
  private generation = 0;

  constructor(private readonly storage: Pick<DurableObjectStorage, "getAlarm" | "setAlarm" | "deleteAlarm">) {}

  /** The session has stored nothing (no table yet, or wiped): it has no alarm either. */
  assumeNone(): void {
    this.known = null;
  }

  /** Keep `at` if it is earlier than the alarm set (or none is). Rejects when the storage refused the write. */
  arm(at: number): Promise<void> {
    const generation = this.generation;
    const next = this.writes.then(async () => {
      if (generation !== this.generation) return;
      if (this.known === undefined) this.known = await this.storage.getAlarm();
      if (generation !== this.generation) return;
      if (this.known !== null && this.known <= at) return;
      // Not known until the write is: a refused write leaves the time to be read again.
      this.known = undefined;
      await this.storage.setAlarm(at);
      this.known = at;
    });
    // The chain only orders writes; each caller sees its own failure.
    this.writes = next.catch(() => undefined);
    return next;
  }

  /** The alarm fired: the platform cleared it, or keeps it for a retry if the handler fails. Read it again. */
  fired(): void {
    this.known = undefined;
  }

  /**
   * Delete the alarm now (the session is wiped: the call comes before the storage's `deleteAll`,
   * which then leaves no table behind). Arms still queued from before are dropped.
   */
  clear(): Promise<void> {
    this.generation++;
    this.known = null;
    const deleted = this.storage.deleteAlarm().catch((error: unknown) => {
      this.known = undefined;
      throw error;
    });
    this.writes = this.writes.then(() => deleted).catch(() => undefined);
    return deleted;
  }

  /** Resolves once every write asked for so far is done (failed ones included). */
  settled(): Promise<void> {
    return this.writes;
  }
}
