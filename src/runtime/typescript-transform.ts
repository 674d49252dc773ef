/**
 * TypeScript cells (seed 002, "TypeScript"): a source transform only. One TypeScript string in,
 * one JavaScript string out; no type checking, no module resolution, no `import`/`require`.
 *
 * The compiler (the JS API of `typescript` 5.9, ~9 MB of JavaScript) is loaded lazily with a
 * dynamic import on the first TypeScript cell, so JavaScript cells never evaluate it.
 *
 * The model's code is an async *function body* (top-level `await` and `return` are allowed; the
 * caller wraps the result as `async function () { <code> }`). `transpileModule` rejects a
 * top-level `return`, so the source is wrapped in `async function __cm_cell__() { ... }` here,
 * transpiled, checked to still be exactly that one function, and unwrapped again.
 */
import type * as TS from "typescript";
import { logRecord } from "../observability/log";

export type TranspileResult = { ok: true; code: string } | { ok: false; message: string; unavailable?: boolean };

type TypeScriptApi = typeof TS;

const WRAPPER_NAME = "__cm_cell__";
const WRAPPER_HEAD = `async function ${WRAPPER_NAME}() {\n`;
const WRAPPER_TAIL = "\n}";
/** The user's line 1 is line 2 of the wrapped file. */
const WRAPPER_LINES = 1;

const MAX_DIAGNOSTICS = 5;
const MAX_MESSAGE_CHARS = 1500;
const MAX_DIAGNOSTIC_CHARS = 300;

let compiler: TypeScriptApi | undefined;
let loading: Promise<TypeScriptApi> | undefined;

/** True once the TypeScript compiler module has been loaded (never before the first transpile). */
export function isTypeScriptCompilerLoaded(): boolean {
  return compiler !== undefined;
}

/**
 * `typescript.js` picks its host "system" when it is first evaluated: if `process` looks like
 * Node's (`process.nextTick` set, `process.browser` unset) and `require` exists, it builds a
 * Node file-system host that reads `__filename`, `process.cwd()`, `fs`, `os` ... With
 * `nodejs_compat` (on by default for this compatibility date) workerd has such a `process`, and
 * a bundled Worker has esbuild's `require` shim, so evaluation throws
 * "__filename is not defined". `process.browser = true` is the switch TypeScript itself honours
 * for browser-like hosts; it is set only while the compiler module evaluates and then restored.
 * A transpile-only compiler never needs a host system.
 */
async function importCompilerAsBrowserHost(): Promise<unknown> {
  const proc = (globalThis as { process?: Record<string, unknown> }).process;
  const patch = proc !== undefined && proc !== null && typeof proc === "object" && !proc.browser;
  const hadOwn = patch && Object.prototype.hasOwnProperty.call(proc, "browser");
  const previous = patch ? proc.browser : undefined;
  if (patch) {
    try {
      proc.browser = true;
    } catch (error) {
      // A frozen `process`: nothing to restore; the import reports its own error if any.
      logRecord("host_error", { where: "typescript.process_patch", error });
    }
  }
  try {
    return await import("typescript");
  } finally {
    if (patch) {
      try {
        if (hadOwn) proc.browser = previous;
        else delete proc.browser;
      } catch (error) {
        logRecord("host_error", { where: "typescript.process_restore", error });
      }
    }
  }
}

async function loadCompiler(): Promise<TypeScriptApi> {
  if (compiler) return compiler;
  loading ??= importCompilerAsBrowserHost().then((mod) => {
    // `typescript` is CommonJS: bundlers expose `module.exports` as `default` (and sometimes
    // copy its properties onto the namespace too).
    const api = ((mod as { default?: TypeScriptApi }).default ?? mod) as TypeScriptApi;
    if (typeof api.transpileModule !== "function") throw new Error("typescript.transpileModule is unavailable");
    compiler = api;
    return api;
  });
  try {
    return await loading;
  } catch (error) {
    loading = undefined; // allow a later retry
    throw error;
  }
}

type Problem = { pos: number; text: string };

export async function transpileTypeScript(source: string): Promise<TranspileResult> {
  let ts: TypeScriptApi;
  try {
    ts = await loadCompiler();
  } catch (error) {
    logRecord("host_error", { where: "typescript.load", error });
    return { ok: false, unavailable: true, message: `TypeScript compiler unavailable: ${error instanceof Error ? error.message : String(error)}` };
  }

  const wrapped = WRAPPER_HEAD + source + WRAPPER_TAIL;
  const problems: Problem[] = [];
  let structureOk = false;
  let wrapperSourceFile: TS.SourceFile | undefined;

  // A `before` transformer sees the parsed TypeScript AST (before types are erased). It checks
  // that the wrapper is still the only top-level statement (code like `} function f() {` would
  // otherwise escape it) and reports module syntax, which the parser accepts inside a function
  // body and only the (skipped) checker would reject.
  const inspect: TS.TransformerFactory<TS.SourceFile> = () => (sourceFile) => {
    wrapperSourceFile = sourceFile;
    const [only] = sourceFile.statements;
    structureOk =
      sourceFile.statements.length === 1 &&
      only !== undefined &&
      ts.isFunctionDeclaration(only) &&
      only.name?.text === WRAPPER_NAME &&
      only.body !== undefined &&
      only.body.end === wrapped.length;
    if (structureOk) collectModuleSyntax(ts, sourceFile, problems);
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

  const errors = (output.diagnostics ?? []).filter((d) => d.category === ts.DiagnosticCategory.Error);
  if (errors.length > 0) return { ok: false, message: formatDiagnostics(ts, errors, source) };

  if (!structureOk || !wrapperSourceFile) {
    return {
      ok: false,
      message:
        "TypeScript transform failed: unbalanced braces: a `}` closes the code body before its end. " +
        "The code must be a function body (statements, top-level `await` and `return` are fine).",
    };
  }
  if (problems.length > 0) {
    return { ok: false, message: formatProblems(ts, wrapperSourceFile, problems, source) };
  }

  const unwrapped = unwrap(output.outputText);
  if (unwrapped === undefined) {
    return { ok: false, message: "TypeScript transform failed: unexpected compiler output shape." };
  }
  return { ok: true, code: unwrapped };
}

/** Module syntax the parser accepts in a function body but that can never run in a cell. */
function collectModuleSyntax(ts: TypeScriptApi, sourceFile: TS.SourceFile, problems: Problem[]): void {
  const visit = (node: TS.Node): void => {
    const pos = node.getStart(sourceFile);
    if (ts.isImportDeclaration(node) || ts.isImportEqualsDeclaration(node)) {
      problems.push({ pos, text: "`import` declarations are not available in code mode." });
    } else if (ts.isExportDeclaration(node) || ts.isExportAssignment(node)) {
      problems.push({ pos, text: "`export` is not available in code mode." });
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      problems.push({ pos, text: "dynamic `import(...)` is not available in code mode." });
    } else if (ts.isMetaProperty(node) && node.keywordToken === ts.SyntaxKind.ImportKeyword) {
      problems.push({ pos, text: "`import.meta` is not available in code mode." });
    } else if (ts.isImportTypeNode(node)) {
      problems.push({ pos, text: "`import(\"...\")` types are not available in code mode." });
    } else if (ts.canHaveModifiers(node)) {
      const exported = ts.getModifiers(node)?.find((m) => m.kind === ts.SyntaxKind.ExportKeyword);
      if (exported) problems.push({ pos: exported.getStart(sourceFile), text: "`export` is not available in code mode." });
    }
    ts.forEachChild(node, visit);
  };
  ts.forEachChild(sourceFile, visit);
}

function positionInSource(
  ts: TypeScriptApi,
  file: TS.SourceFile,
  pos: number,
  source: string,
): { line: number; column: number } {
  const { line, character } = ts.getLineAndCharacterOfPosition(file, pos);
  const userLine = line - WRAPPER_LINES + 1; // 1-based line in the model's code
  const sourceLines = source.split(/\r\n|\r|\n/);
  if (userLine < 1) return { line: 1, column: 1 };
  if (userLine > sourceLines.length) {
    // The wrapper's closing line: report "end of code".
    const lastLine = sourceLines.length;
    return { line: lastLine, column: (sourceLines[lastLine - 1]?.length ?? 0) + 1 };
  }
  return { line: userLine, column: character + 1 };
}

function bound(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 3)}...` : text;
}

function finish(lines: string[], total: number): string {
  const shown = lines.slice(0, MAX_DIAGNOSTICS);
  let message = `TypeScript transform failed:\n${shown.join("\n")}`;
  if (total > shown.length) message += `\n(${total - shown.length} more)`;
  return bound(message, MAX_MESSAGE_CHARS);
}

function formatDiagnostics(ts: TypeScriptApi, diagnostics: readonly TS.Diagnostic[], source: string): string {
  const lines = diagnostics.map((d) => {
    const text = bound(ts.flattenDiagnosticMessageText(d.messageText, " "), MAX_DIAGNOSTIC_CHARS);
    if (!d.file || d.start === undefined) return `  error TS${d.code}: ${text}`;
    const { line, column } = positionInSource(ts, d.file, d.start, source);
    return `  line ${line}:${column} - error TS${d.code}: ${text}`;
  });
  return finish(lines, diagnostics.length);
}

function formatProblems(ts: TypeScriptApi, file: TS.SourceFile, problems: Problem[], source: string): string {
  const lines = problems.map((p) => {
    const { line, column } = positionInSource(ts, file, p.pos, source);
    return `  line ${line}:${column} - ${p.text}`;
  });
  lines.push(
    "  Tools are async globals; use `const [tool] = await catalog.search(\"...\")` instead of importing modules.",
  );
  return finish(lines, problems.length + 1);
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
