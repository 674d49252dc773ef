/**
 * The session object's one alarm: of the deadlines asked for, the earliest is kept.
 *
 * The alarm's time is read from storage once per incarnation, then followed in memory (this
 * object is its only writer): arming it on the request path reads nothing, where it used to read
 * the stored time before every write (for a new session, every sub-agent's, one more storage
 * round trip before its first model call).
 */
export class AlarmSchedule {
  /** The alarm as last read or written: a time, null for none, undefined when not known (read it first). */
  private known: number | null | undefined;
  /** Writes in the order asked, so a later request never overwrites an earlier alarm. */
  private writes: Promise<void> = Promise.resolve();
  /** Moves on each `clear`: what was asked before it is not written after it. */
  private generation = 0;
  /** Moves on each `clear` and `fired`: a time read or written across one is not kept. */
  private epoch = 0;

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
      let current = this.known;
      if (current === undefined) {
        const epoch = this.epoch;
        current = await this.storage.getAlarm();
        if (generation !== this.generation) return;
        // It fired while being read: what was read may be gone, so write.
        if (epoch === this.epoch) this.known = current;
        else current = null;
      }
      if (current !== null && current <= at) return;
      // Not known until the write is: a refused write leaves the time to be read again.
      this.known = undefined;
      const epoch = this.epoch;
      await this.storage.setAlarm(at);
      if (epoch === this.epoch) this.known = at;
    });
    // The chain only orders writes; each caller sees its own failure.
    this.writes = next.catch(() => undefined);
    return next;
  }

  /** The alarm fired: the platform cleared it, or keeps it for a retry if the handler fails. Read it again. */
  fired(): void {
    this.epoch++;
    this.known = undefined;
  }

  /**
   * Delete the alarm now (the session is wiped: the call comes before the storage's `deleteAll`,
   * which then leaves no table behind). Arms still queued from before are dropped, and one in
   * flight keeps nothing of what it read or wrote.
   */
  clear(): Promise<void> {
    this.generation++;
    this.epoch++;
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
