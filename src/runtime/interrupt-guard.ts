import type { Clock } from "./clock";

/**
 * QuickJS calls the interrupt handler every few thousand bytecode steps (~12k/s for
 * `while(true){}`, ~1.7k/s for arithmetic loops, far less inside long built-ins; see
 * EDGE-NOTES.md). In production the clock is frozen during synchronous execution, so a
 * call-count budget is the guard that always fires; the clock deadline catches slow-tick
 * code where the clock moves. Whichever trips first stops the guest; `memoryLimit` bounds
 * built-ins and the platform's `limits.cpu_ms` is the last resort.
 */
export const INTERRUPT_TICKS_PER_TIMEOUT_MS = 3;

/**
 * Ceiling on the tick budget whatever `timeoutMs` says: at the slowest measured tick rate
 * (~1.7k/s for arithmetic loops) 40k ticks is ~24 s of synchronous guest CPU, inside the
 * platform's default 30 s per-request CPU limit, so a guest loop never gets the object reset.
 */
export const MAX_INTERRUPT_TICKS = 40_000;

/** Bridge bytes worth one tick: the default 30k-tick budget moves at most ~30 MB through the host. */
export const BRIDGE_BYTES_PER_TICK = 1024;

/** Bridge results delivered into the guest worth one tick (a delivery, its job drain and status read cost about a tick). */
export const SETTLES_PER_TICK = 1;

export class InterruptGuard {
  private ticks = 0;
  private bridgeBytes = 0;
  private settles = 0;
  private tripped: "deadline" | "cpu_budget" | null = null;
  private readonly maxTicks: number;

  constructor(
    private readonly clock: Clock,
    private deadline: number,
    timeoutMs: number,
  ) {
    this.maxTicks = Math.max(1, Math.min(MAX_INTERRUPT_TICKS, Math.floor(timeoutMs * INTERRUPT_TICKS_PER_TIMEOUT_MS)));
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
   * Charge host-side work done for the guest (bytes copied across the bridge) to the same
   * budget: a tick is cheap for the guest but one host call may copy megabytes, so a loop of
   * huge text()/json()/tool calls must run out of budget as fast as its host cost grows.
   */
  charge(bytes: number): void {
    this.bridgeBytes += bytes;
    const owed = Math.floor(this.bridgeBytes / BRIDGE_BYTES_PER_TICK);
    if (owed > 0) {
      this.ticks += owed;
      this.bridgeBytes -= owed * BRIDGE_BYTES_PER_TICK;
    }
    if (this.ticks > this.maxTicks) this.tripped ??= "cpu_budget";
  }

  /** Results delivered into the guest (each a host round trip and a job drain). */
  chargeSettles(count: number): void {
    this.settles += count;
    const owed = Math.floor(this.settles / SETTLES_PER_TICK);
    if (owed > 0) {
      this.ticks += owed;
      this.settles -= owed * SETTLES_PER_TICK;
    }
    if (this.ticks > this.maxTicks) this.tripped ??= "cpu_budget";
  }

  get reason(): "deadline" | "cpu_budget" | null {
    return this.tripped;
  }

  get ticksUsed(): number {
    return this.ticks;
  }

  /** Force every further guest step to stop (abort, teardown). */
  trip(reason: "deadline" | "cpu_budget" = "deadline"): void {
    this.tripped ??= reason;
  }
}
