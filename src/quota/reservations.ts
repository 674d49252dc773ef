/**
 * Bytes promised to writes that must still happen to leave a record consistent (the tool results
 * that close a /chat round, the state that records how a /chat call ended). Held in memory by the
 * session object: every other write sees the session's room minus what is reserved, so a
 * promised write always fits and nothing needs to be written past the bound. A reset loses the
 * reservations with the writers that held them.
 */
export class Reservations {
  private held = 0;

  /** Bytes reserved now, across holders. */
  get total(): number {
    return this.held;
  }

  /**
   * Reserve `bytes` if `free` (the session's unreserved room before this call) allows; undefined
   * otherwise. The holder spends it with `take` and gives back the rest with `release`.
   */
  reserve(bytes: number, room: number): Reservation | undefined {
    if (bytes < 0 || bytes > room - this.held) return undefined;
    this.held += bytes;
    return new Reservation(this, bytes);
  }

  /** @internal */
  give(bytes: number): void {
    this.held = Math.max(0, this.held - bytes);
  }
}

export class Reservation {
  constructor(
    private readonly pool: Reservations,
    private left: number,
  ) {}

  /** Bytes still reserved by this holder. */
  get remaining(): number {
    return this.left;
  }

  /** Use up to `bytes` of this reservation (the write that was promised happened); returns how much was used. */
  take(bytes: number): number {
    const used = Math.min(Math.max(0, bytes), this.left);
    this.left -= used;
    this.pool.give(used);
    return used;
  }

  /** Give back what was not used. */
  release(): void {
    this.pool.give(this.left);
    this.left = 0;
  }
}
