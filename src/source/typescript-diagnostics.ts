/**
 * Messages for TypeScript transform failures. A hostile cell can produce one diagnostic per
 * line (tens of thousands), so the cost here must not grow with their number beyond a linear
 * pass: line starts are computed once per cell, and only the first MAX_DIAGNOSTICS entries are
 * located and formatted; the rest are only counted.
 */
import type * as TS from "typescript";
import { lineAndColumn, lineStarts } from "./line-starts";

export const MAX_DIAGNOSTICS = 5;
const MAX_MESSAGE_CHARS = 1500;
const MAX_DIAGNOSTIC_CHARS = 300;

/** Maps positions in the compiled file (the code inside a wrapper) to the user's editor lines. */
export class UserPositions {
  private starts: number[] | undefined;

  /** `offset`: where the user's code starts in the compiled file. */
  constructor(
    private readonly source: string,
    private readonly offset: number,
  ) {}

  /** 1-based line:column in the user's code; positions in the wrapper clamp to its start or end. */
  at(filePosition: number): { line: number; column: number } {
    this.starts ??= lineStarts(this.source);
    return lineAndColumn(this.starts, this.source.length, filePosition - this.offset);
  }
}

function bound(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 3)}...` : text;
}

function finish(lines: string[], total: number): string {
  let message = `TypeScript transform failed:\n${lines.join("\n")}`;
  if (total > lines.length) message += `\n(${total - lines.length} more)`;
  return bound(message, MAX_MESSAGE_CHARS);
}

/** The first few compiler errors with the user's line:column, and how many more there were. */
export function formatDiagnostics(ts: typeof TS, errors: readonly TS.Diagnostic[], positions: UserPositions): string {
  const lines = errors.slice(0, MAX_DIAGNOSTICS).map((d) => {
    const text = bound(ts.flattenDiagnosticMessageText(d.messageText, " "), MAX_DIAGNOSTIC_CHARS);
    if (!d.file || d.start === undefined) return `  error TS${d.code}: ${text}`;
    const { line, column } = positions.at(d.start);
    return `  line ${line}:${column} - error TS${d.code}: ${text}`;
  });
  return finish(lines, errors.length);
}

export type ModuleSyntaxProblem = { pos: number; text: string };

/** Module syntax found in the parsed cell (at most MAX_DIAGNOSTICS kept, `total` counted). */
export function formatModuleSyntax(problems: readonly ModuleSyntaxProblem[], total: number, positions: UserPositions): string {
  const lines = problems.slice(0, MAX_DIAGNOSTICS - 1).map((p) => {
    const { line, column } = positions.at(p.pos);
    return `  line ${line}:${column} - ${p.text}`;
  });
  lines.push('  Tools are async globals; use `const [tool] = await catalog.search("...")` instead of importing modules.');
  return finish(lines, total + 1);
}
