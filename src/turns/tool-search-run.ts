import { BudgetPause } from "../policy";
import type { CallPolicy } from "../tools";
import type { BridgeHandlers, Settlement } from "../bridge";
import { Catalog } from "../catalog";
import { closeWith, failed, failedWithBudget, runExec, type CellEnvironment } from "../cell";
import type { CodeModeResult } from "../code-mode";
import { utf8ByteLength } from "../code-mode";
import { parseToolSearchInput, searchLimit, ToolSearchCatalog, toolSearchId, type ToolSearchInput } from "../tool-search";
import type { TurnDeps } from "./run-tool";
import { executeEntry } from "./tool-handlers";
import { turnTelemetry } from "./telemetry";
import { recordCalled, type TurnCounters, type TurnSpec, type TurnToolSearch } from "./turn-spec";

/**
 * Tool Search at run time (seed 004): the same catalog, executor and policy as code mode, seen
 * through Tool Search ids. `tool_search_code` runs its body in a fresh QuickJS VM whose only
 * globals are `console` and `openclaw.tools`, within `codeTimeoutMs`, with every other limit of
 * an `exec` cell (CPU ticks, memory, output budget, source checks). It never parks: work still
 * running at the deadline is cancelled and the call fails with `timeout`. `tool_search`,
 * `tool_describe` and `tool_call` are the same operations as structured tools.
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
    return { ok: true, text };
  }

  describe(id: string): Settlement {
    this.counters.describe++;
    const entry = this.catalog.lookup(id);
    if (!entry) return unknownId(id);
    const text = JSON.stringify(this.catalog.describe(entry));
    if (utf8ByteLength(text) > this.maxBytes)
      return { ok: false, message: `${entry.toolName}'s description is larger than maxOutputBytes (${this.maxBytes})` };
    return { ok: true, text };
  }

  async call(id: string, input: unknown, signal: AbortSignal, callId?: string): Promise<Settlement> {
    this.counters.call++;
    const entry = this.catalog.lookup(id);
    if (!entry) return unknownId(id);
    recordCalled(this.counters, { tool: entry.toolName, id: toolSearchId(entry), source: entry.source });
    if (entry.source === "client") return { ok: false, message: `${entry.toolName} is a client tool: the client runs it` };
    const startedAt = this.deps.clock.now();
    const settlement = await executeEntry(
      entry,
      entry.toolName,
      input,
      { ...this.deps, policy: this.policy },
      signal,
      this.maxBytes,
      undefined,
      callId,
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
function unknownId(id: string): Settlement {
  return { ok: false, message: `${JSON.stringify(id.slice(0, 200))} is not a tool of this run; use an id from search results` };
}

function toolSearchOf(spec: TurnSpec): TurnToolSearch {
  if (!spec.toolSearch) throw new Error("not a Tool Search turn");
  return spec.toolSearch;
}

/** `tool_search_code`: run the body; anything that would park is cancelled at the deadline instead. */
export async function runToolSearchCode(spec: TurnSpec, counters: TurnCounters, deps: TurnDeps, input: unknown): Promise<CodeModeResult> {
  const ts = toolSearchOf(spec);
  const pause = new BudgetPause(deps.clock);
  const ops = new ToolSearchOps(spec, ts, counters, deps, deps.policy?.({ nested: true, pause }));
  const memoryLimitBytes = deps.vms.pool.ledger.effectiveLimit(spec.options.memoryLimitBytes);
  const handlers: Omit<BridgeHandlers, "output"> = {
    call: (request, signal) => ops.call(request.tool, request.input, signal, request.callId),
    isClientTool: () => false,
    clientCalled: () => undefined,
    toolName: (id) => ops.catalog.lookup(id)?.toolName ?? id,
    search: (query, limit) =>
      limit !== null && (typeof limit !== "number" || !Number.isFinite(limit))
        ? { ok: false, message: "openclaw.tools.search limit must be a number" }
        : ops.search(query, limit),
    describe: (id) => ops.describe(id),
  };
  const env: CellEnvironment = {
    options: { ...spec.options, timeoutMs: ts.codeTimeoutMs, languages: ["javascript"], memoryLimitBytes },
    clock: deps.clock,
    signal: deps.signal,
    vms: deps.vms,
    ...(deps.admittedAt !== undefined ? { admittedAt: deps.admittedAt } : {}),
    tools: { toolSearch: true },
    handlers,
    pause,
    telemetry: () => turnTelemetry(spec, new Catalog(spec.catalog), counters),
    label: { cell: "tool_search_code", timeoutKey: "codeTimeoutMs" },
  };
  const end = await runExec(input, env, (raw) => {
    const parsed = parseToolSearchInput("tool_search_code", raw);
    return parsed.ok && parsed.input.tool === "tool_search_code"
      ? { ok: true, input: { code: parsed.input.code, language: "javascript", restartSafe: false } }
      : { ok: false, message: parsed.ok ? "invalid tool_search_code input" : parsed.message };
  });
  if (end.kind === "result") return end.result;
  // The seed's Node child is killed at its timeout, continuations included: nothing parks here.
  const message = `tool_search_code did not finish within codeTimeoutMs (${ts.codeTimeoutMs}); tool calls still running were cancelled`;
  return closeWith(end.cell, failedWithBudget(end.cell, message, "timeout", env));
}

/** `tool_search`, `tool_describe`, `tool_call` (mode "tools"): one operation, answered like a cell. */
export async function callToolSearchTool(
  spec: TurnSpec,
  counters: TurnCounters,
  deps: TurnDeps,
  tool: Exclude<ToolSearchInput["tool"], "tool_search_code">,
  raw: unknown,
): Promise<CodeModeResult> {
  const ops = new ToolSearchOps(spec, toolSearchOf(spec), counters, deps, deps.policy?.({ nested: true }));
  const telemetry = () => turnTelemetry(spec, new Catalog(spec.catalog), counters);
  const parsed = parseToolSearchInput(tool, raw);
  if (!parsed.ok) return failed(parsed.message, "invalid_input", telemetry());
  const input = parsed.input;
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
