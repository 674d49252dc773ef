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

/**
 * Deepest bracket nesting a cell may have. QuickJS parses recursively on a bounded stack
 * (GuestVm's maxStackSize): measured in this VM, parsing fails at 545 nested `() => (`, 658
 * `(`, 761 `[` and 1160 `{` blocks. The cap is under half the smallest: ordinary code and data
 * stay far below it, and a cell refused here gets a message that says why, not a VM stack
 * overflow.
 */
export const MAX_NESTING = 256;

/** All checks over one analysis of the cell: shell commands, nesting, then module access. */
export function checkSource(source: string): SourceCheck {
  const structure = analyzeCell(source);
  const shell = checkShellCommand(source, structure.declared);
  if (!shell.ok) return shell;
  const { maxDepth, maxDepthLine } = structure.tokens;
  if (maxDepth > MAX_NESTING) {
    return {
      ok: false,
      message:
        `This cell nests brackets more than ${MAX_NESTING} levels deep (first on line ${maxDepthLine}); ` +
        "the code mode VM cannot compile code nested that deeply. Flatten it: build deep data in a loop, or use helper functions.",
    };
  }
  return checkModuleAccess(source, structure);
}
