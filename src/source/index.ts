/**
 * Cell source: everything done to a cell's code before a VM exists (seed 002, `exec` rules and
 * "TypeScript"): the shell-command and module-access checks and the lazily loaded TypeScript
 * transform, all paid from the cell's one time budget.
 */
export { CellBudget } from "./cell-budget";
export { prepareSource, type PreparedSource } from "./prepare-source";
export { checkModuleAccess, checkShellCommand, checkSource, type SourceCheck } from "./source-checks";
export {
  COSTS,
  describeSource,
  estimateChecksMs,
  estimateTranspileMs,
  estimateGuestCompileMs,
  type BudgetPhase,
  type PlannedPhase,
  type BudgetResult,
} from "./cell-budget";
export { lineStarts, lineAndColumn } from "./line-starts";

export { MAX_NESTING } from "./source-checks";
export { MAX_DIAGNOSTICS, UserPositions, formatDiagnostics, formatModuleSyntax, type ModuleSyntaxProblem } from "./typescript-diagnostics";
export {
  transpileTypeScript,
  isTypeScriptCompilerLoaded,
  isTypeScriptStripperLoaded,
  loadTypeScriptCompiler,
  routesToCompiler,
  stripTypeScript,
  type TranspileResult,
} from "./typescript-transform";
