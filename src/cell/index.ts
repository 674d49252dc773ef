export { runExec, driveCell } from "./cell-runner";
export { budgetMessage, closeWith, failed, failedWithBudget, queuedPastDeadline } from "./cell-results";
export { cellBridge, CODE_MODE_LABEL, TOOL_SEARCH_TOOLS, type CellEnd, type CellEnvironment, type CellLabel, type LiveCell } from "./live-cell";
export { parseExecInput } from "./exec-input";
export { type ParsedExecInput, type ExecInputResult } from "./exec-input";
