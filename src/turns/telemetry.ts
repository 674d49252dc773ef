import { Catalog } from "../catalog";
import type { CodeModeTelemetry } from "../code-mode";
import type { TurnCounters, TurnSpec } from "./turn-spec";

export function turnTelemetry(spec: TurnSpec, catalog: Catalog, counters: TurnCounters): CodeModeTelemetry {
  return {
    catalogSize: spec.catalog.entries.length,
    catalogSources: catalog.sourceCounts(),
    counters: { ...counters },
    counterScope: spec.counterScope,
    controlTools: ["exec", "wait"],
  };
}
