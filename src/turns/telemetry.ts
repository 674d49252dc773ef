import { Catalog } from "../catalog";
import type { CodeModeTelemetry } from "../code-mode";
import { TOOL_SEARCH_CONTROLS } from "../tool-search";
import type { TurnCounters, TurnSpec } from "./turn-spec";

/**
 * A turn's telemetry. Code mode: exactly the seed's fields (catalog size and sources, bridge
 * counters, counter scope, `exec`/`wait`); the session adds `subAgents` to the exec/wait results
 * of a turn that started Swarm sub-agents (src/session/outer-calls.ts). Tool Search and direct turns add what seed 004 asks
 * to compare them: the surface sent up front (tool count and bytes), the mode (and a fallback),
 * and the tools really called with their ids and sources.
 */
export function turnTelemetry(spec: TurnSpec, catalog: Catalog, counters: TurnCounters): CodeModeTelemetry {
  const base = {
    catalogSize: spec.catalog.entries.length,
    catalogSources: catalog.sourceCounts(),
    counters: { search: counters.search, describe: counters.describe, call: counters.call },
    counterScope: spec.counterScope,
  };
  if (spec.codeModeEngaged) return { ...base, controlTools: ["exec", "wait"] };
  const ts = spec.toolSearch;
  return {
    ...base,
    controlTools: ts ? [...TOOL_SEARCH_CONTROLS[ts.mode]] : [],
    ...(spec.surface ? { surface: spec.surface } : {}),
    ...(ts ? { toolSearch: { mode: ts.mode, ...(ts.fallbackFrom ? { fallbackFrom: ts.fallbackFrom } : {}) } } : {}),
    calledTools: (counters.called ?? []).map((c) => ({ ...c })),
  };
}
