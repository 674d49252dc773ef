import type { Clock } from "../runtime";

/**
 * Time a cell spends waiting for operator decisions (seed 002, "exec": while a native-channel
 * approval is pending the Code Mode execution budget is suspended, and the cell resumes with
 * exactly its unused budget). The cell runner moves its deadline by `pausedMs()` and never parks
 * or times out while `active`.
 */
export class BudgetPause {
  private pending = 0;
  private since = 0;
  private total = 0;
  private idle: Array<() => void> = [];

  constructor(private readonly clock: Clock) {}

  /** A decision starts to be awaited; the returned function ends it (idempotent). */
  begin(): () => void {
    if (this.pending++ === 0) this.since = this.clock.now();
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      if (--this.pending === 0) {
        this.total += this.clock.now() - this.since;
        const waiting = this.idle;
        this.idle = [];
        for (const resolve of waiting) resolve();
      }
    };
  }

  /** Settles once no decision is awaited (at once when none is). */
  whenIdle(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  get active(): boolean {
    return this.pending > 0;
  }

  pausedMs(): number {
    return this.total + (this.pending > 0 ? this.clock.now() - this.since : 0);
  }
}
