/**
 * The one source of time for cells, deadlines and TTLs. Production Workers freeze
 * `Date.now()` during synchronous execution, so nothing may rely on the clock alone
 * to stop guest code; tests inject a frozen clock to prove the CPU budget still holds.
 */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock that never moves (what production looks like during a synchronous guest loop). */
export function frozenClock(at = Date.now()): Clock {
  return { now: () => at };
}

/** A clock the test moves by hand. */
export function manualClock(at = Date.now()): Clock & { advance(ms: number): void; set(ms: number): void } {
  let t = at;
  return {
    now: () => t,
    advance(ms: number) {
      t += ms;
    },
    set(ms: number) {
      t = ms;
    },
  };
}
