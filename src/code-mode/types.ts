/**
 * The seed's (002) model-facing contract for `exec` / `wait`. Every cell outcome is one of
 * these values: failures are data, never exceptions crossing the HTTP edge.
 */

export type CodeModeErrorCode =
  "invalid_input" | "runtime_unavailable" | "aborted" | "timeout" | "output_limit_exceeded" | "snapshot_limit_exceeded" | "internal_error";

export type CodeModeOutput = { type: "text"; text: string } | { type: "json"; value: unknown };

export type CodeModeTelemetry = {
  /** Hidden catalog size (every cataloged tool, MCP included). */
  catalogSize: number;
  catalogSources: { openclaw: number; mcp: number; client: number };
  /** Cumulative bridge counters for the turn's catalog. */
  counters: { search: number; describe: number; call: number };
  /** One counter lifetime: changes when the catalog is replaced or restored. */
  counterScope: string;
  /** The model-visible control tools: `exec` and `wait` in code mode; Tool Search's in its turns; none for direct tools. */
  controlTools: string[];
  /**
   * Tool Search and direct-tool turns only (seed 004 telemetry). Code-mode telemetry is the seed's
   * fields, plus `subAgents` once the turn has started a Swarm sub-agent (issue 27).
   */
  surface?: SurfaceTelemetry;
  toolSearch?: { mode: "code" | "tools"; fallbackFrom?: "code" };
  /** The tools the turn really ran (Tool Search `call`s or direct calls), with their sources. */
  calledTools?: CalledTool[];
  /** Code mode, only once the turn started a Swarm sub-agent: its children's aggregates (no ids; the trajectory lists them). */
  subAgents?: SubAgentTelemetry;
};

/**
 * A turn's Swarm sub-agents, aggregated: how many it started, how many are still running, completed
 * or failed, their assistant turns together, and their cost (only when some child reported one).
 */
export type SubAgentTelemetry = { count: number; running: number; completed: number; failed: number; assistantTurns: number; costUsd?: number };

/** What the model was sent up front: how many tool definitions, and their serialized bytes. */
export type SurfaceTelemetry = { kind: "tool_search_code" | "tool_search_tools" | "direct" | "none"; tools: number; bytes: number };

export type CalledTool = { tool: string; id: string; source: "openclaw" | "mcp" | "client"; calls: number };

export type CodeModePendingToolCall = { callId: string; tool: string; input: unknown };

export type CodeModeCompletedResult = {
  status: "completed";
  value: unknown;
  output?: CodeModeOutput[];
  telemetry: CodeModeTelemetry;
};

export type CodeModeWaitingResult = {
  status: "waiting";
  runId: string;
  reason: "pending_tools" | "yield";
  pendingToolCalls?: CodeModePendingToolCall[];
  output?: CodeModeOutput[];
  telemetry: CodeModeTelemetry;
};

export type CodeModeFailedResult = {
  status: "failed";
  error: string;
  code?: CodeModeErrorCode;
  output?: CodeModeOutput[];
  telemetry: CodeModeTelemetry;
};

export type CodeModeResult = CodeModeCompletedResult | CodeModeWaitingResult | CodeModeFailedResult;

export type CodeModeLanguage = "javascript" | "typescript";

export type CodeModeExecInput = {
  code?: string;
  command?: string;
  language?: CodeModeLanguage;
  restartSafe?: boolean;
};

export type CodeModeWaitInput = { runId: string };
