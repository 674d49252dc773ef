import { catalogJson } from "./catalog-json";
import { BudgetPause } from "../policy";
import type { CallPolicy } from "../tools";
import { Catalog } from "../catalog";
import { runExec, type CellEnd, type CellEnvironment } from "../cell";
import type { CodeModeResult } from "../code-mode";
import type { Clock } from "../runtime";
import type { CellVms } from "../runtime";
import { executeTool } from "../tools";
import type { ToolContext } from "../tools";
import { guestMetadata } from "../catalog";
import { turnTelemetry } from "./telemetry";
import { turnHandlers, type ToolResolver } from "./bridge-handlers";
import { recordCalled, type TurnCounters, type TurnSpec } from "./turn-spec";
import { mcpRuntime, type McpRuntime } from "./mcp-runtime";
import { NAMESPACES_DTS, renderNamespacesDts } from "./namespace-declarations";
import type { McpServers } from "../mcp";
import { toolSearchId } from "../tool-search";
import type { ActivitySink } from "./nested-activity";
import type { CatalogEntry } from "../catalog";
import { swarmGuestSpec, swarmSpawnEntry } from "./swarm-surface";

export type ToolRouteResult =
  | { kind: "code_mode"; result: CodeModeResult }
  | { kind: "direct"; result: { status: "completed"; value: unknown } | { status: "failed"; error: string } }
  | { kind: "not_found"; message: string };

export type TurnDeps = {
  clock: Clock;
  signal: AbortSignal;
  vms: CellVms;
  /** Plugin tools by catalog entry; MCP entries resolve to a definition that calls their server. */
  resolve: ToolResolver;
  context: Omit<ToolContext, "signal">;
  /** The turn's MCP servers (operations open their own client). */
  mcp: McpServers;
  /** Completed nested calls, for the trajectory (absent: not recorded). */
  activity?: ActivitySink;
  /**
   * The call read server- or client-written metadata (an MCP declaration file, a description or
   * schema of an MCP or client tool): its result is network-derived, like an MCP tool's result.
   */
  taint?: (source: string) => void;
  /** The turn's call policy (hooks, approvals) for nested calls of a cell (`pause`: its budget pause) or direct calls. */
  policy?: (opts: { nested: boolean; pause?: BudgetPause }) => CallPolicy;
  /** Partial updates of running tools (transient: the /chat stream shows them). */
  onUpdate?: (callId: string | undefined, tool: string, partial: unknown) => void;
  /** When a cell of this call was admitted to the session's queue: its deadline counts from here. */
  admittedAt?: number;
};

/** The cell environment of a turn: limits, guest tool metadata, bridge handlers, telemetry. */
export function cellEnvironment(spec: TurnSpec, counters: TurnCounters, deps: TurnDeps, restartSafe: boolean): CellEnvironment {
  const { catalog, tools, mcp } = turnRuntime(spec);
  // The VM limit never exceeds the isolate's VM memory budget; cells (and their out-of-memory
  // messages) see the limit they really run with.
  const memoryLimitBytes = deps.vms.pool.ledger.effectiveLimit(spec.options.memoryLimitBytes);
  // Time spent waiting for operator approvals does not count against the cell's budget.
  const pause = new BudgetPause(deps.clock);
  const policy = deps.policy?.({ nested: true, pause });
  return {
    options: memoryLimitBytes === spec.options.memoryLimitBytes ? spec.options : { ...spec.options, memoryLimitBytes },
    clock: deps.clock,
    signal: deps.signal,
    vms: deps.vms,
    ...(deps.admittedAt !== undefined ? { admittedAt: deps.admittedAt } : {}),
    tools,
    pause,
    handlers: turnHandlers(spec, catalog, counters, { ...deps, policy, now: () => deps.clock.now() }, mcp, { restartSafe }),
    telemetry: () => turnTelemetry(spec, catalog, counters),
  };
}

type TurnRuntime = {
  catalog: Catalog;
  tools: { metadataJson: string; namesJson: string; mcpJson?: string; namespacesJson?: string };
  mcp: McpRuntime;
};

// A turn's catalog, guest metadata and MCP namespace are derived once per parsed spec, not per cell.
const runtimes = new WeakMap<TurnSpec, TurnRuntime>();

/**
 * And once per content across turns: the turns of an agent loop (and of sessions of one agent) open
 * with the same catalog and MCP listings, so a new turn's first cell reuses what an earlier turn
 * derived (rendering hundreds of MCP declarations costs milliseconds). Keyed by the exact text of
 * what the derivation reads (never a hash: a crafted collision would hand one tenant's declarations
 * to another); the most recently used few are kept per isolate.
 */
const SHARED_RUNTIMES = 8;
const shared = new Map<string, TurnRuntime>();

function turnRuntime(spec: TurnSpec): TurnRuntime {
  let r = runtimes.get(spec);
  if (r) return r;
  const key = runtimeKey(spec);
  r = shared.get(key);
  if (r) shared.delete(key);
  else r = deriveRuntime(spec);
  shared.set(key, r);
  if (shared.size > SHARED_RUNTIMES) shared.delete(shared.keys().next().value!);
  runtimes.set(spec, r);
  return r;
}

/** Everything deriveRuntime reads of a spec: the catalog projection and how the turn's MCP servers are named and filtered. */
function runtimeKey(spec: TurnSpec): string {
  return `${catalogJson(spec.catalog)}\u0000${JSON.stringify([(spec.mcp?.servers ?? []).map((s) => [s.name, s.ident, s.ops ?? null]), spec.options.maxPendingToolCalls])}`;
}

function deriveRuntime(spec: TurnSpec): TurnRuntime {
  const catalog = new Catalog(spec.catalog);
  const metadata = catalog.guestEntries.map(guestMetadata);
  const mcp = mcpRuntime(spec, catalog);
  const spawn = swarmSpawnEntry(spec.catalog.entries);
  return {
    catalog,
    tools: {
      metadataJson: JSON.stringify(metadata),
      namesJson: JSON.stringify(metadata.map((m) => m.callableName)),
      ...(mcp.guestJson !== undefined ? { mcpJson: mcp.guestJson } : {}),
      // Plugin namespaces: global names and method names only; the host maps each call to its tool.
      // The Swarm globals travel with them (installTools' fourth argument) when the turn's native sessions_spawn is allowed.
      ...(catalog.namespaces.length > 0 || spawn ? { namespacesJson: namespacesGuestJson(catalog, spawn, spec.options.maxPendingToolCalls) } : {}),
    },
    mcp,
  };
}

/** What the guest's installNamespaces gets: names only (the host maps calls to tools) and their declaration file. */
function namespacesGuestJson(catalog: Catalog, spawn: CatalogEntry | undefined, slots: number): string {
  const content = catalog.namespaces.length > 0 ? renderNamespacesDts(catalog) : undefined;
  return JSON.stringify({
    namespaces: catalog.namespaces.map((n) => ({ name: n.name, methods: n.methods.map((m) => m.name) })),
    ...(content !== undefined
      ? { file: { path: NAMESPACES_DTS, bytes: new TextEncoder().encode(content).length, description: "Plugin namespaces of this turn", content } }
      : {}),
    ...(spawn ? { swarm: swarmGuestSpec(spawn, slots) } : {}),
  });
}

export function isRestartSafe(input: unknown): boolean {
  return typeof input === "object" && input !== null && (input as { restartSafe?: unknown }).restartSafe === true;
}

/** `exec`: a fresh VM; the caller decides about parking a suspended end. */
export function execCell(env: CellEnvironment, input: unknown): Promise<CellEnd> {
  return runExec(input, env);
}

/**
 * A model-visible tool called directly: direct-only tools in code mode and Tool Search turns,
 * every tool otherwise. Outside code mode the call is counted and recorded (seed 004 telemetry
 * compares direct exposure with Tool Search); code mode's counters are the bridge's alone.
 */
export async function callDirectTool(
  spec: TurnSpec,
  toolName: string,
  input: unknown,
  deps: TurnDeps,
  counters?: TurnCounters,
): Promise<ToolRouteResult> {
  const visible = spec.codeModeEngaged || spec.toolSearch ? spec.catalog.direct : [...spec.catalog.entries, ...spec.catalog.direct];
  const entry = visible.find((e) => e.toolName === toolName);
  if (!entry) return { kind: "not_found", message: `unknown tool ${JSON.stringify(toolName)} for this turn` };
  if (counters && !spec.codeModeEngaged) {
    counters.call++;
    recordCalled(counters, { tool: entry.toolName, id: toolSearchId(entry), source: entry.source });
  }
  const definition = deps.resolve(entry);
  if (!definition) {
    if (entry.source === "client") return { kind: "direct", result: { status: "failed", error: `${toolName} is a client tool: the client runs it` } };
    return { kind: "direct", result: { status: "failed", error: `${toolName} is no longer available` } };
  }
  const update = deps.onUpdate ? (partial: unknown) => deps.onUpdate!(deps.context.callId, entry.toolName, partial) : undefined;
  const outcome = await executeTool(
    definition,
    input,
    { ...deps.context, signal: deps.signal, ...(update ? { update } : {}) },
    deps.policy?.({ nested: false }),
  );
  return { kind: "direct", result: outcome.ok ? { status: "completed", value: outcome.details } : { status: "failed", error: outcome.message } };
}
