/**
 * Number formatting shared by the report sections: milliseconds, KiB, ratios, and a ratio or
 * time with its spread across rounds. Pure.
 */
import { invert, type Summary } from "./stats.ts";

/** Milliseconds with three significant digits (two decimals below 10). */
export const ms = (v: number): string =>
  !Number.isFinite(v) ? "n/a" : Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(2);

export const kib = (bytes: number): string => (bytes / 1024).toFixed(1);

const num = (v: number): string => (!Number.isFinite(v) ? "n/a" : v >= 10 ? v.toFixed(0) : v >= 1 ? v.toFixed(1) : v.toFixed(2));

/** A bare factor: 12×, 7.6×, 0.35×. */
export const x = (v: number): string => `${num(v)}×`;

/** A range of factors: "7.2–8.0×". */
export const xRange = (lo: number, hi: number): string => `${num(lo)}–${num(hi)}×`;

/** a / b as a factor. */
export const ratio = (a: number, b: number): string => (b > 0 ? x(a / b) : "n/a");

/** "6.12 ms (IQR 5.80–6.41)" — a per-round figure and its spread. */
export function msSpread(s: Summary): string {
  return `${ms(s.median)} ms (IQR ${ms(s.q1)}–${ms(s.q3)})`;
}

/**
 * A time ratio subject / baseline (per round, summarized) as the reader wants it: "7.6× faster
 * (IQR 7.2–8.0)" or "2.1× slower (IQR 1.9–2.3)". Faster figures are the same interval inverted.
 */
export function speed(t: Summary | null): string {
  if (t === null) return "— (below the clock's resolution)";
  if (t.median <= 1) {
    const f = invert(t);
    return `${x(f.median)} faster (IQR ${xRange(f.q1, f.q3)})`;
  }
  return `${x(t.median)} slower (IQR ${xRange(t.q1, t.q3)})`;
}

/** A plain factor with its spread: "1.5× (IQR 1.4–1.6)" (time ratio, no faster/slower wording). */
export function factor(t: Summary | null): string {
  if (t === null) return "—";
  return `${x(t.median)} (IQR ${xRange(t.q1, t.q3)})`;
}

/** Min–max of a spread: "min–max 6.5–8.4×" for factors of faster ratios (inverted) or not. */
export function speedRange(t: Summary): string {
  const f = t.median <= 1 ? invert(t) : t;
  return xRange(f.min, f.max);
}

/** Markdown table from a header row and rows of cells (pipes in cells escaped). */
export function table(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string[] {
  const esc = (c: string) => c.replace(/\|/g, "\\|");
  return [`| ${header.join(" | ")} |`, `|${header.map(() => "---").join("|")}|`, ...rows.map((r) => `| ${r.map(esc).join(" | ")} |`)];
}

/** The headers of timingCells' columns. */
export const TIMING_HEADER: readonly string[] = ["median (ms)", "IQR (ms)", "p90 (ms)", "min (ms)", "max (ms)"];

/** The timing columns every latency table shares: median, IQR, p90, min, max (ms). */
export function timingCells(s: Summary): string[] {
  return [ms(s.median), `${ms(s.q1)}–${ms(s.q3)}`, ms(s.p90), ms(s.min), ms(s.max)];
}
