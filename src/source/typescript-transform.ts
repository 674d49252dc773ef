/**
 * TypeScript cells (seed 002, "TypeScript"): a source transform only. One TypeScript string in,
 * one JavaScript string out; no type checking, no module resolution, no `import`/`require`.
 *
 * The compiler is loaded lazily on the first TypeScript cell (typescript-compiler.ts), so
 * JavaScript cells never evaluate it.
 *
 * The model's code is an async *function body* (top-level `await` and `return` are allowed; the
 * caller wraps the result as `async function () { <code> }`). `transpileModule` rejects a
 * top-level `return`, so the source is wrapped in `async function __cm_cell__() { ... }` here,
 * transpiled, checked to still be exactly that one function, and unwrapped again.
 */
import type * as TS from "typescript";
import { loadTypeScriptCompiler, type TypeScriptApi } from "./typescript-compiler";
import { formatDiagnostics, formatModuleSyntax, MAX_DIAGNOSTICS, UserPositions, type ModuleSyntaxProblem } from "./typescript-diagnostics";
import { logRecord } from "../observability";

export { isTypeScriptCompilerLoaded, loadTypeScriptCompiler } from "./typescript-compiler";
export { isTypeScriptStripperLoaded, routesToCompiler, stripTypeScript } from "./typescript-strip";

export type TranspileResult = { ok: true; code: string } | { ok: false; message: string; unavailable?: boolean };

/**
 * The compiler's emit resolves every identifier by walking up its ancestors, so its cost grows with
 * the sum of the identifiers' depths in the syntax tree: quadratic in a flat chain (`a + a + … + a`
 * or `(a, a, …, a)` is a left-deep tree; no bracket nests, so MAX_NESTING never sees it). A hostile
 * tester's 100,000-term chain took 135 s of host time. Ordinary code stays far below this bound (a
 * megabyte of it sums to a few million); a cell over it is refused before the transform runs.
 */
export const MAX_IDENTIFIER_DEPTH_SUM = 20_000_000;

const WRAPPER_NAME = "__cm_cell__";
const WRAPPER_HEAD = `async function ${WRAPPER_NAME}() {\n`;
const WRAPPER_TAIL = "\n}";

export async function transpileTypeScript(source: string): Promise<TranspileResult> {
  let ts: TypeScriptApi;
  try {
    ts = await loadTypeScriptCompiler();
  } catch (error) {
    logRecord("host_error", { where: "typescript.load", error });
    return { ok: false, unavailable: true, message: `TypeScript compiler unavailable: ${error instanceof Error ? error.message : String(error)}` };
  }

  const wrapped = WRAPPER_HEAD + source + WRAPPER_TAIL;
  const problems: ModuleSyntaxProblem[] = [];
  let problemCount = 0;
  const report = (pos: number, text: string) => {
    if (problemCount++ < MAX_DIAGNOSTICS) problems.push({ pos, text });
  };
  let structureOk = false;
  let wrapperSourceFile: TS.SourceFile | undefined;
  let tooDeep: { line: number } | undefined;

  // A `before` transformer sees the parsed TypeScript AST (before types are erased). It checks
  // that the wrapper is still the only top-level statement (code like `} function f() {` would
  // otherwise escape it) and reports module syntax, which the parser accepts inside a function
  // body and only the (skipped) checker would reject.
  //
  // A file with syntax errors is never run, and its diagnostics are already known (they are the
  // parser's): emitting it anyway costs more than parsing it did (the built-in transforms and
  // the emitter walk every node of a possibly huge broken tree), so it is replaced by an empty
  // file here. `parseDiagnostics` is internal to the compiler; without it, the file is emitted.
  const inspect: TS.TransformerFactory<TS.SourceFile> = () => (sourceFile) => {
    const parseErrors = (sourceFile as { parseDiagnostics?: readonly TS.Diagnostic[] }).parseDiagnostics;
    if (parseErrors?.some((d) => d.category === ts.DiagnosticCategory.Error)) return ts.factory.updateSourceFile(sourceFile, []);
    tooDeep = overDeep(ts, sourceFile);
    if (tooDeep) return ts.factory.updateSourceFile(sourceFile, []);
    wrapperSourceFile = sourceFile;
    const [only] = sourceFile.statements;
    structureOk =
      sourceFile.statements.length === 1 &&
      only !== undefined &&
      ts.isFunctionDeclaration(only) &&
      only.name?.text === WRAPPER_NAME &&
      only.body !== undefined &&
      only.body.end === wrapped.length;
    if (structureOk) collectModuleSyntax(ts, sourceFile, report);
    return sourceFile;
  };

  let output: TS.TranspileOutput;
  try {
    output = ts.transpileModule(wrapped, {
      fileName: "cell.ts",
      reportDiagnostics: true,
      compilerOptions: {
        target: ts.ScriptTarget.ES2023,
        module: ts.ModuleKind.ESNext,
        // Syntax only: never resolve, type-check or emit helpers imports.
        noResolve: true,
        noLib: true,
        importHelpers: false,
        sourceMap: false,
        inlineSourceMap: false,
        removeComments: false,
        newLine: ts.NewLineKind.LineFeed,
      },
      transformers: { before: [inspect] },
    });
  } catch (error) {
    return { ok: false, message: `TypeScript transform failed: ${error instanceof Error ? error.message : String(error)}` };
  }

  if (tooDeep) {
    return {
      ok: false,
      message:
        `This TypeScript cell chains too many operators or commas in one expression (around line ${Math.max(1, tooDeep.line - 1)}) ` +
        "for the TypeScript transform to handle in time. Split long chains into several statements, or build the value in a loop.",
    };
  }

  const positions = new UserPositions(source, WRAPPER_HEAD.length);
  const errors = (output.diagnostics ?? []).filter((d) => d.category === ts.DiagnosticCategory.Error);
  if (errors.length > 0) return { ok: false, message: formatDiagnostics(ts, errors, positions) };

  if (!structureOk || !wrapperSourceFile) {
    return {
      ok: false,
      message:
        "TypeScript transform failed: unbalanced braces: a `}` closes the code body before its end. " +
        "The code must be a function body (statements, top-level `await` and `return` are fine).",
    };
  }
  if (problemCount > 0) return { ok: false, message: formatModuleSyntax(problems, problemCount, positions) };

  const unwrapped = unwrap(output.outputText);
  if (unwrapped === undefined) {
    return { ok: false, message: "TypeScript transform failed: unexpected compiler output shape." };
  }
  return { ok: true, code: unwrapped };
}

/**
 * Whether the sum of the identifiers' depths passes MAX_IDENTIFIER_DEPTH_SUM, and the line of the
 * identifier that passed it. Iterative (a left-deep chain is as deep as it is long), one visit per node.
 */
function overDeep(ts: TypeScriptApi, sourceFile: TS.SourceFile): { line: number } | undefined {
  const nodes: TS.Node[] = [sourceFile];
  const depths: number[] = [0];
  let sum = 0;
  while (nodes.length > 0) {
    const node = nodes.pop()!;
    const depth = depths.pop()!;
    if (node.kind === ts.SyntaxKind.Identifier) {
      sum += depth;
      if (sum > MAX_IDENTIFIER_DEPTH_SUM) return { line: sourceFile.getLineAndCharacterOfPosition(node.pos).line + 1 };
    }
    ts.forEachChild(node, (child) => {
      nodes.push(child);
      depths.push(depth + 1);
    });
  }
  return undefined;
}

/**
 * Module syntax the parser accepts in a function body but that can never run in a cell. An
 * `export` on a member of a `namespace` block is namespace syntax (compiled to a property
 * assignment), not module syntax.
 */
function collectModuleSyntax(ts: TypeScriptApi, sourceFile: TS.SourceFile, report: (pos: number, text: string) => void): void {
  const visit = (node: TS.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isImportEqualsDeclaration(node)) {
      report(node.getStart(sourceFile), "`import` declarations are not available in code mode.");
    } else if (ts.isExportDeclaration(node) || ts.isExportAssignment(node)) {
      report(node.getStart(sourceFile), "`export` is not available in code mode.");
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      report(node.getStart(sourceFile), "dynamic `import(...)` is not available in code mode.");
    } else if (ts.isMetaProperty(node) && node.keywordToken === ts.SyntaxKind.ImportKeyword) {
      report(node.getStart(sourceFile), "`import.meta` is not available in code mode.");
    } else if (ts.isImportTypeNode(node)) {
      report(node.getStart(sourceFile), '`import("...")` types are not available in code mode.');
    } else if (ts.canHaveModifiers(node) && !ts.isModuleBlock(node.parent)) {
      const exported = ts.getModifiers(node)?.find((m) => m.kind === ts.SyntaxKind.ExportKeyword);
      if (exported) report(exported.getStart(sourceFile), "`export` is not available in code mode.");
    }
    ts.forEachChild(node, visit);
  };
  ts.forEachChild(sourceFile, visit);
}

/**
 * Output is `[helpers]\nasync function __cm_cell__() {\n<body>\n}\n`. Helpers (emitted for
 * decorators or `using`) are plain `var` statements, so they move into the body unchanged.
 * The body's closing brace is the last `}` of the output: anything after it would be a second
 * top-level statement, which the structure check already excluded.
 */
function unwrap(outputText: string): string | undefined {
  const head = `async function ${WRAPPER_NAME}() {`;
  const start = outputText.indexOf(head);
  if (start === -1) return undefined;
  const tailStart = outputText.trimEnd();
  if (!tailStart.endsWith("}")) return undefined;
  const preamble = outputText.slice(0, start);
  let body = tailStart.slice(start + head.length, tailStart.length - 1);
  if (body.startsWith("\n")) body = body.slice(1);
  body = body.replace(/\s+$/, "");
  return preamble.trim() === "" ? body : `${preamble.trimEnd()}\n${body}`;
}
