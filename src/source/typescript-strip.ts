/**
 * The fast path of TypeScript cells: sucrase's TypeScript transform (types erased in place, no
 * other rewriting; ~200 KB, loaded on the first TypeScript cell) instead of the compiler (~3.5 MB,
 * hundreds of milliseconds to start). It is used only where its program is the compiler's:
 *
 * - `routesToCompiler` sends every cell naming a construct whose output could differ, or whose
 *   errors the compiler words (module syntax), to the compiler: enums and const enums,
 *   namespaces and `declare`, classes (fields under `useDefineForClassFields`, parameter
 *   properties, `accessor`, `abstract`), decorators (`@`), `import`/`export` in any form, and
 *   `using` (the compiler lowers it for ES2023). A word in a string or comment does not count;
 *   a property named so (`x.module`) does, which only costs speed.
 * - What is left is erasure (annotations, interfaces, type aliases, generics, `as`, `satisfies`,
 *   `!`, `<T>x`, overload signatures, `this` parameters), where both give the same program
 *   (test/unit/source/typescript-strip.test.ts runs each construct both ways).
 * - Anything sucrase throws on goes to the compiler, whose diagnostics the model gets.
 *
 * The cell is wrapped as the compiler path wraps it (typescript-transform.ts), and the output
 * must still be exactly that one function, else the compiler decides.
 */
import { Tok, tokenize } from "../js-tokens";
import { analyzeCell } from "./cell-structure";

const WRAPPER_HEAD = "async function __cm_cell__() {\n";
const WRAPPER_TAIL = "\n}";

/** Words naming constructs the fast path leaves to the compiler (see the header). */
const COMPILER_WORDS = new Set(["enum", "namespace", "module", "declare", "class", "abstract", "accessor", "import", "export", "using"]);

/** Whether the cell must go through the compiler: one tokenizer pass, no allocation per token. */
export function routesToCompiler(source: string): boolean {
  const tokens = tokenize(source);
  for (let i = 0; i < tokens.count; i++) {
    const kind = tokens.kind[i];
    const start = tokens.start[i]!;
    if (kind === Tok.Punct && source.charCodeAt(start) === 64 /* @ */) return true;
    if (kind === Tok.Name && COMPILER_WORDS.has(tokens.text(i))) return true;
  }
  return false;
}

type Sucrase = typeof import("sucrase");
let sucrase: Sucrase | undefined;

/** True once sucrase has been loaded (never before the first TypeScript cell). */
export function isTypeScriptStripperLoaded(): boolean {
  return sucrase !== undefined;
}

/**
 * The cell's JavaScript body by the fast path, or undefined when the compiler must decide
 * (routed construct, sucrase refused the code, or the output is not the one wrapper function).
 */
export async function stripTypeScript(source: string): Promise<string | undefined> {
  if (routesToCompiler(source)) return undefined;
  sucrase ??= await import("sucrase");
  let output: string;
  try {
    output = sucrase.transform(WRAPPER_HEAD + source + WRAPPER_TAIL, { transforms: ["typescript"], disableESTransforms: true }).code;
  } catch {
    return undefined;
  }
  return isOneWrapper(output) ? output.slice(WRAPPER_HEAD.length, output.length - WRAPPER_TAIL.length) : undefined;
}

/** `async function __cm_cell__() { … }` and nothing else: the wrapper's `{` closes at the very end. */
function isOneWrapper(output: string): boolean {
  if (!output.startsWith(WRAPPER_HEAD) || !output.endsWith(WRAPPER_TAIL)) return false;
  const { tokens, match } = analyzeCell(output);
  const open = 5; // async function __cm_cell__ ( ) {
  return tokens.count > open + 1 && tokens.text(open) === "{" && match[open] === tokens.count - 1;
}
