/**
 * Interleaved rounds: every measure of a section (the subject and its baselines) takes a block
 * of samples in every round (or, `alternate`, one sample at a time in turn), so a burst of background load on the shared machine lands on
 * both sides of a ratio instead of on one. The order of the blocks reverses from one round to
 * the next (A B C, C B A, A B C, …) so no measure always runs first or right after another.
 * Pure orchestration: the steps bring their own timing and checks.
 */
import type { RoundSamples } from "./stats.ts";

/** One measure: `run` takes one verified sample in ms (and throws on a wrong reply). */
export interface Step<Name extends string = string> {
  name: Name;
  /** Samples per round. */
  perRound: number;
  /** Untimed samples before the first round. */
  warmup: number;
  /**
   * Samples taken at the start of each block and not kept: they absorb what the block before left
   * deferred (a cell's VM reset, timers), and a first sample after another measure's block is not back to back.
   */
  lead?: number;
  /**
   * Untimed, after each of the step's blocks: work the step leaves behind in this process (a
   * baseline's garbage) is done here, not inside the next block's samples.
   */
  after?: () => void;
  run: () => Promise<number>;
}

/** Samples of every step, per round, in the order they were taken. */
export type RoundsResult<Name extends string> = Record<Name, RoundSamples>;

export async function runRounds<Name extends string>(
  rounds: number,
  steps: ReadonlyArray<Step<Name>>,
  onRound?: (round: number) => void,
  /**
   * `alternate`: within a round, one sample of each step in turn (A B C A B C …) instead of a block per
   * step, so the samples a difference is taken between (a long task less the task) are seconds apart
   * at most, not a round apart: a machine whose speed drifts over seconds moves both alike.
   * `block`: within a round, the steps take turns in blocks of at most this many samples (each led by
   * its `lead`) until each has its `perRound`: a burst of load that lasts a block lands on both sides
   * of a ratio, not on one, while each block stays back to back.
   * `beforeRound`: run before each round, untimed (say, a fresh turn for the round's calls).
   */
  opts: { alternate?: boolean; block?: number; beforeRound?: (round: number) => Promise<void> } = {},
): Promise<RoundsResult<Name>> {
  for (const step of steps) {
    for (let i = 0; i < step.warmup; i++) await step.run();
    step.after?.();
  }
  const out = Object.fromEntries(steps.map((s) => [s.name, [] as number[][]])) as RoundsResult<Name>;
  for (let r = 0; r < rounds; r++) {
    await opts.beforeRound?.(r);
    const order = r % 2 === 0 ? steps : [...steps].reverse();
    const samples = new Map(order.map((step) => [step.name, [] as number[]]));
    const block = opts.alternate ? 1 : (opts.block ?? Infinity);
    for (let done = false; !done;) {
      done = true;
      for (const step of order) {
        const kept = samples.get(step.name)!;
        const take = Math.min(block, step.perRound - kept.length);
        if (take <= 0) continue;
        if (!opts.alternate) for (let i = 0; i < (step.lead ?? 0); i++) await step.run();
        for (let i = 0; i < take; i++) kept.push(await step.run());
        step.after?.();
        if (kept.length < step.perRound) done = false;
      }
    }
    for (const step of order) out[step.name].push(samples.get(step.name)!);
    onRound?.(r);
  }
  return out;
}
