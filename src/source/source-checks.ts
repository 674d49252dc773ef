/**
 * Pre-execution source checks for code-mode cells (seed 002, `exec` rules).
 *
 * These checks give the model actionable `invalid_input` guidance before a cell runs. They are a
 * first line of defence only: the real boundary is the QuickJS-WASI guest, which has no module
 * loader, filesystem, network or subprocess access at all.
 *
 * All of them are pure, synchronous and linear in the source length (see cell-budget.ts for how
 * their cost is charged); none loads the TypeScript compiler.
 */
import { analyzeCell } from "./cell-structure";
import { checkModuleAccess } from "./module-access";
import { checkShellCommand } from "./shell-commands";
import type { SourceCheck } from "./source-check-result";

export { checkModuleAccess } from "./module-access";
export { checkShellCommand } from "./shell-commands";
export type { SourceCheck } from "./source-check-result";

/** Both checks over one analysis of the cell: shell commands first, then module access. */
export function checkSource(source: string): SourceCheck {
  const structure = analyzeCell(source);
  const shell = checkShellCommand(source, structure.declared);
  if (!shell.ok) return shell;
  return checkModuleAccess(source, structure);
}
