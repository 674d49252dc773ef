import type { CodeModeErrorCode, CodeModeResult, CodeModeTelemetry } from "../code-mode/types";
import { OutputBudget } from "../code-mode/output-budget";
import type { ResolvedCodeModeOptions } from "../config";
import { HostBridge, type BridgeHandlers } from "../bridge/host-bridge";
import { jsonTooDeep, MAX_JSON_DEPTH } from "../bridge/json-depth";
import type { Clock } from "../runtime/clock";
import { GuestFaultError } from "../runtime/guest-fault";
import { GuestVm } from "../runtime/guest-vm";
import { InterruptGuard } from "../runtime/interrupt-guard";
import { vmPool } from "../runtime/vm-pool";
import { CellBudget, prepareSource } from "../source";
import { parseExecInput } from "./exec-input";

export type CellEnvironment = {
  options: ResolvedCodeModeOptions;
  clock: Clock;
  signal: AbortSignal;
  /** Guest globals / `catalog.all()` handles, in catalog order, as JSON (built once per turn). */
  tools: { metadataJson: string; namesJson: string };
  handlers: Omit<BridgeHandlers, "output">;
  telemetry(): CodeModeTelemetry;
};

/** A cell that stopped with host work outstanding; the session decides whether to park it. */
export type LiveCell = { vm: GuestVm; bridge: HostBridge; budget: OutputBudget; guard: InterruptGuard };

export type CellEnd =
  | { kind: "result"; result: CodeModeResult }
  | { kind: "suspended"; reason: "pending_tools" | "yield"; cell: LiveCell };

/** Requests larger than this never reach a tool (guest → host direction). */
const MIN_REQUEST_BYTES = 1024 * 1024;

export function failed(error: string, code: CodeModeErrorCode | undefined, telemetry: CodeModeTelemetry): CodeModeResult {
  return { status: "failed", error, ...(code ? { code } : {}), telemetry };
}

/** A failure before any VM exists, bounded by maxOutputBytes like every diagnostic. */
function rejected(error: string, code: CodeModeErrorCode, env: CellEnvironment): CellEnd {
  const projected = new OutputBudget(env.options.maxOutputBytes).failed(error);
  return { kind: "result", result: failed(projected.error, code, env.telemetry()) };
}

/** `exec`: validate input, check and transpile the source, run it in a fresh VM, all within one budget. */
export async function runExec(rawInput: unknown, env: CellEnvironment): Promise<CellEnd> {
  // The cell's one deadline, taken before anything else it causes (see src/source/cell-budget.ts).
  const time = new CellBudget(env.clock, env.options.timeoutMs);
  const parsed = parseExecInput(rawInput, env.options.languages);
  if (!parsed.ok) return rejected(parsed.message, "invalid_input", env);
  const prepared = await prepareSource(parsed.input.code, parsed.input.language, time);
  if (!prepared.ok) return rejected(prepared.message, prepared.code, env);
  const source = prepared.code;

  // What the source phase left: the clock deadline and the milliseconds the tick budget stands for.
  const deadline = time.guestDeadline();
  const guard = new InterruptGuard(env.clock, deadline, time.guestBudgetMs());
  const budget = new OutputBudget(env.options.maxOutputBytes);
  const bridge = new HostBridge(
    { ...env.handlers, output: (kind, text) => (kind === "json" ? budget.pushJson(text) : budget.pushText(text)) },
    {
      maxPendingToolCalls: env.options.maxPendingToolCalls,
      maxRequestBytes: Math.max(MIN_REQUEST_BYTES, env.options.maxOutputBytes),
      maxClientInputBytes: env.options.maxOutputBytes,
    },
    env.clock,
  );
  let vm: GuestVm;
  try {
    const limits = { memoryLimitBytes: env.options.memoryLimitBytes };
    vm = (await vmPool.take(limits)).bind(guard, bridge);
    vmPool.refillSoon(limits);
  } catch {
    // Fail closed: an engaged run never falls back to direct tool exposure.
    bridge.close();
    return rejected("QuickJS-WASI runtime is unavailable: the VM could not start", "runtime_unavailable", env);
  }
  const cell: LiveCell = { vm, bridge, budget, guard };
  try {
    vm.installTools(env.tools.metadataJson, env.tools.namesJson);
    vm.start(source);
  } catch (error) {
    return { kind: "result", result: endCell(cell, error, env) };
  }
  return driveCell(cell, deadline, env);
}

/**
 * Run a cell until it settles, fails, asks to yield, or its deadline passes with host
 * work outstanding. Bridge results that arrive within the deadline are delivered in the
 * same call, so a cell awaiting several fast tools completes in one `exec`/`wait`.
 */
export async function driveCell(cell: LiveCell, deadline: number, env: CellEnvironment): Promise<CellEnd> {
  const { vm, bridge } = cell;
  try {
    for (;;) {
      // A budget spent by host-side work (charged bridge bytes) ends the cell as a timeout.
      if (cell.guard.reason) throw new GuestFaultError({ kind: "interrupted" });
      if (env.signal.aborted) {
        cell.guard.trip();
        return { kind: "result", result: closeWith(cell, failed("the code mode run was aborted", "aborted", env.telemetry())) };
      }
      bridge.dispatch();
      const ready = bridge.takeReady();
      if (ready.length > 0) {
        for (const { id, settlement } of ready) {
          vm.settle(id, settlement.ok, settlement.ok ? settlement.text : settlement.message);
        }
        continue;
      }
      if (bridge.yieldRequested) return { kind: "suspended", reason: "yield", cell };
      const status = vm.status();
      if (status.state === "failed" || status.state === "unserializable") {
        const message = vm.errorMessage() ?? "the program failed";
        const code = status.syntax ? "invalid_input" : status.state === "unserializable" ? "output_limit_exceeded" : undefined;
        return { kind: "result", result: closeWith(cell, failedWithBudget(cell, message, code, env)) };
      }
      if (status.state === "completed" && bridge.inflightCount === 0) {
        if (status.failure) {
          return { kind: "result", result: closeWith(cell, failedWithBudget(cell, vm.errorMessage() ?? "unhandled rejection", undefined, env)) };
        }
        const valueJson = vm.valueJson();
        if (valueJson !== undefined && jsonTooDeep(valueJson)) {
          return { kind: "result", result: closeWith(cell, failedWithBudget(cell, `return value is nested deeper than ${MAX_JSON_DEPTH} levels`, "output_limit_exceeded", env)) };
        }
        const projected = cell.budget.completed(valueJson);
        const result: CodeModeResult = { status: "completed", value: projected.value, ...(projected.output ? { output: projected.output } : {}), telemetry: env.telemetry() };
        return { kind: "result", result: closeWith(cell, result) };
      }
      if (bridge.inflightCount === 0 && !status.failure) {
        return {
          kind: "result",
          result: closeWith(cell, failedWithBudget(cell, "the program awaits a promise that nothing will settle (no tool call or timer is pending)", undefined, env)),
        };
      }
      // Only client tools are outstanding: nothing here can settle them, so park now.
      if (!bridge.hasHostWork) return { kind: "suspended", reason: "pending_tools", cell };
      const remaining = deadline - env.clock.now();
      if (remaining <= 0) return { kind: "suspended", reason: "pending_tools", cell };
      await bridge.waitForWork(remaining, env.signal);
    }
  } catch (error) {
    return { kind: "result", result: endCell(cell, error, env) };
  }
}

/** A failure that shares the cell's output budget (its error bounded, `[error truncated]`). */
export function failedWithBudget(cell: LiveCell, message: string, code: CodeModeErrorCode | undefined, env: CellEnvironment): CodeModeResult {
  const projected = cell.budget.failed(message);
  return { status: "failed", error: projected.error, ...(code ? { code } : {}), ...(projected.output ? { output: projected.output } : {}), telemetry: env.telemetry() };
}

function faultResult(error: GuestFaultError, env: CellEnvironment, budget: OutputBudget): CodeModeResult {
  const fault = error.fault;
  const o = env.options;
  let message: string;
  let code: CodeModeErrorCode | undefined;
  if (fault.kind === "interrupted") {
    if (env.signal.aborted) {
      message = "the code mode run was aborted";
      code = "aborted";
    } else {
      message = `code mode cell exceeded its execution budget (timeoutMs ${o.timeoutMs}) and was stopped`;
      code = "timeout";
    }
  } else if (fault.kind === "out_of_memory") {
    message = `code mode cell exceeded memoryLimitBytes (${o.memoryLimitBytes}) and its VM was terminated`;
  } else {
    // Never echo engine internals beyond their one-line summary.
    message = `the code mode VM stopped unexpectedly (${fault.detail.split("\n")[0]!.slice(0, 200)})`;
    code = /stack|recursion/i.test(fault.detail) ? undefined : "internal_error";
  }
  const projected = budget.failed(message);
  return { status: "failed", error: projected.error, ...(code ? { code } : {}), ...(projected.output ? { output: projected.output } : {}), telemetry: env.telemetry() };
}

/** A guest call threw: classify, dispose the VM, report. */
function endCell(cell: LiveCell, error: unknown, env: CellEnvironment): CodeModeResult {
  if (error instanceof GuestFaultError) return closeWith(cell, faultResult(error, env, cell.budget));
  return closeWith(cell, failed("internal error in the code mode runtime", "internal_error", env.telemetry()));
}

export function closeWith(cell: LiveCell, result: CodeModeResult): CodeModeResult {
  cell.bridge.close();
  cell.vm.dispose();
  return result;
}
