/**
 * Report, section 9b: the production build's cold start, CPU of the main module's evaluation
 * and of the first TypeScript cell over the first JavaScript cell. Pure.
 */
import type { StartupFigures } from "./measure-startup.ts";
import { ms, table } from "./report-format.ts";
import type { Summary } from "./stats.ts";

/** Goal lines of issue 22, in ms of CPU. */
export const STARTUP_LINE_MS = 30;
export const FIRST_TS_LINE_MS = 100;

const row = (name: string, s: Summary): string[] => [name, ms(s.median), `${ms(s.q1)}–${ms(s.q3)}`, `${ms(s.min)}–${ms(s.max)}`];

export function reportStartup(f: StartupFigures): string[] {
  const s = f.startup;
  const c = f.firstCell;
  return [
    "## 9b. Cold start: startup CPU and the first TypeScript cell",
    "",
    `Each of ${f.plan.rounds} rounds starts two fresh workerds (Miniflare), each worker in them its own isolate. The first holds workers whose entry`,
    "imports a module on its first request (the production main module; as baseline a one-line module; the TypeScript compiler module);",
    "the second holds copies of the production gateway, whose first `exec` after opening a turn is a JavaScript cell in one and a",
    "TypeScript cell in another. Neither timed request is its process's first: a one-line import, then a JavaScript cell in a third",
    "gateway, run first untimed: the process's first request costs 8–10 ms more CPU than its later ones, and its first cell ~25 ms",
    "more (work done once per process, which its later isolates share), so whichever ran first would carry it.",
    "Figures are **CPU time** of the workerd process across the request (all its threads, from /proc/…/schedstat), not wall time,",
    "so the machine's load inflates them little. Startup CPU includes parsing and compiling the module, as the platform's does.",
    "",
    ...table(
      ["measure (CPU ms)", "median", "IQR", "min–max"],
      [
        row("**baseline**: importing a one-line module (request + dynamic import)", s.floor),
        row("importing the production main module (startup)", s.main),
        row("main module − baseline, per round", s.mainOverFloor),
        ...(f.compilerModule
          ? [row("importing the TypeScript compiler module alone (loaded only by a TypeScript cell the fast path cannot take)", f.compilerModule)]
          : []),
        row("**baseline**: first JavaScript cell of a fresh isolate", c.javascript),
        row("first TypeScript cell of a fresh isolate", c.typescript),
        row("TypeScript − JavaScript, per round", c.extra),
      ],
    ),
    "",
    `Goals (issue 22): startup ≤ ${STARTUP_LINE_MS} ms of CPU; the first TypeScript cell ≤ ${FIRST_TS_LINE_MS} ms over a JavaScript cell.`,
    "",
  ];
}
