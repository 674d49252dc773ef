import type { CodeModeErrorCode, CodeModeResult, CodeModeTelemetry } from "../code-mode";
import { OutputBudget } from "../code-mode";
import { logRecord } from "../observability";
import { GuestFaultError } from "../runtime";
import type { BudgetTrip } from "../runtime";
import { CODE_MODE_LABEL, type CellEnd, type CellEnvironment, type CellLabel, type LiveCell } from "./live-cell";

/**
 * The one home for building a cell's model-facing failures: every diagnostic is bounded by
 * the cell's output budget (`[error truncated]`), names the limit actually reached, and the
 * functions that end a live cell dispose its VM and close its bridge (`closeWith`).
 */

export function failed(error: string, code: CodeModeErrorCode | undefined, telemetry: CodeModeTelemetry): CodeModeResult {
  return { status: "failed", error, ...(code ? { code } : {}), telemetry };
}

/** A failure before any VM exists, bounded by maxOutputBytes like every diagnostic. */
export function rejected(error: string, code: CodeModeErrorCode, env: CellEnvironment): CellEnd {
  const projected = new OutputBudget(env.options.maxOutputBytes).failed(error);
  return { kind: "result", result: failed(projected.error, code, env.telemetry()) };
}

/**
 * A cell whose deadline passed while it was queued behind other cells of its session (seed 002:
 * queued work shares the execution deadline); `outcome` says what happened instead of running.
 */
export function queuedPastDeadline(timeoutMs: number, queuedMs: number, outcome: string, label: CellLabel = CODE_MODE_LABEL): string {
  return (
    `${label.cell} waited ${Math.round(queuedMs)} ms behind other cells of this session and its deadline ` +
    `(${label.timeoutKey} ${timeoutMs}, counted from when it was queued) passed before it could start; ${outcome}`
  );
}

export function timerPastDeadline(timeoutMs: number, label: CellLabel = CODE_MODE_LABEL): string {
  return (
    `${label.cell} would wait past its deadline (${label.timeoutKey} ${timeoutMs}) for its own timers; ` +
    "timers run inside the deadline, and only tool calls, client results and yield_control() park a cell"
  );
}

/** A failure that shares the cell's output budget (its error bounded, `[error truncated]`). */
export function failedWithBudget(cell: LiveCell, message: string, code: CodeModeErrorCode | undefined, env: CellEnvironment): CodeModeResult {
  const projected = cell.budget.failed(message);
  return {
    status: "failed",
    error: projected.error,
    ...(code ? { code } : {}),
    ...(projected.output ? { output: projected.output } : {}),
    telemetry: env.telemetry(),
  };
}

/** The message for a cell stopped by its budget, naming the limit actually reached. */
export function budgetMessage(trip: BudgetTrip | null, timeoutMs: number, label: CellLabel = CODE_MODE_LABEL): string {
  if (trip === "cpu_budget") {
    return (
      `${label.cell} used up its CPU budget for ${label.timeoutKey} ${timeoutMs} and was stopped ` +
      "(guest work is counted, since the clock does not advance during synchronous code); do less work per cell"
    );
  }
  return `${label.cell} exceeded ${label.timeoutKey} (${timeoutMs}) and was stopped`;
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
      message = budgetMessage(cell.guard.reason, o.timeoutMs, env.label);
      code = "timeout";
    }
  } else if (fault.kind === "out_of_memory") {
    message = `${(env.label ?? CODE_MODE_LABEL).cell} exceeded memoryLimitBytes (${o.memoryLimitBytes}) and its VM was terminated`;
  } else if (fault.kind === "engine_limit") {
    // The program's own doing (a string past the engine's maximum, a stack overflow): its error.
    message = `the program hit an engine limit (${fault.detail.split("\n")[0]!.slice(0, 200)}) and its VM was terminated`;
  } else {
    // Never echo engine internals beyond their one-line summary.
    message = `the code mode VM stopped unexpectedly (${fault.detail.split("\n")[0]!.slice(0, 200)})`;
    code = "internal_error";
  }
  return failedWithBudget(cell, message, code, env);
}

/** A guest call threw: classify, dispose the VM, report. */
export function endCell(cell: LiveCell, error: unknown, env: CellEnvironment): CodeModeResult {
  if (error instanceof GuestFaultError) return closeWith(cell, faultResult(error, env, cell));
  logRecord("host_error", { where: "cell.drive", error });
  return closeWith(cell, failed("internal error in the code mode runtime", "internal_error", env.telemetry()));
}

export function closeWith(cell: LiveCell, result: CodeModeResult): CodeModeResult {
  cell.bridge.close();
  cell.vm.dispose();
  return result;
}
