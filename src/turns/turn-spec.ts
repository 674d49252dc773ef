import type { CatalogProjection } from "../catalog";
import type { CalledTool, SurfaceTelemetry } from "../code-mode";
import type { ApprovalSettings, ResolvedCodeModeOptions, ResolvedToolSearchOptions } from "../config";
import type { SubAgentDepth, TurnParty } from "../tools";
import type { McpServerRecord } from "../mcp";

/** Tool Search as it applies to one turn (present only when it owns the turn's surface). */
export type TurnToolSearch = Omit<ResolvedToolSearchOptions, "enabled"> & { fallbackFrom?: "code" };

/** Everything a turn needs after it was opened; persisted in the session object's SQLite. */
export type TurnSpec = {
  turnId: string;
  tenantId: string;
  sessionId: string;
  agentId?: string;
  model?: string;
  codeModeEngaged: boolean;
  /** Tool Search owns the surface (never together with code mode). Absent in turns of older builds. */
  toolSearch?: TurnToolSearch;
  /** What the model was sent; absent in code-mode turns (their telemetry is the seed's) and older builds. */
  surface?: SurfaceTelemetry;
  options: ResolvedCodeModeOptions;
  catalog: CatalogProjection;
  /**
   * The turn's MCP servers: name, guest identifier, URL and headers as configured (a turn's own
   * header values live here, in the session's SQLite only; gateway servers keep `env:` references),
   * how many tools they listed, or why they could not be listed.
   */
  mcp?: { servers: StoredMcpServer[] };
  /** One counter lifetime; a replaced or restored catalog gets a new scope. */
  counterScope: string;
  createdAt: number;
  /** Tools that need an operator's decision, resolved when the turn opened (absent in turns of older builds: none). */
  approvals?: ApprovalSettings;
  /** Sender and channel the caller gave when opening the turn; every tool call's context carries them. */
  party?: TurnParty;
  /** A Swarm sub-agent's turn: its depth and its tree's maxDepth, as its parent's spawn set them (absent: top level). */
  subAgent?: SubAgentDepth;
};

/** Tools a turn ran, recorded for at most this many distinct names (later ones are counted, not named). */
export const MAX_CALLED_TOOLS = 64;

export type TurnCounters = { search: number; describe: number; call: number; called?: CalledTool[] };

/** Count one run of a tool in the turn's record. */
export function recordCalled(counters: TurnCounters, tool: Omit<CalledTool, "calls">): void {
  const list = (counters.called ??= []);
  const hit = list.find((c) => c.id === tool.id);
  if (hit) hit.calls++;
  else if (list.length < MAX_CALLED_TOOLS) list.push({ ...tool, calls: 1 });
}

/** An MCP server as a turn stores it: how the guest names it, what listing found, which operations policy lets through. */
export type StoredMcpServer = McpServerRecord & {
  ident: string;
  tools: number;
  error?: string;
  /**
   * The server operations the turn's allow/deny lets through, by policy name `<server>__<op>`
   * (`resources.list`, `resources.read`, `prompts.list`, `prompts.get`). Absent in turns of older
   * builds: all of them.
   */
  ops?: string[];
};
