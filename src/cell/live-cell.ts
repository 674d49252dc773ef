import type { CodeModeResult, CodeModeTelemetry } from "../code-mode";
import { OutputBudget } from "../code-mode";
import type { ResolvedCodeModeOptions } from "../config";
import { HostBridge, type BridgeHandlers } from "../bridge";
import type { Clock } from "../runtime";
import type { GuestVm } from "../runtime";
import type { InterruptGuard } from "../runtime";
import type { CellVms } from "../runtime";
import { MIN_REQUEST_BYTES } from "../limits";

export type CellEnvironment = {
  options: ResolvedCodeModeOptions;
  clock: Clock;
  signal: AbortSignal;
  /** Where VMs come from (the isolate's pool and memory ledger) and who owns them. */
  vms: CellVms;
  /**
   * What the guest sees: code mode's tool globals and `catalog.all()` handles (metadata in catalog
   * order, as JSON built once per turn), or Tool Search's `openclaw.tools` bridge alone.
   */
  tools: { metadataJson: string; namesJson: string; mcpJson?: string; namespacesJson?: string } | { toolSearch: true };
  /** How failures name the cell and its time limit (code mode's words unless set). */
  label?: CellLabel;
  handlers: Omit<BridgeHandlers, "output">;
  telemetry(): CodeModeTelemetry;
  /**
   * When the cell was admitted to its session's queue (the clock's time): its deadline counts from
   * here, not from when it starts (absent: from when it starts).
   */
  admittedAt?: number;
  /**
   * Operator approvals being awaited: the cell's deadline moves by `pausedMs()`, it never parks or
   * times out while `active`, and it may give its VM memory back until `whenIdle()` (cell-sleep.ts).
   */
  pause?: { readonly active: boolean; pausedMs(): number; whenIdle(): Promise<void> };
};

/** Tool Search's cell tools (one object, so its VMs share one setup image). */
export const TOOL_SEARCH_TOOLS: { toolSearch: true } = Object.freeze({ toolSearch: true as const });

export type CellLabel = { cell: string; timeoutKey: string };

export const CODE_MODE_LABEL: CellLabel = { cell: "code mode cell", timeoutKey: "timeoutMs" };

/**
 * A cell that stopped with host work outstanding; the session decides whether to park it. `vm` is
 * replaced when the cell sleeps through an operator decision (cell-sleep.ts): read it from here.
 */
export type LiveCell = { vm: GuestVm; bridge: HostBridge; budget: OutputBudget; guard: InterruptGuard };

export type CellEnd = { kind: "result"; result: CodeModeResult } | { kind: "suspended"; reason: "pending_tools" | "yield"; cell: LiveCell };

/**
 * The bridge of a live cell: the turn's handlers, output into the cell's budget, and the
 * limits from its options. One construction for `exec` and for every `wait` that cannot reuse
 * the bridge it parked with.
 */
export function cellBridge(env: CellEnvironment, budget: OutputBudget): HostBridge {
  return new HostBridge(
    { ...env.handlers, output: (kind, text) => (kind === "json" ? budget.pushJson(text) : budget.pushText(text)) },
    {
      maxPendingToolCalls: env.options.maxPendingToolCalls,
      maxRequestBytes: Math.max(MIN_REQUEST_BYTES, env.options.maxOutputBytes),
      maxClientInputBytes: env.options.maxOutputBytes,
    },
    env.clock,
  );
}
