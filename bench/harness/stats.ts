/**
 * Statistics of the bench harness: quantiles, summaries of samples, and per-round figures
 * (a subject's median against its baseline's median in the same round). Pure: no I/O, no
 * Node APIs, so the unit test in test/unit/bench/harness/stats.test.ts runs it anywhere.
 *
 * Quantiles interpolate linearly between order statistics (the usual "type 7" definition), so
 * the median of an odd number of values is the middle one and the IQR of a few rounds is defined.
 */

/** Location and spread of a set of values: median, quartiles (IQR = q1–q3), p90, extremes. */
export interface Summary {
  n: number;
  median: number;
  q1: number;
  q3: number;
  p90: number;
  min: number;
  max: number;
  mean: number;
}

/** Samples of one measure, one array per round (rounds[r] = the samples taken in round r). */
export type RoundSamples = number[][];

/** The p-quantile (0 ≤ p ≤ 1) of values sorted ascending, interpolated linearly. */
export function quantile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) throw new Error("quantile of no values");
  const at = Math.min(1, Math.max(0, p)) * (sorted.length - 1);
  const lo = Math.floor(at);
  const hi = Math.ceil(at);
  const a = sorted[lo]!;
  const b = sorted[hi]!;
  return a + (b - a) * (at - lo);
}

export function median(values: readonly number[]): number {
  return quantile(
    [...values].sort((a, b) => a - b),
    0.5,
  );
}

export function summarize(values: readonly number[]): Summary {
  if (values.length === 0) throw new Error("summary of no values");
  const s = [...values].sort((a, b) => a - b);
  return {
    n: s.length,
    median: quantile(s, 0.5),
    q1: quantile(s, 0.25),
    q3: quantile(s, 0.75),
    p90: quantile(s, 0.9),
    min: s[0]!,
    max: s[s.length - 1]!,
    mean: s.reduce((a, b) => a + b, 0) / s.length,
  };
}

/** All samples of all rounds together. */
export function pooled(rounds: RoundSamples): Summary {
  return summarize(rounds.flat());
}

/** The median of each round. */
export function roundMedians(rounds: RoundSamples): number[] {
  return rounds.map((r) => median(r));
}

/**
 * `f(median of a in round r, median of b in round r)` for every round both measured; the two
 * must have been taken in the same rounds (same length).
 */
export function perRound(a: RoundSamples, b: RoundSamples, f: (a: number, b: number) => number): number[] {
  if (a.length !== b.length) throw new Error(`per-round figure over ${a.length} and ${b.length} rounds`);
  return a.map((r, i) => f(median(r), median(b[i]!)));
}

/**
 * Time ratio subject / baseline per round (medians of each round), summarized across rounds:
 * below 1 the subject is faster. Both sides measured in the same rounds.
 */
export function roundRatios(subject: RoundSamples, baseline: RoundSamples): Summary {
  return summarize(perRound(subject, baseline, (s, b) => s / b));
}

/** Ratio of each round's p90s (subject / baseline), summarized across rounds: the tail's ratio. */
export function roundP90Ratios(subject: RoundSamples, baseline: RoundSamples): Summary {
  if (subject.length !== baseline.length) throw new Error(`per-round figure over ${subject.length} and ${baseline.length} rounds`);
  const p90 = (r: number[]) =>
    quantile(
      [...r].sort((a, b) => a - b),
      0.9,
    );
  return summarize(subject.map((r, i) => p90(r) / p90(baseline[i]!)));
}

/** As roundRatios, or null when the baseline's median is 0 in some round (below the clock's resolution). */
export function roundRatiosIfDefined(subject: RoundSamples, baseline: RoundSamples): Summary | null {
  return roundMedians(baseline).some((b) => b <= 0) ? null : roundRatios(subject, baseline);
}

/** Difference subject − floor per round (medians of each round), summarized across rounds. */
export function roundDifferences(subject: RoundSamples, floor: RoundSamples): Summary {
  return summarize(perRound(subject, floor, (s, f) => s - f));
}

/**
 * The summary of 1/x for a summary of positive x: quantiles of a decreasing function swap ends.
 * Exact for the order statistics (min, max, and the median of an odd count); interpolated
 * quantiles map to the corresponding point of the same interval. The mean is left as 1/mean.
 */
export function invert(s: Summary): Summary {
  return { n: s.n, median: 1 / s.median, q1: 1 / s.q3, q3: 1 / s.q1, p90: NaN, min: 1 / s.max, max: 1 / s.min, mean: 1 / s.mean };
}

/** Split a sequence into `parts` contiguous blocks of near-equal size (for sequences taken in order). */
export function blocks<T>(values: readonly T[], parts: number): T[][] {
  const k = Math.max(1, Math.min(parts, values.length));
  return Array.from({ length: k }, (_, i) => values.slice(Math.floor((i * values.length) / k), Math.floor(((i + 1) * values.length) / k)));
}
