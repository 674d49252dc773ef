/**
 * Report, section 9a: idle cells of many sessions in one isolate, together against one alone. Pure.
 */
import type { CapacityFigures } from "./measure-capacity.ts";
import { factor, ms, table } from "./report-format.ts";

/** The goal line: `cells` idle cells together take about one cell's time (issue 22). */
export const CAPACITY_LINE = 1.5;

export function reportCapacity(f: CapacityFigures): string[] {
  const p = f.plan;
  const m = f.measures;
  return [
    "## 9a. Capacity: idle cells of many sessions in one isolate",
    "",
    `${p.cells} sessions (a fresh turn each, so ${p.cells} session objects, all in the one isolate the local workerd runs the production`,
    `build in) each send one \`exec\` whose cell waits ${p.timerMs} ms on a guest timer, all at once; the figure is the wall time from the`,
    "first request out to the last answer in. Baseline in the same rounds: one such cell alone. Were every VM reserved at its",
    `memoryLimitBytes (64 MiB) in the isolate's 80 MiB ledger, the cells would run one after another: ${p.cells}× one cell.`,
    `Rounds: ${p.rounds} (one sample of each per round, order reversing every round), after ${p.warmup} untimed of each.`,
    "",
    ...table(
      ["measure", "median (ms)", "IQR (ms)", "min–max (ms)"],
      [
        ["**baseline**: one timer cell alone", ms(m.alone.median), `${ms(m.alone.q1)}–${ms(m.alone.q3)}`, `${ms(m.alone.min)}–${ms(m.alone.max)}`],
        [
          `${p.cells} timer cells of ${p.cells} sessions at once`,
          ms(m.together.median),
          `${ms(m.together.q1)}–${ms(m.together.q3)}`,
          `${ms(m.together.min)}–${ms(m.together.max)}`,
        ],
        [
          `slowest single answer among the ${p.cells}`,
          ms(f.slowest.median),
          `${ms(f.slowest.q1)}–${ms(f.slowest.q3)}`,
          `${ms(f.slowest.min)}–${ms(f.slowest.max)}`,
        ],
      ],
    ),
    "",
    `Together / alone, per round: ${factor(f.ratio)} (goal ≤ ${CAPACITY_LINE}×; one after another would be ≈ ${p.cells}×).`,
    "",
  ];
}
