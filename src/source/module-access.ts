/**
 * Pre-execution check for module syntax and module loaders in code-mode cells (seed 002, `exec`
 * rules: "`exec` rejects `import`, `require`, dynamic import, and module-loader patterns"). It
 * gives the model actionable `invalid_input` guidance before a cell runs; it is a first line of
 * defence only: the real boundary is the QuickJS-WASI guest, which has no module loader,
 * filesystem, network or subprocess access at all.
 *
 * Only *references* to the loaders count. A name is not a reference when it is a property
 * (`lib.require`), an object key, label or interface member (`require: 1`, `import?: T`), a
 * method or class field (`require(name) { … }`, `get import()`), a shorthand property
 * (`{ require }`), or a name the cell declares itself (`const exports = []`,
 * `function f(require) { … }`, `const process = { binding: 1 }`); `export` inside a TypeScript
 * `namespace` block is namespace syntax. Strings, comments, template text and regex literals are
 * never inspected.
 */

import { analyzeCell, startsMember, type CellStructure } from "./cell-structure";
import { Tok, type TokenList } from "../js-tokens";
import { SOURCE_CHECK_OK, type SourceCheck } from "./source-check-result";

/** Global objects through which a loader can be reached (`globalThis.require`). */
const GLOBAL_OBJECTS = new Set(["globalThis", "global", "self", "window"]);
const PROCESS_LOADERS = new Set(["mainModule", "binding", "_linkedBinding", "dlopen", "getBuiltinModule"]);
const MODULE_LOADERS = new Set(["exports", "require", "createRequire"]);
/** Loader names refused on any reference. */
const LOADER_NAMES = new Set(["require", "createRequire", "__non_webpack_require__", "__webpack_require__"]);
/** Every word this check looks at; anything else is skipped without further work. */
const WATCHED = new Set([...LOADER_NAMES, ...GLOBAL_OBJECTS, "import", "export", "exports", "module", "importScripts", "process"]);
const WATCHED_FIRST = new Set([...WATCHED].map((w) => w.charCodeAt(0)));
const WATCHED_MAX = Math.max(...[...WATCHED].map((w) => w.length));

type Role = "property" | "key" | "member" | "reference";

function moduleAccessMessage(what: string, line: number): string {
  return (
    `Module access is not available in code mode (found ${what} on line ${line}). ` +
    "The guest has no import, require or module loader, and no filesystem, network or packages. " +
    "Tools are already available as async globals: call them directly, e.g. " +
    '`const [tool] = await catalog.search("what you need"); return await tool({ /* input */ });` ' +
    "(use `await tool.describe()` for its full input schema), and write helper logic inline."
  );
}

/**
 * Rejects module syntax and module-loader patterns: import/export declarations, dynamic
 * `import()`, `import.meta`, `require` (called, `require.resolve`, or passed around),
 * `module.exports`, `exports.x`, `createRequire`, `__non_webpack_require__`,
 * `importScripts(...)`, `process.mainModule`/`binding`/`dlopen`/`getBuiltinModule`.
 */
export function checkModuleAccess(source: string, structure: CellStructure = analyzeCell(source)): SourceCheck {
  const { tokens: t, match, enclosing, declared } = structure;

  /** What the name at `i` is, syntactically. */
  const role = (i: number): Role => {
    if (t.isProperty(i)) return "property";
    const prev = i - 1;
    const next = i + 1;
    const afterSeparator = prev < 0 || t.isPunct(prev, "{") || t.isPunct(prev, ",") || t.isPunct(prev, ";") || t.isPunct(prev, "}");
    const member = startsMember(t, i);
    if (t.isPunct(next, ":") && (afterSeparator || member)) return "key"; // object key, interface member, label
    if ((t.isName(prev, "break") || t.isName(prev, "continue")) && !t.isProperty(prev)) return "key"; // a label
    if (member && (t.isPunct(next, "?") || t.isPunct(next, "!"))) {
      // TypeScript optional or definite members: `import?: T`, `require?(x): T`, `exports!: T`.
      if (t.isPunct(next + 1, ":") || t.isPunct(next + 1, "(") || t.isPunct(next + 1, ";") || t.isPunct(next + 1, ",") || t.isPunct(next + 1, "}")) {
        return "key";
      }
    }
    if (member && t.isPunct(next, "(") && isMethodHead(next)) return "member";
    const open = enclosing[i]!;
    if (open >= 0 && t.isPunct(open, "{")) {
      const ends = t.isPunct(next, "}") || t.isPunct(next, ",") || t.isPunct(next, "=") || t.isPunct(next, ";");
      // `{ require }`, `{ a, require = 1 }`: shorthand properties and pattern elements.
      if ((t.isPunct(prev, "{") || t.isPunct(prev, ",")) && (t.isPunct(next, "}") || t.isPunct(next, ",") || t.isPunct(next, "="))) {
        if (opensObject(t, open)) return "member";
      }
      // `class A { require = 1; import; }`: class fields.
      if (member && ends && isClassBody(t, match, open)) return "member";
    }
    return "reference";
  };

  /** `(` at `open` starts a method's parameters: its `)` is followed by a body on the same line or a return type. */
  const isMethodHead = (open: number): boolean => {
    const close = match[open]!;
    if (close < 0) return false;
    return (t.isPunct(close + 1, "{") && t.line[close + 1] === t.line[close]) || t.isPunct(close + 1, ":");
  };

  /** `globalThis.require`: the property of a global object counts as a reference to the global. */
  const viaGlobalObject = (i: number): boolean => {
    if (!t.isProperty(i) || !t.isName(i - 2)) return false;
    const object = t.text(i - 2);
    return GLOBAL_OBJECTS.has(object) && !declared.has(object) && role(i - 2) === "reference";
  };

  const isDot = (i: number) => t.isPunct(i, ".") || t.isPunct(i, "?.");

  for (let i = 0; i < t.count; i++) {
    // Cheap filters first: a megabyte cell has hundreds of thousands of names. (A name written
    // with unicode escapes is longer in the source than its value, so only the start is tested.)
    if (t.kind[i] !== Tok.Name || (!WATCHED_FIRST.has(t.source.charCodeAt(t.start[i]!)) && t.source.charCodeAt(t.start[i]!) !== 92)) continue;
    if (t.end[i]! - t.start[i]! > WATCHED_MAX * 6) continue;
    const word = t.text(i);
    if (!WATCHED.has(word)) continue;
    const fail = (what: string): SourceCheck => ({ ok: false, message: moduleAccessMessage(what, t.line[i]!) });

    if (word === "import") {
      const r = role(i);
      if (r !== "reference") continue;
      if (t.isPunct(i + 1, "(")) return fail("dynamic `import(...)`");
      if (t.isPunct(i + 1, ".") && t.isName(i + 2, "meta")) return fail("`import.meta`");
      return fail("an `import` declaration");
    }
    if (word === "export") {
      if (role(i) !== "reference" || inNamespace(t, enclosing[i]!)) continue;
      return fail("an `export` declaration");
    }

    const global = viaGlobalObject(i);
    if (!global && (declared.has(word) || role(i) !== "reference")) continue;
    const next = i + 1;
    switch (word) {
      case "require":
        if (global) return fail(`\`require\` (through \`${t.text(i - 2)}\`)`);
        if (t.isPunct(next, "(")) return fail("`require(...)`");
        if (isDot(next) && t.isName(next + 1)) return fail(`\`require.${t.text(next + 1)}\``);
        return fail("`require`");
      case "createRequire":
      case "__non_webpack_require__":
      case "__webpack_require__":
        return fail(`\`${word}\``);
      case "importScripts":
        if (t.isPunct(next, "(")) return fail("`importScripts(...)`");
        break;
      case "exports":
        if (isDot(next) || t.isPunct(next, "[") || t.isPunct(next, "=")) return fail("`exports`");
        break;
      case "module":
        if (isDot(next) && t.isName(next + 1) && MODULE_LOADERS.has(t.text(next + 1))) return fail(`\`module.${t.text(next + 1)}\``);
        if (t.isPunct(next, "[") && t.kind[next + 1] === Tok.String && MODULE_LOADERS.has(t.text(next + 1))) {
          return fail("`module[...]` loader access");
        }
        break;
      case "process":
        if (isDot(next) && t.isName(next + 1) && PROCESS_LOADERS.has(t.text(next + 1))) return fail(`\`process.${t.text(next + 1)}\``);
        break;
    }
  }
  return SOURCE_CHECK_OK;
}

/** Does the `{` at `open` start an object literal (or a destructuring pattern written as one)? */
function opensObject(t: TokenList, open: number): boolean {
  const prev = open - 1;
  if (prev < 0) return false;
  if (t.kind[prev] === Tok.Punct) {
    return !(t.isPunct(prev, ")") || t.isPunct(prev, "]") || t.isPunct(prev, "}") || t.isPunct(prev, ";") || t.isPunct(prev, "=>"));
  }
  if (t.kind[prev] === Tok.Name)
    return ["return", "typeof", "in", "of", "new", "await", "yield", "case", "const", "let", "var"].includes(t.text(prev));
  return false;
}

/** Is the `{` at `open` a class body (`class A {`, `class extends mixin(B) {`)? */
function isClassBody(t: TokenList, match: Int32Array, open: number): boolean {
  let k = open - 1;
  for (let steps = 0; k >= 0 && steps < 16; steps++) {
    if (t.isName(k, "class") && !t.isProperty(k)) return true;
    if (t.isPunct(k, ";") || t.isPunct(k, "{") || t.isPunct(k, "}") || t.isPunct(k, "=>")) return false;
    k = t.isPunct(k, ")") && match[k]! >= 0 ? match[k]! - 1 : k - 1;
  }
  return false;
}

/**
 * Is the `{` at `open` the body of a TypeScript `namespace A.B { … }`, `module A { … }`,
 * `declare module "x" { … }` or `declare global { … }`? There `export` marks a member.
 */
function inNamespace(t: TokenList, open: number): boolean {
  if (open < 0 || !t.isPunct(open, "{")) return false;
  let k = open - 1;
  if (t.isName(k, "global")) return t.isName(k - 1, "declare");
  if (t.kind[k] === Tok.String) return t.isName(k - 1, "module");
  while (t.isName(k) && t.isPunct(k - 1, ".")) k -= 2;
  return t.isName(k) && (t.isName(k - 1, "namespace") || t.isName(k - 1, "module")) && !t.isProperty(k - 1);
}
