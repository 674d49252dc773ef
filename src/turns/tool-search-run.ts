import { BudgetPause } from "../policy";
import { checkValue, type CallPolicy } from "../tools";
import type { BridgeHandlers, Settlement, ToolRequest } from "../bridge";
import { Catalog, type CatalogEntry } from "../catalog";
import { closeWith, failed, failedWithBudget, runExec, TOOL_SEARCH_TOOLS, type CellEnd, type CellEnvironment } from "../cell";
import type { CodeModePendingToolCall, CodeModeResult, CodeModeTelemetry } from "../code-mode";
import { utf8ByteLength } from "../code-mode";
import { parseToolSearchInput, searchLimit, ToolSearchCatalog, toolSearchId, type ToolSearchInput } from "../tool-search";
import type { TurnDeps } from "./cell-environment";
import { executeEntry, writtenElsewhere } from "./bridge-handlers";
import { admitClientCall } from "./client-tool-policy";
import { turnTelemetry } from "./telemetry";
import { recordCalled, type TurnCounters, type TurnSpec, type TurnToolSearch } from "./turn-spec";

/**
 * Tool Search at run time (seed 004): the same catalog, executor and policy as code mode, seen
 * through Tool Search ids. `tool_search_code` runs its body in a fresh QuickJS VM whose only
 * globals are `console` and `openclaw.tools`, within `codeTimeoutMs`, with every other limit of
 * an `exec` cell (CPU ticks, memory, output budget, source checks). It parks only on client tools
 * (the caller runs them, like a code-mode cell's client calls); host work still running at the
 * deadline is cancelled and the call fails with `timeout`. `tool_search`, `tool_describe` and
 * `tool_call` are the same operations as structured tools; `tool_call` of a client tool is handed
 * to the caller as one pending call.
 */

/** The three operations, shared by the code bridge and the structured tools. */
class ToolSearchOps {
  readonly catalog: ToolSearchCatalog;

  constructor(
    readonly spec: TurnSpec,
    readonly ts: TurnToolSearch,
    readonly counters: TurnCounters,
    readonly deps: TurnDeps,
    /** The hidden tool's policy: nested (called through Tool Search, not shown to the model). */
    readonly policy?: CallPolicy,
  ) {
    this.catalog = new ToolSearchCatalog(spec.catalog);
  }

  private get maxBytes(): number {
    return this.spec.options.maxOutputBytes;
  }

  search(query: string, limit: number | null): Settlement {
    this.counters.search++;
    const hits = this.catalog.search(query, searchLimit(limit, this.ts));
    const text = JSON.stringify(hits);
    // Never a silent partial list: hits that do not fit the output budget are refused.
    if (utf8ByteLength(text) > this.maxBytes) {
      return { ok: false, message: `tool search matched more than fits in maxOutputBytes (${this.maxBytes}); narrow the query or lower limit` };
    }
    // MCP or client names and descriptions in the hits: the call's result is network-derived.
    const foreign = hits.find((h) => h.source !== "openclaw");
    if (foreign) this.deps.taint?.(foreign.id);
    return { ok: true, text };
  }

  describe(id: string): Settlement {
    this.counters.describe++;
    const entry = this.catalog.lookup(id);
    if (!entry) return unknownId(id);
    // Its name, description and schemas (or the name in the refusal below) were written by an MCP server or the client.
    if (writtenElsewhere(entry)) this.deps.taint?.(toolSearchId(entry));
    const text = JSON.stringify(this.catalog.describe(entry));
    if (utf8ByteLength(text) > this.maxBytes)
      return { ok: false, message: `${entry.toolName}'s description is larger than maxOutputBytes (${this.maxBytes})` };
    return { ok: true, text };
  }

  /** One call of `entry`, counted as it is made (the seed's call counts and `calledTools`). */
  counted(entry: CatalogEntry): void {
    this.counters.call++;
    recordCalled(this.counters, { tool: entry.toolName, id: toolSearchId(entry), source: entry.source });
  }

  async call(id: string, input: unknown, signal: AbortSignal, callId?: string): Promise<Settlement> {
    const entry = this.catalog.lookup(id);
    if (!entry) {
      this.counters.call++;
      return unknownId(id);
    }
    this.counted(entry);
    // Client calls are the caller's (the bridge and tool_call hand them out); never run here.
    if (entry.source === "client") return { ok: false, message: `${entry.toolName} is a client tool: the client runs it` };
    const startedAt = this.deps.clock.now();
    const settlement = await executeEntry(
      entry,
      input,
      { ...this.deps, policy: this.policy },
      { name: entry.toolName, signal, maxBytes: this.maxBytes, ...(callId !== undefined ? { callId } : {}) },
    );
    // The trajectory shows it under the Tool Search call; MCP and network-derived results make that call untrusted.
    this.deps.activity?.({
      invocationId: callId ?? `call_${crypto.randomUUID().slice(0, 8)}`,
      tool: entry.toolName,
      source: entry.source,
      networkDerived: entry.source === "mcp" || this.deps.resolve(entry)?.networkDerived === true,
      ok: settlement.ok,
      startedAt,
      durationMs: Math.max(0, this.deps.clock.now() - startedAt),
      input,
      ...(settlement.ok ? { result: settlement.text ?? "null" } : { error: settlement.message }),
    });
    return settlement;
  }
}

// Same message for unknown, denied and guessed ids: existence is not revealed.
function unknownId(id: string): { ok: false; message: string } {
  return { ok: false, message: `${JSON.stringify(id.slice(0, 200))} is not a tool of this run; use an id from search results` };
}

function toolSearchOf(spec: TurnSpec): TurnToolSearch {
  if (!spec.toolSearch) throw new Error("not a Tool Search turn");
  return spec.toolSearch;
}

/** A turn's spec as its `tool_search_code` cells see it: `codeTimeoutMs` is their deadline, JavaScript their language. */
export function toolSearchCellSpec(spec: TurnSpec): TurnSpec {
  const ts = toolSearchOf(spec);
  return { ...spec, options: { ...spec.options, timeoutMs: ts.codeTimeoutMs, languages: ["javascript"] } };
}

/**
 * The environment of a `tool_search_code` cell (a first run or a resume): `openclaw.tools` only,
 * the turn's limits with `codeTimeoutMs`. A client tool found by search is handed to the caller
 * like a code-mode cell's client call: its input checked against its schema, then the turn's
 * policy (hooks, approvals; nested), within the pending-call cap of the bridge.
 */
export function toolSearchCellEnvironment(spec: TurnSpec, counters: TurnCounters, deps: TurnDeps): CellEnvironment {
  const ts = toolSearchOf(spec);
  const cellSpec = toolSearchCellSpec(spec);
  const pause = new BudgetPause(deps.clock);
  const policy = deps.policy?.({ nested: true, pause });
  const ops = new ToolSearchOps(spec, ts, counters, deps, policy);
  const memoryLimitBytes = deps.vms.pool.ledger.effectiveLimit(spec.options.memoryLimitBytes);
  const clientEntry = (id: string): CatalogEntry | undefined => {
    const entry = ops.catalog.lookup(id);
    return entry?.source === "client" ? entry : undefined;
  };
  const handlers: Omit<BridgeHandlers, "output"> = {
    call: (request, signal) => ops.call(request.tool, request.input, signal, request.callId),
    isClientTool: (id) => clientEntry(id) !== undefined,
    // Every client call the cell makes passes here first: counted as made (refused ones too).
    refuseClientCall: (request) => {
      const entry = clientEntry(request.tool);
      if (!entry) return undefined;
      ops.counted(entry);
      const check = checkValue(entry.parameters, request.input ?? {}, true);
      return check.ok ? undefined : `invalid input for ${entry.toolName}: ${check.message}`;
    },
    ...(policy
      ? {
          admitClient: async (request: ToolRequest, signal: AbortSignal) => {
            const entry = clientEntry(request.tool);
            if (!entry) return unknownId(request.tool);
            return admitClientCall(entry, request.input ?? {}, policy, {
              ...deps.context,
              signal,
              ...(request.callId !== undefined ? { callId: request.callId } : {}),
            });
          },
        }
      : {}),
    clientCalled: () => undefined,
    toolName: (id) => ops.catalog.lookup(id)?.toolName ?? id,
    search: (query, limit) =>
      limit !== null && (typeof limit !== "number" || !Number.isFinite(limit))
        ? { ok: false, message: "openclaw.tools.search limit must be a number" }
        : ops.search(query, limit),
    describe: (id) => ops.describe(id),
  };
  return {
    options: { ...cellSpec.options, memoryLimitBytes },
    clock: deps.clock,
    signal: deps.signal,
    vms: deps.vms,
    ...(deps.admittedAt !== undefined ? { admittedAt: deps.admittedAt } : {}),
    tools: TOOL_SEARCH_TOOLS,
    handlers,
    pause,
    telemetry: () => turnTelemetry(spec, new Catalog(spec.catalog), counters),
    label: { cell: "tool_search_code", timeoutKey: "codeTimeoutMs" },
  };
}

/**
 * `tool_search_code { code }`: run the body. It ends with a result, or suspended on client calls
 * (the caller parks it: only the caller can move it on); anything else that would park is
 * cancelled at the deadline instead (`toolSearchEnd`).
 */
export async function runToolSearchCode(env: CellEnvironment, input: unknown): Promise<CellEnd> {
  const end = await runExec(input, env, (raw) => {
    const parsed = parseToolSearchInput("tool_search_code", raw);
    if (!parsed.ok) return { ok: false, message: parsed.message };
    if (!("code" in parsed.input)) return { ok: false, message: "invalid tool_search_code input" };
    return { ok: true, input: { code: parsed.input.code, language: "javascript", restartSafe: false } };
  });
  return toolSearchEnd(end, env);
}

/**
 * How a `tool_search_code` cell may stop: it parks only while client calls wait for the caller.
 * Host tools still running at the deadline are cancelled and the call fails with `timeout` (the
 * seed's Node child is killed at its timeout, continuations included).
 */
export function toolSearchEnd(end: CellEnd, env: CellEnvironment): CellEnd {
  if (end.kind === "result" || end.cell.bridge.clientCallsInFlight > 0) return end;
  const message = `tool_search_code did not finish within codeTimeoutMs (${env.options.timeoutMs}); tool calls still running were cancelled`;
  return { kind: "result", result: closeWith(end.cell, failedWithBudget(end.cell, message, "timeout", env)) };
}

/** A `tool_call` answered before the client ran it: the client tool's call, handed to the caller (no cell, no runId). */
export type ClientCallWaiting = {
  status: "waiting";
  reason: "pending_tools";
  pendingToolCalls: CodeModePendingToolCall[];
  telemetry: CodeModeTelemetry;
};

/** How a Tool Search turn hands one `tool_call` of a client tool to its caller (the session object stores it). */
export type ToolCallClientHandOut = (
  entry: CatalogEntry,
  args: Record<string, unknown>,
  telemetry: () => CodeModeTelemetry,
) => Promise<CodeModeResult | ClientCallWaiting>;

/** `tool_search`, `tool_describe`, `tool_call` (mode "tools"): one operation, answered like a cell. */
export async function callToolSearchTool(
  spec: TurnSpec,
  counters: TurnCounters,
  deps: TurnDeps,
  tool: Exclude<ToolSearchInput["tool"], "tool_search_code">,
  raw: unknown,
  /** Hands a client tool's call to the caller (absent: such a call fails, the client runs it). */
  handOut?: ToolCallClientHandOut,
): Promise<CodeModeResult | ClientCallWaiting> {
  const ops = new ToolSearchOps(spec, toolSearchOf(spec), counters, deps, deps.policy?.({ nested: true }));
  const telemetry = () => turnTelemetry(spec, new Catalog(spec.catalog), counters);
  const parsed = parseToolSearchInput(tool, raw);
  if (!parsed.ok) return failed(parsed.message, "invalid_input", telemetry());
  const input = parsed.input;
  if (input.tool === "tool_call" && handOut) {
    const entry = ops.catalog.lookup(input.id);
    if (entry?.source === "client") {
      ops.counted(entry);
      return handOut(entry, input.args, telemetry);
    }
  }
  const settlement =
    input.tool === "tool_search"
      ? ops.search(input.query, input.limit)
      : input.tool === "tool_describe"
        ? ops.describe(input.id)
        : input.tool === "tool_call"
          ? await ops.call(input.id, input.args, deps.signal)
          : ({ ok: false, message: "not a structured Tool Search tool" } as Settlement);
  if (!settlement.ok) return failed(settlement.message, undefined, telemetry());
  return { status: "completed", value: settlement.text === undefined ? null : JSON.parse(settlement.text), telemetry: telemetry() };
}
