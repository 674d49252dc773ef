import type { BridgeHandlers, Settlement, ToolRequest } from "../bridge";
import { nestedCall, type ActivitySink } from "./nested-activity";
import { Catalog, guestDescription, guestMetadata } from "../catalog";
import type { CatalogEntry } from "../catalog";
import { boundedJson, boundedResult, utf8ByteLength } from "../code-mode";
import { executeTool } from "../tools";
import { checkValue } from "../tools";
import type { CallPolicy, ToolContext, ToolDefinition } from "../tools";
import type { TurnCounters, TurnSpec } from "./turn-spec";
import { searchLimit } from "../tool-search";
import type { McpServers } from "../mcp";
import { mcpOpDefinition, mcpServerOp, type McpRuntime } from "./mcp-runtime";
import { admitClientCall } from "./client-tool-policy";

export type ToolResolver = (entry: CatalogEntry) => ToolDefinition | undefined;

/** What a nested call needs: definitions, the call context, the turn's policy (hooks, approvals), partial-update sink. */
export type NestedCallDeps = {
  resolve: ToolResolver;
  context: Omit<ToolContext, "signal">;
  policy?: CallPolicy;
  onUpdate?: (callId: string | undefined, tool: string, partial: unknown) => void;
};

/** One call of a catalog tool: how errors name it, its signal, its output bound, and who it is. */
export type EntryCall = {
  /** The name errors use (`MCP.server.tool`, `Issues.list`, the callable name). */
  name: string;
  signal: AbortSignal;
  /** maxOutputBytes of the turn. */
  maxBytes: number;
  /** A refusal by the definition (restartSafe cells call only replay-safe tools). */
  guard?: (definition: ToolDefinition) => string | undefined;
  callId?: string;
  /** Issued again after an eviction (a `reattachable` tool). */
  reissued?: true;
};

/**
 * One catalog tool through the executor: its definition (gone after a deploy → a clear error),
 * an optional refusal (`guard`), the run, then the result bounded by maxOutputBytes.
 */
export async function executeEntry(entry: CatalogEntry, input: unknown, deps: NestedCallDeps, call: EntryCall): Promise<Settlement> {
  const { name, signal, maxBytes, guard, callId, reissued } = call;
  const definition = deps.resolve(entry);
  if (!definition) return { ok: false, message: `${name} is no longer available` };
  const refusal = guard?.(definition);
  if (refusal !== undefined) return { ok: false, message: refusal };
  const update = deps.onUpdate ? (partial: unknown) => deps.onUpdate!(callId, entry.toolName, partial) : undefined;
  const ctx: ToolContext = {
    ...deps.context,
    signal,
    ...(callId !== undefined ? { callId } : {}),
    ...(reissued ? { reissued } : {}),
    ...(update ? { update } : {}),
  };
  const outcome = await executeTool(definition, input, ctx, deps.policy);
  if (!outcome.ok) return { ok: false, message: outcome.message };
  return boundedResult(entry.toolName, outcome.details, maxBytes, definition.outputSchema !== undefined);
}

/**
 * A tool whose metadata (name, description, schemas) was written outside the gateway: by an MCP
 * server or by the client that declared it (seed 002: "Remote MCP and client metadata remains
 * untrusted"). Reading it makes a result network-derived.
 */
export function writtenElsewhere(entry: CatalogEntry): boolean {
  return entry.source === "mcp" || entry.source === "client";
}

function notReplaySafe(callableName: string): string {
  return `${callableName} is not replay-safe; restartSafe cells may only call replay-safe tools`;
}

/** Bridge handlers for one turn: the executor path for calls, catalog lookups for search/describe. */
export function turnHandlers(
  spec: TurnSpec,
  catalog: Catalog,
  counters: TurnCounters,
  deps: NestedCallDeps & { mcp: McpServers; activity?: ActivitySink; taint?: (source: string) => void; now?: () => number },
  mcp: McpRuntime,
  opts: { restartSafe: boolean },
): Omit<BridgeHandlers, "output"> {
  const maxBytes = spec.options.maxOutputBytes;
  const nested: NestedCallDeps = { resolve: deps.resolve, context: deps.context, policy: deps.policy, onUpdate: deps.onUpdate };
  const dispatch = async (request: ToolRequest, signal: AbortSignal): Promise<Settlement> => {
    // Swarm's phase() and log(): trajectory records only (nested activity), no tool runs.
    if (request.tool === "swarm:phase" || request.tool === "swarm:log") return { ok: true, text: "null" };
    if (request.tool.startsWith("mcp:")) {
      // MCP.<server>.<tool>(input): a catalog entry, through the executor like any tool.
      const tool = catalog.lookupMcp(request.tool);
      if (tool) {
        counters.call++;
        const name = `MCP.${tool.mcp!.serverIdent}.${tool.mcp!.toolIdent}`;
        return executeEntry(tool, request.input, nested, {
          name,
          signal,
          maxBytes,
          guard: () => (opts.restartSafe ? notReplaySafe(name) : undefined),
          callId: request.callId,
        });
      }
      // $api reads the turn's declarations (a describe); resources and prompts are server calls.
      if (request.tool.endsWith("/$api")) counters.describe++;
      else counters.call++;
      if (opts.restartSafe && !request.tool.endsWith("/$api")) return { ok: false, message: notReplaySafe(request.tool.slice(4)) };
      if (!request.tool.includes("/")) return { ok: false, message: `${request.tool.slice(4) || "MCP tool"} is not an available tool` };
      // resources.* and prompts.* reach the server: the executor path, so hooks and approvals apply.
      const op = mcpOpDefinition(spec, mcp, deps.mcp, request.tool, maxBytes);
      if (!op) return mcpServerOp({ spec, runtime: mcp, servers: deps.mcp, maxBytes }, request.tool, request.input, signal);
      const ctx: ToolContext = { ...deps.context, signal, ...(request.callId !== undefined ? { callId: request.callId } : {}) };
      const outcome = await executeTool(op, request.input ?? {}, ctx, nested.policy);
      if (!outcome.ok) return { ok: false, message: outcome.message };
      return boundedResult(op.name, outcome.details, maxBytes, false);
    }
    if (request.tool.startsWith("ns:")) {
      // Issues.list(input): the plugin tool the method is bound to, exactly as a direct call of it.
      counters.call++;
      const bound = catalog.lookupNamespace(request.tool);
      if (!bound) return { ok: false, message: `${request.tool.slice(3) || "namespace method"} is not an available namespace method` };
      return executeEntry(bound.entry, request.input, nested, {
        name: bound.path,
        signal,
        maxBytes,
        guard: (definition) => (opts.restartSafe && definition.replaySafe !== true ? notReplaySafe(bound.path) : undefined),
        callId: request.callId,
      });
    }
    counters.call++;
    const entry = catalog.lookup(request.tool);
    // Same message for denied, unknown and guessed names: existence is not revealed.
    if (!entry) return { ok: false, message: `${request.tool || "tool"} is not an available tool` };
    return executeEntry(entry, request.input, nested, {
      name: entry.callableName,
      signal,
      maxBytes,
      guard: (definition) => (opts.restartSafe && definition.replaySafe !== true ? notReplaySafe(entry.callableName) : undefined),
      callId: request.callId,
      ...(request.reissued ? { reissued: request.reissued } : {}),
    });
  };
  const now = deps.now ?? Date.now;
  return {
    async call(request, signal): Promise<Settlement> {
      const startedAt = now();
      const settlement = await dispatch(request, signal);
      // Completed nested calls become display-only activity under their parent (trajectory); starts stay transient.
      deps.activity?.(nestedCall(catalog, request, settlement, startedAt, now(), deps.resolve));
      return settlement;
    },
    isClientTool(tool): boolean {
      return catalog.lookup(tool)?.source === "client";
    },
    ...(nested.policy
      ? {
          admitClient: async (request: ToolRequest, signal: AbortSignal) => {
            const entry = catalog.lookup(request.tool);
            if (!entry) return { ok: true as const, input: request.input };
            return admitClientCall(entry, request.input ?? {}, nested.policy!, {
              ...nested.context,
              signal,
              ...(request.callId ? { callId: request.callId } : {}),
            });
          },
        }
      : {}),
    refuseClientCall(request): string | undefined {
      const entry = catalog.lookup(request.tool);
      if (!entry) return undefined;
      // Client tools carry no replay-safe marker: a restartSafe cell may not hand one out.
      if (opts.restartSafe) {
        counters.call++;
        return notReplaySafe(entry.callableName);
      }
      // A client tool's declared input schema is enforced before the call is handed over,
      // exactly as the executor checks a host tool's input: the guest gets a catchable error.
      const check = checkValue(entry.parameters, request.input ?? {}, true);
      if (check.ok) return undefined;
      counters.call++;
      return `invalid input for ${entry.toolName}: ${check.message}`;
    },
    clientCalled(): void {
      counters.call++;
    },
    reissuable(tool): string | undefined {
      if (opts.restartSafe) return undefined;
      const entry = catalog.guestEntries.find((e) => e.toolName === tool && e.source !== "client");
      return entry && deps.resolve(entry)?.reattachable === true ? entry.callableName : undefined;
    },
    toolName(callable): string {
      return (catalog.lookup(callable) ?? catalog.lookupNamespace(callable)?.entry)?.toolName ?? callable;
    },
    search(query, limit): Settlement {
      counters.search++;
      if (limit !== null && (typeof limit !== "number" || !Number.isFinite(limit)))
        return { ok: false, message: "catalog.search limit must be a number" };
      const entries = catalog.search(query, searchLimit(limit, spec.options));
      const hits = entries.map(guestMetadata);
      const text = JSON.stringify(hits);
      // Never a silent partial list: when the matching callable names do not fit the output
      // budget, reject and let the model narrow the query.
      if (utf8ByteLength(JSON.stringify(hits.map((h) => h.callableName))) > maxBytes) {
        return { ok: false, message: `catalog.search matched more tools than fit in maxOutputBytes (${maxBytes}); narrow the query or lower limit` };
      }
      // Client-written descriptions in the hits: what the cell returns from them is untrusted.
      const client = entries.find(writtenElsewhere);
      if (client) deps.taint?.(client.toolName);
      return { ok: true, text };
    },
    describe(tool): Settlement {
      counters.describe++;
      const entry = catalog.lookup(tool);
      if (!entry) return { ok: false, message: `${tool || "tool"} is not an available tool` };
      if (writtenElsewhere(entry)) deps.taint?.(entry.toolName);
      return { ok: true, text: boundedJson(guestDescription(entry), maxBytes) };
    },
    taint(source): void {
      deps.taint?.(source);
    },
  };
}
