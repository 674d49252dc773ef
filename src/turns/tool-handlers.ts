import type { BridgeHandlers, Settlement } from "../bridge/host-bridge";
import { Catalog, guestDescription, guestMetadata } from "../catalog/catalog";
import type { CatalogEntry } from "../catalog/types";
import { TRUNCATION_GUIDANCE, utf8Prefix } from "../code-mode/output-budget";
import { executeTool } from "../tools/executor";
import type { ToolContext, ToolDefinition } from "../tools/types";
import type { TurnCounters, TurnSpec } from "./turn-spec";

export type ToolResolver = (entry: CatalogEntry) => ToolDefinition | undefined;

const encoder = new TextEncoder();

/**
 * Each nested tool result is bounded separately by maxOutputBytes: an oversized one reaches
 * the guest as the seed's truncation marker (a successful partial result), not whole.
 */
export function boundedJson(value: unknown, maxBytes: number): string {
  const text = JSON.stringify(value) ?? "null";
  const bytes = encoder.encode(text).length;
  if (bytes <= maxBytes) return text;
  const prefix = utf8Prefix(text, Math.max(0, maxBytes - 512));
  return JSON.stringify({ truncated: true, prefix, omittedBytes: bytes - encoder.encode(prefix).length, guidance: TRUNCATION_GUIDANCE });
}

function notReplaySafe(callableName: string): string {
  return `${callableName} is not replay-safe; restartSafe cells may only call replay-safe tools`;
}

/** Bridge handlers for one turn: the executor path for calls, catalog lookups for search/describe. */
export function turnHandlers(
  spec: TurnSpec,
  catalog: Catalog,
  counters: TurnCounters,
  resolve: ToolResolver,
  context: Omit<ToolContext, "signal">,
  opts: { restartSafe: boolean },
): Omit<BridgeHandlers, "output"> {
  const maxBytes = spec.options.maxOutputBytes;
  return {
    async call(request, signal): Promise<Settlement> {
      counters.call++;
      const entry = catalog.lookup(request.tool);
      // Same message for denied, unknown and guessed names: existence is not revealed.
      if (!entry) return { ok: false, message: `${request.tool || "tool"} is not an available tool` };
      const definition = resolve(entry);
      if (!definition) return { ok: false, message: `${entry.callableName} is no longer available` };
      if (opts.restartSafe && definition.replaySafe !== true) return { ok: false, message: notReplaySafe(entry.callableName) };
      const outcome = await executeTool(definition, request.input, { ...context, signal });
      if (!outcome.ok) return { ok: false, message: outcome.message };
      return { ok: true, text: boundedJson(outcome.details, maxBytes) };
    },
    isClientTool(tool): boolean {
      return catalog.lookup(tool)?.source === "client";
    },
    clientCalled(): void {
      counters.call++;
    },
    refuseClientCall(request): string | undefined {
      // Client tools carry no replay-safe marker: a restartSafe cell may not hand one out.
      if (opts.restartSafe) return notReplaySafe(catalog.lookup(request.tool)?.callableName ?? request.tool);
      return undefined;
    },
    toolName(callable): string {
      return catalog.lookup(callable)?.toolName ?? callable;
    },
    search(query, limit): Settlement {
      counters.search++;
      const o = spec.options;
      let n = o.searchDefaultLimit;
      if (limit !== null) {
        if (typeof limit !== "number" || !Number.isFinite(limit)) return { ok: false, message: "catalog.search limit must be a number" };
        n = Math.min(Math.max(1, Math.floor(limit)), o.maxSearchLimit);
      }
      const hits = catalog.search(query, n).map(guestMetadata);
      const text = JSON.stringify(hits);
      // Never a silent partial list: when the matching callable names do not fit the output
      // budget, reject and let the model narrow the query.
      if (encoder.encode(JSON.stringify(hits.map((h) => h.callableName))).length > maxBytes) {
        return { ok: false, message: `catalog.search matched more tools than fit in maxOutputBytes (${maxBytes}); narrow the query or lower limit` };
      }
      return { ok: true, text };
    },
    describe(tool): Settlement {
      counters.describe++;
      const entry = catalog.lookup(tool);
      if (!entry) return { ok: false, message: `${tool || "tool"} is not an available tool` };
      return { ok: true, text: boundedJson(guestDescription(entry), maxBytes) };
    },
  };
}
