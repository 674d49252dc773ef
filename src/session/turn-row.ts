import { MAX_CALLED_TOOLS, type TurnCounters, type TurnSpec } from "../turns";
import { toolSearchId } from "../tool-search";
import type { EncodedTurn } from "./ports";

const utf8 = new TextEncoder();

/** A turn's row as the turn store writes it, with the bytes it is charged (ports.ts, EncodedTurn). */

export function encodeTurn(spec: TurnSpec, counters: TurnCounters): EncodedTurn {
  const s = JSON.stringify(spec);
  const c = JSON.stringify(counters);
  const specBytes = utf8.encode(s).length;
  const countersBytes = utf8.encode(c).length;
  return { spec: s, counters: c, bytes: specBytes + countersBytes, charged: specBytes + Math.max(countersBytes, countersCeiling(spec)) };
}

/** The largest `counters` of this turn can become (see EncodedTurn). */
function countersCeiling(spec: TurnSpec): number {
  const max = Number.MAX_SAFE_INTEGER;
  const base = utf8.encode(JSON.stringify({ search: max, describe: max, call: max, called: [] })).length;
  const entries = [...spec.catalog.entries, ...spec.catalog.direct].map(
    (e) =>
      utf8.encode(JSON.stringify({ tool: e.toolName, id: toolSearchId(e), source: e.source === "client" ? "client" : "openclaw", calls: max }))
        .length + 1,
  );
  entries.sort((a, b) => b - a);
  return base + entries.slice(0, MAX_CALLED_TOOLS).reduce((n, b) => n + b, 0);
}
