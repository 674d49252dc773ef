import { MAX_TOKEN_COUNT } from "../limits";

/**
 * A token count as the gateway reports it: a non-negative integer of at most MAX_TOKEN_COUNT.
 * Usage comes from the provider's answer, so any value is possible: one that is not a count
 * (negative, fractional, NaN, ±Infinity, not a number) is unknown, 0 (ModelUsage's "not
 * reported"); a count past the bound (`1e308`) is clamped to it, so a sum or a cost stays finite.
 */
export function tokenCount(value: unknown): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0) return 0;
  return Math.min(value, MAX_TOKEN_COUNT);
}

/** `a + b` of two counts, saturating at MAX_TOKEN_COUNT (a turn's totals over many calls). */
export function addTokenCounts(a: number, b: number): number {
  return tokenCount(tokenCount(a) + tokenCount(b));
}
