/**
 * Cell source: everything done to a cell's code before a VM exists (seed 002, `exec` rules and
 * "TypeScript"): the shell-command and module-access checks and the lazily loaded TypeScript
 * transform.
 */
export { checkModuleAccess, checkShellCommand, checkSource, type SourceCheck } from "./source-checks";
