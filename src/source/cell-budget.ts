/**
 * One time budget per cell. Seed 002 runs "source validation, TypeScript compilation, and guest
 * execution" in the same bounded workers, where "queued work shares the execution deadline";
 * `timeout` "means an execution deadline was exceeded".
 * Everything a cell causes — the source checks, the TypeScript compiler start, the transform,
 * compiling the cell in QuickJS, and the run — is paid from the same `timeoutMs`.
 *
 * The deadline is taken once from the injected clock when the cell is admitted to its session's
 * queue (`admittedAt`; by default when the budget is made): a cell queued behind another cell of
 * the same session has only what is left of its `timeoutMs` when it starts. The clock alone
 * cannot keep the budget: production Workers freeze `Date.now()` during synchronous code
 * (EDGE-NOTES.md), and every phase before the VM is synchronous and cannot be interrupted. So
 * each phase also has a size-based cost estimate (COSTS below):
 *   - before a phase starts, its estimate must fit in what remains, or the cell is refused there
 *     (`timeout`, naming the phase) without doing the work;
 *   - after it, the phase is charged the larger of the estimate and what the clock saw.
 * Work the clock did not see is remembered (`unseenMs`) and taken off both the clock deadline
 * and the tick budget handed to the VM's interrupt guard.
 */
import type { Clock } from "../runtime";

export type BudgetPhase = "source checks" | "TypeScript compiler start" | "TypeScript transform" | "guest compile";

/**
 * Calibration: milliseconds of host CPU per KiB of source (UTF-16 code units / 1024), measured
 * 2026-11-30 on this project's machine kind (2 shared AMD EPYC cores) inside local workerd (the
 * Workers vitest integration, whose clock moves), cold and warm, on the worst inputs found for
 * each phase; the constants are those maxima rounded up by about a quarter:
 *   - source checks (tokenizer, brackets, declarations, shell and module checks): 0.1–0.3 for
 *     ordinary code and a megabyte of `;`, 0.64 at worst (a megabyte of `{`, cold) → 0.8.
 *   - TypeScript transform (`transpileModule`): 1.5–2.5 for ordinary code, 2–3.5 with a
 *     diagnostic on every line (`a b;` repeated), 5.06 at worst (`x = y + z;` repeated) → 6.
 *   - TypeScript compiler start: ~390 ms in workerd (525 ms in Node here), once per isolate → 450.
 *   - TypeScript stripper start (sucrase, the fast path of typescript-strip.ts): charged to the
 *     transform of the first cell that takes the fast path, once per isolate → STRIPPER_START.
 *     The fast path's transform itself is charged the compiler's per-KiB ceiling (it is faster).
 *   - guest compile (QuickJS parsing the cell, one uninterruptible engine call): 0.03–0.2, 0.29
 *     at worst (`x = y + z;` repeated) → 0.35. Estimated from the cell's own length for
 *     TypeScript too: the transform's output has about as many tokens as its input.
 * The estimates are ceilings: a cell that would fit at ordinary speed but not at the worst
 * measured speed is refused — the price of never overrunning on a frozen clock. The platform's
 * `limits.cpu_ms` stays the hard stop behind them.
 */
export const COSTS = {
  checksMsPerKiB: 0.8,
  checksBaseMs: 0.1,
  transpileMsPerKiB: 6,
  transpileBaseMs: 1,
  compilerStartMs: 450,
  stripperStartMs: 60,
  guestCompileMsPerKiB: 0.35,
} as const;

/** One phase of a cell's plan: what it is, its estimate, and what it works on (for messages). */
export type PlannedPhase = { phase: BudgetPhase; estimateMs: number; detail: string };

const PHASE_TEXT: Record<BudgetPhase, string> = {
  "source checks": "the source checks",
  "TypeScript compiler start": "the TypeScript compiler start",
  "TypeScript transform": "the TypeScript transform",
  "guest compile": "compiling the cell",
};

const ADVICE: Record<BudgetPhase, string> = {
  "source checks": "Send less code per cell.",
  "TypeScript compiler start":
    "The compiler starts once per isolate; write this cell in JavaScript (plain JavaScript needs no compiler) or use a larger timeoutMs.",
  "TypeScript transform": "Send less code per cell, or write it in JavaScript (no transform needed).",
  "guest compile": "Send less code per cell.",
};

export type BudgetResult<T> = { ok: true; value: T } | { ok: false; message: string };

export class CellBudget {
  /** `admittedAt + timeoutMs`; never recomputed. */
  readonly deadline: number;
  /** Time spent queued behind other cells of the session before this budget was made. */
  readonly queuedMs: number;
  /** Work charged beyond what the clock saw (all of it on a frozen clock). */
  private unseenMs = 0;

  constructor(
    private readonly clock: Clock,
    readonly timeoutMs: number,
    admittedAt: number = clock.now(),
  ) {
    const now = clock.now();
    this.queuedMs = Math.max(0, now - admittedAt);
    this.deadline = Math.min(now, admittedAt) + timeoutMs;
  }

  /** Whether the deadline passed while the cell was queued: it must not start at all. */
  expiredInQueue(): boolean {
    return this.queuedMs > 0 && this.remainingMs() <= 0;
  }

  /** Milliseconds left: the clock's view less the work it could not see. */
  remainingMs(): number {
    return this.deadline - this.unseenMs - this.clock.now();
  }

  /** The clock deadline for the VM's interrupt guard: the cell's deadline less unseen work. */
  guestDeadline(): number {
    return this.deadline - this.unseenMs;
  }

  /**
   * The milliseconds the guard's tick budget stands for (its measure on a frozen clock):
   * `timeoutMs` less the time spent queued and the work the clock did not see. The cell's own
   * work the clock did see is already off `guestDeadline()`; taking it off the ticks too would
   * charge it twice where the clock moves, and on a frozen clock (production) there is none.
   * Queued time is not this cell's work: it only shrinks what is left of the shared deadline.
   */
  guestBudgetMs(): number {
    return this.timeoutMs - this.queuedMs - this.unseenMs;
  }

  /** A refusal message if `estimateMs` of `phase` cannot fit in what remains, else undefined. */
  admit(phase: BudgetPhase, estimateMs: number, detail: string): string | undefined {
    const remaining = this.remainingMs();
    if (estimateMs < remaining) return undefined;
    return (
      `${capitalized(PHASE_TEXT[phase])} exceeded timeoutMs (${this.timeoutMs}): ${detail} needs about ` +
      `${Math.ceil(estimateMs)} ms and ${Math.max(0, Math.floor(remaining))} ms were left, so the cell was not run. ${ADVICE[phase]}`
    );
  }

  /**
   * Refuses a whole plan up front when its estimates together do not fit, naming its most
   * expensive phase: no work is done for a cell that cannot finish.
   */
  admitPlan(plan: readonly PlannedPhase[]): string | undefined {
    const total = plan.reduce((sum, p) => sum + p.estimateMs, 0);
    const remaining = this.remainingMs();
    if (total < remaining || plan.length === 0) return undefined;
    const largest = plan.reduce((a, b) => (b.estimateMs > a.estimateMs ? b : a));
    const whole = plan.length > 1 ? ` (about ${Math.ceil(total)} ms for the whole cell)` : "";
    return (
      `${capitalized(PHASE_TEXT[largest.phase])} exceeded timeoutMs (${this.timeoutMs}): ${largest.detail} needs about ` +
      `${Math.ceil(largest.estimateMs)} ms${whole} and ${Math.max(0, Math.floor(remaining))} ms were left, so the cell was not run. ${ADVICE[largest.phase]}`
    );
  }

  /**
   * Runs `work` as `phase`: refused up front when its estimate does not fit, then charged the
   * larger of the estimate and the clock's measure. Over budget afterwards (a clock that moved
   * more than estimated) is a refusal too: nothing after this phase runs.
   */
  async run<T>(phase: BudgetPhase, estimateMs: number, detail: string, work: () => T | Promise<T>): Promise<BudgetResult<T>> {
    const refused = this.admit(phase, estimateMs, detail);
    if (refused) return { ok: false, message: refused };
    const started = this.clock.now();
    const value = await work();
    const seen = this.clock.now() - started;
    this.unseenMs += Math.max(0, estimateMs - seen);
    if (this.remainingMs() <= 0) {
      return {
        ok: false,
        message:
          `${capitalized(PHASE_TEXT[phase])} exceeded timeoutMs (${this.timeoutMs}): ${detail} took about ` +
          `${Math.ceil(Math.max(seen, estimateMs))} ms, so the cell was not run. ${ADVICE[phase]}`,
      };
    }
    return { ok: true, value };
  }

  /** Charges work done later where no clock can see it (QuickJS compiling the cell). */
  charge(phase: BudgetPhase, estimateMs: number, detail: string): string | undefined {
    const refused = this.admit(phase, estimateMs, detail);
    if (refused) return refused;
    this.unseenMs += estimateMs;
    return undefined;
  }
}

/** Human size of a source: "930 KiB of TypeScript". */
export function describeSource(length: number, language: string): string {
  const size = length >= 1024 ? `${Math.round(length / 1024)} KiB` : `${length} characters`;
  return `${size} of ${language}`;
}

export function estimateChecksMs(length: number): number {
  return COSTS.checksBaseMs + (length / 1024) * COSTS.checksMsPerKiB;
}

export function estimateTranspileMs(length: number): number {
  return COSTS.transpileBaseMs + (length / 1024) * COSTS.transpileMsPerKiB;
}

export function estimateGuestCompileMs(length: number): number {
  return (length / 1024) * COSTS.guestCompileMsPerKiB;
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
