/**
 * Pre-execution source checks for code-mode cells (seed 002, `exec` rules).
 *
 * These checks give the model actionable `invalid_input` guidance before a cell runs. They are a
 * first line of defence only: the real boundary is the QuickJS-WASI guest, which has no module
 * loader, filesystem, network or subprocess access at all.
 *
 * Both functions are pure and synchronous; neither loads the TypeScript compiler.
 */

export { checkModuleAccess } from "./module-access";
export { checkShellCommand } from "./shell-commands";
export type { SourceCheck } from "./source-check-result";
