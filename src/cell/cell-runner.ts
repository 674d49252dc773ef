import type { CodeModeErrorCode, CodeModeResult, CodeModeTelemetry } from "../code-mode/types";
import { OutputBudget } from "../code-mode/output-budget";
import type { ResolvedCodeModeOptions } from "../config";
import { HostBridge, type BridgeHandlers } from "../bridge/host-bridge";
import { jsonTooDeep } from "../bridge/json-depth";
import { logRecord } from "../observability/log";
import type { Clock } from "../runtime/clock";
import { GuestFaultError } from "../runtime/guest-fault";
import { GuestVm } from "../runtime/guest-vm";
import { InterruptGuard, type BudgetTrip } from "../runtime/interrupt-guard";
import type { CellVms } from "../runtime/vm-pool";
import { CellBudget, prepareSource } from "../source";
import { parseExecInput } from "./exec-input";
import { MAX_JSON_DEPTH, MIN_REQUEST_BYTES } from "../limits";

export type CellEnvironment = {
  options: ResolvedCodeModeOptions;
  clock: Clock;
  signal: AbortSignal;
  /** Where VMs come from (the isolate's pool and memory ledger) and who owns them. */
  vms: CellVms;
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
    // Waits for room in the isolate's VM memory within the cell's own deadline.
    const taken = await env.vms.pool.take(env.options.memoryLimitBytes, { deadline, clock: env.clock, signal: env.signal, owner: env.vms.owner });
    if (!taken.ok) {
      bridge.close();
      if (taken.reason === "aborted") return rejected("the code mode run was aborted", "aborted", env);
      // No room: the VM could not start, which the seed calls runtime_unavailable; not a
      // timeout (the program never ran) and not internal_error (nothing broke).
      return rejected(taken.message, "runtime_unavailable", env);
    }
    vm = taken.vm.bind(guard, bridge);
    env.vms.pool.refillSoon(env.options.memoryLimitBytes);
  } catch (error) {
    logRecord("host_error", { where: "exec.vm_start", error });
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
        // Each delivery is host work done for the guest: a program that keeps re-arming
        // zero-delay timers spends its budget even where the clock is frozen.
        cell.guard.chargeSettles(ready.length);
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
      // When to park: as soon as only the caller can move the program on (client results),
      // or at the deadline while host tools still run. A cell's own timers never park it:
      // they run inside its deadline (they keep their due times across a park for other reasons).
      const hostCalls = bridge.hostCallsInFlight;
      if (hostCalls === 0 && bridge.clientCallsInFlight > 0) return { kind: "suspended", reason: "pending_tools", cell };
      const remaining = deadline - env.clock.now();
      if (hostCalls === 0) {
        const due = bridge.nextTimerDue();
        if (remaining <= 0 || (due !== undefined && due > deadline)) {
          return { kind: "result", result: closeWith(cell, failedWithBudget(cell, timerPastDeadline(env.options.timeoutMs), "timeout", env)) };
        }
      } else if (remaining <= 0) return { kind: "suspended", reason: "pending_tools", cell };
      await bridge.waitForWork(remaining, env.signal);
    }
  } catch (error) {
    return { kind: "result", result: endCell(cell, error, env) };
  }
}

function timerPastDeadline(timeoutMs: number): string {
  return (
    `code mode cell would wait past its deadline (timeoutMs ${timeoutMs}) for its own timers; ` +
    "timers run inside the deadline, and only tool calls, client results and yield_control() park a cell"
  );
}

/** A failure that shares the cell's output budget (its error bounded, `[error truncated]`). */
export function failedWithBudget(cell: LiveCell, message: string, code: CodeModeErrorCode | undefined, env: CellEnvironment): CodeModeResult {
  const projected = cell.budget.failed(message);
  return { status: "failed", error: projected.error, ...(code ? { code } : {}), ...(projected.output ? { output: projected.output } : {}), telemetry: env.telemetry() };
}

/** The message for a cell stopped by its budget, naming the limit actually reached. */
export function budgetMessage(trip: BudgetTrip | null, timeoutMs: number): string {
  if (trip === "cpu_budget") {
    return (
      `code mode cell used up its CPU budget for timeoutMs ${timeoutMs} and was stopped ` +
      "(guest work is counted, since the clock does not advance during synchronous code); do less work per cell"
    );
  }
  return `code mode cell exceeded timeoutMs (${timeoutMs}) and was stopped`;
}

function faultResult(error: GuestFaultError, env: CellEnvironment, cell: LiveCell): CodeModeResult {
  const fault = error.fault;
  const o = env.options;
  let message: string;
  let code: CodeModeErrorCode | undefined;
  if (fault.kind === "interrupted") {
    if (env.signal.aborted) {
      message = "the code mode run was aborted";
      code = "aborted";
    } else {
      message = budgetMessage(cell.guard.reason, o.timeoutMs);
      code = "timeout";
    }
  } else if (fault.kind === "out_of_memory") {
    message = `code mode cell exceeded memoryLimitBytes (${o.memoryLimitBytes}) and its VM was terminated`;
  } else if (fault.kind === "engine_limit") {
    // The program's own doing (a string past the engine's maximum, a stack overflow): its error.
    message = `the program hit an engine limit (${fault.detail.split("\n")[0]!.slice(0, 200)}) and its VM was terminated`;
  } else {
    // Never echo engine internals beyond their one-line summary.
    message = `the code mode VM stopped unexpectedly (${fault.detail.split("\n")[0]!.slice(0, 200)})`;
    code = "internal_error";
  }
  const projected = cell.budget.failed(message);
  return { status: "failed", error: projected.error, ...(code ? { code } : {}), ...(projected.output ? { output: projected.output } : {}), telemetry: env.telemetry() };
}

/** A guest call threw: classify, dispose the VM, report. */
function endCell(cell: LiveCell, error: unknown, env: CellEnvironment): CodeModeResult {
  if (error instanceof GuestFaultError) return closeWith(cell, faultResult(error, env, cell));
  logRecord("host_error", { where: "cell.drive", error });
  return closeWith(cell, failed("internal error in the code mode runtime", "internal_error", env.telemetry()));
}

export function closeWith(cell: LiveCell, result: CodeModeResult): CodeModeResult {
  cell.bridge.close();
  cell.vm.dispose();
  return result;
}
