import type { Clock } from "./clock";
import { WORK_UNITS_PER_TICK } from "./work-meter";

/**
 * The cell's execution budget, derived from `timeoutMs` alone.
 *
 * Production Workers freeze the clock during synchronous code, so time cannot stop a guest
 * loop there: the budget counts work instead. QuickJS calls the interrupt handler once per
 * ~10k bytecode back-edges and calls (a "tick"); host work done for the guest (bridge bytes,
 * deliveries, metered native built-ins: see work-meter.ts) is charged in ticks too. The
 * budget is `timeoutMs × TICKS_PER_TIMEOUT_MS` ticks, calibrated so that a plain counting
 * loop runs about `timeoutMs` (a tick ≈ 330 µs; measured per loop kind in BENCHMARKS.md:
 * an empty loop ticks ~4× faster, allocation-heavy loops up to ~10× slower). Where the clock
 * moves (locally; across host I/O) the deadline trips first for slow-tick code. The
 * platform's CPU limit (`limits.cpu_ms` in wrangler.toml) is the backstop for what neither
 * sees (BigInt operators), and the gateway recovers from it (see README).
 */
export const TICKS_PER_TIMEOUT_MS = 3;

/** Bridge bytes worth one tick: a 10 s budget moves at most ~30 MB through the host. */
export const BRIDGE_BYTES_PER_TICK = 1024;

/** Bridge results delivered into the guest worth one tick (a delivery, its job drain and status read). */
export const SETTLES_PER_TICK = 1;

/** Which limit stopped the cell: its wall-clock deadline, or its counted work. */
export type BudgetTrip = "deadline" | "cpu_budget";

export class InterruptGuard {
  private ticks = 0;
  private tripped: BudgetTrip | null = null;
  readonly maxTicks: number;

  constructor(
    private readonly clock: Clock,
    private deadline: number,
    timeoutMs: number,
  ) {
    this.maxTicks = Math.max(1, Math.floor(timeoutMs * TICKS_PER_TIMEOUT_MS));
  }

  /** Handler given to QuickJS; must stay cheap. */
  readonly handler = (): boolean => {
    if (this.tripped) return true;
    this.ticks++;
    if (this.ticks > this.maxTicks) this.tripped = "cpu_budget";
    else if (this.clock.now() >= this.deadline) this.tripped = "deadline";
    return this.tripped !== null;
  };

  /**
   * Host work done for the guest, in ticks (fractions accumulate). A tick is cheap for the
   * guest but one host call may copy megabytes or one native call scan a billion elements,
   * so such work spends the budget as fast as its cost grows.
   */
  private spend(ticks: number): void {
    this.ticks += ticks;
    if (this.ticks > this.maxTicks) this.tripped ??= "cpu_budget";
  }

  /** Bytes copied across the bridge. */
  charge(bytes: number): void {
    this.spend(bytes / BRIDGE_BYTES_PER_TICK);
  }

  /** Results delivered into the guest. */
  chargeSettles(count: number): void {
    this.spend(count / SETTLES_PER_TICK);
  }

  /** Native built-in work announced by the guest's work meter, before it runs. */
  chargeWork(units: number): void {
    // NaN or negative never refunds; Infinity is simply unaffordable.
    if (units > 0) this.spend(units / WORK_UNITS_PER_TICK);
  }

  get reason(): BudgetTrip | null {
    return this.tripped;
  }

  get ticksUsed(): number {
    return this.ticks;
  }

  /** The deadline moves later by `ms` (time the cell spent waiting for an operator's approval). */
  extend(ms: number): void {
    if (ms > 0) this.deadline += ms;
  }

  /** Force every further guest step to stop (abort, teardown). */
  trip(reason: BudgetTrip = "deadline"): void {
    this.tripped ??= reason;
  }
}
