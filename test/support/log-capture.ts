import { beforeEach } from "vitest";
import { setLogSink } from "../../src/observability";

/**
 * Setup file of every test project: the gateway's log lines are kept in memory instead of
 * printed, so passing tests stay quiet and tests can read exactly what would have been
 * written. Workers, session objects and tests of one file share an isolate, hence this sink.
 * A failing test prints the lines its run produced.
 */
const MAX_LINES = 20_000;
const lines: string[] = [];
/** Lines dropped from the front (to keep memory bounded); positions are absolute. */
let dropped = 0;

setLogSink((line) => {
  lines.push(line);
  if (lines.length > MAX_LINES) {
    lines.shift();
    dropped++;
  }
});

/** A position to read from later: `recordsSince(mark())` is what was logged after it. */
export function mark(): number {
  return dropped + lines.length;
}

export function linesSince(position: number): string[] {
  return lines.slice(Math.max(0, position - dropped));
}

export function recordsSince(position: number): Array<Record<string, any>> {
  return linesSince(position).map((line) => JSON.parse(line) as Record<string, any>);
}

beforeEach((ctx) => {
  const from = mark();
  ctx.onTestFailed(() => {
    const own = linesSince(from);
    if (own.length > 0) console.log(`gateway log lines of this test (${own.length}):\n${own.slice(-200).join("\n")}`);
  });
});
