/**
 * Pre-execution check for module syntax and module loaders in code-mode cells (seed 002, `exec`
 * rules). It gives the model actionable `invalid_input` guidance before a cell runs; it is a first
 * line of defence only: the real boundary is the QuickJS-WASI guest, which has no module loader,
 * filesystem, network or subprocess access at all.
 */

import { type Token, tokenize } from "./js-scanner";
import { SOURCE_CHECK_OK, type SourceCheck } from "./source-check-result";

const GLOBAL_OBJECTS = new Set(["globalThis", "global", "self", "window", "module"]);
const PROCESS_LOADERS = new Set(["mainModule", "binding", "_linkedBinding", "dlopen"]);

/** Index of the `)` matching the `(` at `open`, or -1. */
function matchingParen(tokens: Token[], open: number): number {
  let depth = 0;
  for (let j = open; j < tokens.length; j++) {
    const t = tokens[j]!;
    if (t.type !== "punct") continue;
    if (t.value === "(") depth++;
    else if (t.value === ")" && --depth === 0) return j;
  }
  return -1;
}

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
 * `import()`, `import.meta`, `require(...)` / `require.resolve`, `module.exports`, `exports.x`,
 * `__non_webpack_require__`, `importScripts(...)`, `process.mainModule`, `createRequire`.
 * Strings, comments, template text and regex literals are never inspected.
 */
export function checkModuleAccess(source: string): SourceCheck {
  const tokens = tokenize(source);
  const at = (i: number): Token | undefined => tokens[i];
  const isPunct = (t: Token | undefined, value: string) => t !== undefined && t.type === "punct" && t.value === value;
  const isName = (t: Token | undefined, value?: string) =>
    t !== undefined && t.type === "name" && (value === undefined || t.value === value);
  const isDot = (t: Token | undefined) => isPunct(t, ".") || isPunct(t, "?.");

  for (let i = 0; i < tokens.length; i++) {
    const tok = tokens[i]!;
    if (tok.type !== "name") continue;
    const prev = at(i - 1);
    const next = at(i + 1);
    const next2 = at(i + 2);
    const property = isDot(prev);
    const objectKey = isPunct(next, ":") && !property;
    const fail = (what: string): SourceCheck => ({ ok: false, message: moduleAccessMessage(what, tok.line) });

    switch (tok.value) {
      case "import":
        if (property || objectKey) break;
        if (isPunct(next, "(")) {
          // A method named `import` (`get import() {`, `{ import() { ... } }`): the parameter
          // list is followed by a body on the same line, which a call expression never is.
          const close = matchingParen(tokens, i + 1);
          const after = close === -1 ? undefined : at(close + 1);
          if (isPunct(after, "{") && after!.line === tokens[close]!.line) break;
          return fail("dynamic `import(...)`");
        }
        if (isPunct(next, ".") && isName(next2, "meta")) return fail("`import.meta`");
        return fail("an `import` declaration");
      case "export":
        if (property || objectKey) break;
        return fail("an `export` declaration");
      case "require":
        if (objectKey) break;
        if (property) {
          // `globalThis.require(...)`, `module.require(...)`: loader lookups through a global.
          if (isName(at(i - 2)) && GLOBAL_OBJECTS.has(at(i - 2)!.value)) return fail("`require`");
          break;
        }
        if (isDot(next) && isName(next2)) return fail(`\`require.${next2!.value}\``);
        if (isPunct(next, "(")) return fail("`require(...)`");
        return fail("`require`");
      case "module":
        if (property || objectKey) break;
        if (isDot(next) && isName(next2) && (next2!.value === "exports" || next2!.value === "require")) {
          return fail(`\`module.${next2!.value}\``);
        }
        if (isPunct(next, "[") && at(i + 2)?.type === "string" && /^(exports|require)$/.test(at(i + 2)!.value)) {
          return fail("`module[...]` loader access");
        }
        break;
      case "exports":
        if (property || objectKey) break;
        if (isDot(next) || isPunct(next, "[") || isPunct(next, "=")) return fail("`exports`");
        break;
      case "__non_webpack_require__":
      case "__webpack_require__":
        if (objectKey || property) break;
        return fail(`\`${tok.value}\``);
      case "importScripts":
        if (objectKey) break;
        if (isPunct(next, "(")) return fail("`importScripts(...)`");
        break;
      case "process":
        if (property || objectKey) break;
        if (isDot(next) && isName(next2) && PROCESS_LOADERS.has(next2!.value)) {
          return fail(`\`process.${next2!.value}\``);
        }
        break;
      case "createRequire":
        return fail("`createRequire`");
    }
  }
  return SOURCE_CHECK_OK;
}
