/**
 * Goal verdicts from a spread, not from a single median: a goal is met when the whole interval
 * (the IQR of its per-round figure, or the exact value of a deterministic one) lies on the good
 * side of the line, not met when it lies wholly on the bad side, and unclear when it crosses.
 * One noisy round then moves a median a little but cannot flip a verdict by itself. Pure.
 */
import type { Summary } from "./stats.ts";

/** The line a goal draws: the figure must be at least, or at most, `line`. */
export type Rule = { kind: "atLeast"; line: number } | { kind: "atMost"; line: number };

export type Status = "met" | "not met" | "unclear";

/** An interval a verdict is based on, and what it is (said in the report). */
export interface Basis {
  lo: number;
  hi: number;
  what: string;
}

/** The IQR of per-round figures. */
export function iqrBasis(s: Summary, rounds: string): Basis {
  return { lo: s.q1, hi: s.q3, what: `IQR over ${s.n} ${rounds}` };
}

/** A figure without sampling noise (counts, bytes, recall on a fixed set). */
export function exactBasis(value: number, what = "deterministic"): Basis {
  return { lo: value, hi: value, what };
}

/** Every sample taken (for nearly deterministic figures, e.g. stored bytes of a few cells). */
export function rangeBasis(s: { min: number; max: number }, what: string): Basis {
  return { lo: s.min, hi: s.max, what };
}

export function judge(basis: Basis, rule: Rule): Status {
  const { lo, hi } = basis;
  if (Number.isNaN(lo) || Number.isNaN(hi)) return "unclear";
  if (rule.kind === "atLeast") return lo >= rule.line ? "met" : hi < rule.line ? "not met" : "unclear";
  return hi <= rule.line ? "met" : lo > rule.line ? "not met" : "unclear";
}

/** The status as the report prints it. */
export function statusText(status: Status): string {
  return status === "unclear" ? "**unclear** (spread crosses the line)" : `**${status}**`;
}
