/**
 * Cell source: everything done to a cell's code before a VM exists (seed 002, `exec` rules and
 * "TypeScript"): the shell-command and module-access checks and the lazily loaded TypeScript
 * transform, all paid from the cell's one time budget.
 */
export { CellBudget } from "./cell-budget";
export { prepareSource, type PreparedSource } from "./prepare-source";
export { checkModuleAccess, checkShellCommand, checkSource, type SourceCheck } from "./source-checks";
export * from "./cell-budget";
export * from "./js-scanner";
export * from "./line-starts";
export * from "./prepare-source";
export * from "./source-checks";
export * from "./typescript-diagnostics";
export * from "./typescript-transform";
