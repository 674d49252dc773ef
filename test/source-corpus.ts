/**
 * The source-check corpus (issue "Every input bounded, every error honest", item 10): ordinary
 * code the checks used to refuse, which must run, and real module access or shell commands,
 * which must still be refused. Shared by the unit test of the checks and the e2e test that
 * sends every entry through HTTP → Durable Object → VM.
 */
import type { CodeModeLanguage } from "../src/code-mode";

export type OrdinaryCell = { name: string; code: string; language: CodeModeLanguage; value: unknown };
export type RefusedCell = { name: string; code: string; language: CodeModeLanguage; kind: "module" | "shell"; mentions: string };

const js = (name: string, code: string, value: unknown): OrdinaryCell => ({ name, code, language: "javascript", value });
const ts = (name: string, code: string, value: unknown): OrdinaryCell => ({ name, code, language: "typescript", value });

export const ORDINARY_CELLS: OrdinaryCell[] = [
  js("a variable named exports", "const exports = [];\nexports.push(1);\nreturn exports;", [1]),
  js("an exports object filled in", "let exports = {};\nexports.total = 3;\nexports['x'] = 1;\nreturn exports.total;", 3),
  js("exports reassigned when declared", "var exports = 1;\nexports = exports + 1;\nreturn exports;", 2),
  js("{ require } destructured", "const obj = { require: (n) => n * 2 };\nconst { require } = obj;\nreturn require(21);", 42),
  js("{ require } shorthand property", "const require = 5;\nconst o = { require };\nreturn o.require;", 5),
  js("a local function named require", "const require = (name) => name.toUpperCase();\nreturn require('fs');", "FS"),
  js("a parameter named require", "function load(require) { return require('x'); }\nreturn load((n) => n + '!');", "x!"),
  js("an arrow parameter named require", "return [1, 2, 3].map((require) => require * 2);", [2, 4, 6]),
  js("a method named require (object)", "const api = { require(name) { return 'got ' + name; } };\nreturn api.require('a');", "got a"),
  js("a method named require (class)", "class Loader {\n  require(name) { return name.length; }\n}\nreturn new Loader().require('abc');", 3),
  js("a static method named require", "class Loader { static require(n) { return n; } }\nreturn Loader.require(5);", 5),
  js("a getter named import", "const o = { get import() { return 7; } };\nreturn o.import;", 7),
  js(
    "class fields named import and export",
    "class Registry {\n  import = [];\n  export() { return this.import.length; }\n}\nreturn new Registry().export();",
    0,
  ),
  js("keys named import, export and require", "const o = { import: 1, export: 2, require: 3 };\nreturn o.import + o.export + o.require;", 6),
  js("a property named createRequire", "const tools = { createRequire: 1 };\nreturn tools.createRequire + 1;", 2),
  js("a local createRequire", "const createRequire = () => 'mine';\nreturn createRequire();", "mine"),
  js("process.binding on a user object", "const process = { binding: (x) => x + 1 };\nreturn process.binding(1);", 2),
  js("process.binding as a nested property", "const job = { process: { binding: 'b' } };\nreturn job.process.binding;", "b"),
  js("a user module object", "const module = { exports: {} };\nmodule.exports.answer = 42;\nreturn module.exports.answer;", 42),
  js("a local importScripts", "const importScripts = (u) => u.length;\nreturn importScripts('abc');", 3),
  js("a catch parameter named require", "try { JSON.parse('{'); } catch (require) { return 'caught'; }", "caught"),
  js("a label named require", "require: for (;;) { break require; }\nreturn 1;", 1),
  js("a pattern default named exports", "const { exports: e = 5 } = {};\nreturn e;", 5),
  js(
    "loader words in strings, comments and regexes",
    "// require('fs') is not available\nconst s = \"import fs from 'fs'\";\nconst re = /require\\(['\"]fs['\"]\\)/;\nreturn [s.length, re.test(\"require('fs')\")];",
    [19, true],
  ),
  js("export in a template literal", "const n = 1;\nreturn `export default ${n}`;", "export default 1"),
  js("a first line like time -offset (declared later)", "time -offset\nvar time = 100, offset = 40;\nreturn time - offset;", 60),
  js("a first line like cat -dog", "cat -dog\nvar cat = 5, dog = 2;\nreturn cat - dog;", 3),
  js("a shell-word function continued on the next line", "find\n  .call(null, [5]);\nfunction find(xs) { return xs; }\nreturn find([6])[0];", 6),
  ts(
    "optional keys import?: and require?:",
    "interface Plugin { import?: string; require?: boolean }\nconst p: Plugin = { import: 'x' };\nreturn p.import;",
    "x",
  ),
  ts(
    "an optional type-literal key export?:",
    "type Opts = { require?: string[]; export?: boolean };\nconst o: Opts = {};\nreturn Object.keys(o).length;",
    0,
  ),
  ts(
    "interface methods named require and import",
    "interface Loader { require(name: string): string; import?(name: string): Promise<unknown> }\nconst l: Loader = { require: (n) => n };\nreturn l.require('q');",
    "q",
  ),
  ts(
    "a method with a return type named require",
    "class Tools {\n  require(name: string): string { return name + '?'; }\n}\nreturn new Tools().require('a');",
    "a?",
  ),
  ts(
    "a typed optional parameter named require",
    "function f(this: void, require?: (n: string) => string) { return require ? require('a') : 'none'; }\nreturn f();",
    "none",
  ),
  ts(
    "a namespace block with export",
    "namespace Geo {\n  export const R = 6371;\n  export function km(x: number) { return x * R; }\n}\nreturn Geo.km(2);",
    12742,
  ),
  ts("a dotted namespace with export", "namespace A.B { export const c = 1; }\nreturn A.B.c;", 1),
  ts(
    "declare global and declare module blocks",
    "declare global { interface Window { a: 1 } }\ndeclare module 'x' { export const y: number; }\nreturn 1;",
    1,
  ),
  ts("a typed local exports", "const exports: Record<string, number> = {};\nexports.a = 1;\nreturn exports;", { a: 1 }),
];

const refuse = (name: string, code: string, kind: "module" | "shell", mentions: string, language: CodeModeLanguage = "javascript"): RefusedCell => ({
  name,
  code,
  language,
  kind,
  mentions,
});

export const REFUSED_CELLS: RefusedCell[] = [
  refuse("an import declaration", 'import fs from "fs";\nreturn 1;', "module", "an `import` declaration"),
  refuse("a named import", 'import { readFile } from "node:fs/promises";', "module", "an `import` declaration"),
  refuse("a namespace import", 'import * as path from "path";', "module", "an `import` declaration"),
  refuse("a side-effect import", 'import "polyfill";', "module", "an `import` declaration"),
  refuse("a dynamic import", 'const m = await import("node:fs");', "module", "dynamic `import(...)`"),
  refuse("import.meta", "return import.meta.url;", "module", "`import.meta`"),
  refuse("require(...)", 'const fs = require("fs");', "module", "`require(...)`"),
  refuse("destructured require(...)", 'const { readFileSync } = require("fs");', "module", "`require(...)`"),
  refuse("require.resolve", 'return require.resolve("x");', "module", "`require.resolve`"),
  refuse("require passed around", 'const r = require;\nreturn r("fs");', "module", "`require`"),
  refuse("require in an array", '[require][0]("fs");', "module", "`require`"),
  refuse("require in a block", 'if (true) { require("fs"); }', "module", "`require(...)`"),
  refuse("require inside a method body", 'class A { load() { return require("x"); } }', "module", "`require(...)`"),
  refuse("require in a template substitution", 'const x = `${require("fs")}`;', "module", "`require(...)`"),
  refuse("require written with a unicode escape", '\\u0072equire("fs");', "module", "`require(...)`"),
  refuse("globalThis.require", 'return globalThis.require("fs");', "module", "`require` (through `globalThis`)"),
  refuse("module.exports", "module.exports = { a: 1 };", "module", "`module.exports`"),
  refuse("module.exports.x", "module.exports.handler = () => 1;", "module", "`module.exports`"),
  refuse("module.require", 'module.require("fs");', "module", "`module.require`"),
  refuse('module["exports"]', 'module["exports"] = 1;', "module", "`module[...]` loader access"),
  refuse("exports.x", "exports.handler = () => 1;", "module", "`exports`"),
  refuse("exports assigned", "exports = { a: 1 };", "module", "`exports`"),
  refuse("createRequire", 'const r = createRequire("/x");\nr("fs");', "module", "`createRequire`"),
  refuse("__non_webpack_require__", '__non_webpack_require__("fs");', "module", "`__non_webpack_require__`"),
  refuse("importScripts", 'importScripts("https://x/y.js");', "module", "`importScripts(...)`"),
  refuse("self.importScripts", 'self.importScripts("https://x/y.js");', "module", "`importScripts(...)`"),
  refuse("process.mainModule", 'return process.mainModule.require("fs");', "module", "`process.mainModule`"),
  refuse("process.binding", 'process.binding("fs");', "module", "`process.binding`"),
  refuse("process.getBuiltinModule", 'const fs = process.getBuiltinModule("fs");', "module", "`process.getBuiltinModule`"),
  refuse("an export declaration", "export const x = 1;", "module", "an `export` declaration"),
  refuse("export default", "export default function () {}", "module", "an `export` declaration"),
  refuse("a TypeScript type import", 'import type { T } from "t";\nreturn 1;', "module", "an `import` declaration", "typescript"),
  refuse("a TypeScript import = require", 'import fs = require("fs");', "module", "an `import` declaration", "typescript"),
  refuse("require in a TypeScript cell", 'const fs: unknown = require("fs");', "module", "`require(...)`", "typescript"),
  refuse("ls -la", "ls -la", "shell", "`ls -la`"),
  refuse("git status", "git status", "shell", "`git status`"),
  refuse("npm install", "npm install lodash", "shell", "`npm install lodash`"),
  refuse("a pipe", "cat file.txt | grep x", "shell", "`cat file.txt | grep x`"),
  refuse("cd && make", "cd src && make", "shell", "`cd src && make`"),
  refuse("rm -rf", "rm -rf /tmp/x", "shell", "`rm -rf /tmp/x`"),
  refuse("curl", "curl https://example.com", "shell", "`curl https://example.com`"),
  refuse("a redirect", 'echo "hi" > out.txt', "shell", '`echo "hi" > out.txt`'),
  refuse("an env assignment", "NODE_ENV=test npm test", "shell", "`NODE_ENV=test npm test`"),
  refuse("a terminal prompt", "$ git log --oneline", "shell", "`git log --oneline`"),
  refuse("a fenced block", "```bash\nls -la\n```", "shell", "`ls -la`"),
  refuse("time -p make", "time -p make", "shell", "`time -p make`"),
  refuse("time npm test", "time npm test", "shell", "`time npm test`"),
  refuse("a bare pwd", "pwd", "shell", "`pwd`"),
  refuse("a shell command in a TypeScript cell", "git diff --stat", "shell", "`git diff --stat`", "typescript"),
];
