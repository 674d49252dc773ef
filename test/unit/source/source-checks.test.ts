import { describe, expect, it } from "vitest";
import { checkModuleAccess, checkShellCommand, checkSource } from "../../../src/source";
import { MAX_NESTING } from "../../../src/source";
import { tokenize } from "../../../src/js-tokens";
import { ORDINARY_CELLS, REFUSED_CELLS } from "../../source-corpus";

function rejected(result: ReturnType<typeof checkModuleAccess>): string {
  if (result.ok) throw new Error("expected a rejection");
  return result.message;
}

describe("checkModuleAccess", () => {
  const rejectedInputs: Array<[string, string]> = [
    ['import x from "y";\nreturn x;', "an `import` declaration"],
    ['import "polyfill";', "an `import` declaration"],
    ["import {a} from 'b'", "an `import` declaration"],
    ['import * as fs from "node:fs"', "an `import` declaration"],
    ['import type { T } from "t"', "an `import` declaration"],
    ['const fs = await import("node:fs");', "dynamic `import(...)`"],
    ['const m = await import ("x")', "dynamic `import(...)`"],
    ["return import.meta.url", "`import.meta`"],
    ['const fs = require("fs");', "`require(...)`"],
    ['return require.resolve("x")', "`require.resolve`"],
    ["module.exports = { a: 1 }", "`module.exports`"],
    ["exports.foo = 1", "`exports`"],
    ['__non_webpack_require__("fs")', "`__non_webpack_require__`"],
    ['importScripts("https://x/y.js")', "`importScripts(...)`"],
    ['self.importScripts("https://x/y.js")', "`importScripts(...)`"],
    ["return process.mainModule.require('fs')", "`process.mainModule`"],
    ['const r = createRequire("/x"); r("fs")', "`createRequire`"],
    ['const r = module.createRequire("/")', "`module.createRequire`"],
    ['return globalThis.require("fs")', "`require`"],
    ['return process.getBuiltinModule("fs")', "`process.getBuiltinModule`"],
    ['return globalThis.process.binding("fs")', "`process.binding`"],
    ["export const x = 1;", "an `export` declaration"],
    ['const x = `${await import("fs")}`', "dynamic `import(...)`"],
    ['const x = `a ${`b ${require("fs")}`}`', "`require(...)`"],
    ["const r = require; r('fs')", "`require`"],
    ['\\u0072equire("fs")', "`require(...)`"],
    ['const a = 1 / 2; const b = import("x") / 3', "dynamic `import(...)`"],
    // Division, not a regex: the import really runs.
    ["x = {} / import('fs') / 1", "dynamic `import(...)`"],
    ['const x = a\n/import("fs")/i.test(y)', "dynamic `import(...)`"],
    ["a++ / import('x')", "dynamic `import(...)`"],
    ["return (x) / import('x')", "dynamic `import(...)`"],
    ["return typeof require", "`require`"],
  ];

  it.each(rejectedInputs)("rejects %j", (source, what) => {
    const message = rejected(checkModuleAccess(source));
    expect(message).toContain(what);
    expect(message).toContain("Module access is not available in code mode");
    expect(message).toContain("catalog.search(");
    expect(message).toContain("async globals");
  });

  it("reports the line of the offending code", () => {
    const message = rejected(checkModuleAccess('const a = 1;\n// import nothing\n\nconst b = require("x");'));
    expect(message).toContain("line 4");
  });

  const acceptedInputs = [
    'text("important")',
    "// we import nothing\nreturn 1",
    "/* import x from 'y' */ return 2",
    "const imported = 1; return imported",
    "return obj.import",
    "return obj?.import",
    'return { "require": 1, import: 2, export: 3, exports: 4 }',
    "return { require: true }",
    'const s = "import x from \\"y\\""; return s',
    "const s = 'require(\"fs\")'; return s",
    "const t = `import(${1 + 1}) and require(x)`; return t",
    'return /import\\("x"\\)/.test(s)',
    "const r = /require\\(/g; return r",
    "if (x) /import(x)/.test(y)",
    "const a = b / 2; const c = d / 3; return a",
    "return [1,2].map((x) => x / 2 /* import */)",
    "const exportsCount = 3; const modules = []; return exportsCount",
    'return lib.require("x")',
    "const process = { mainModuleName: 1 }; return process.mainModuleName",
    "const module = { name: 'x' }; return module.name",
    "return exports",
    "const x = {}/1; return x",
    "const re = [/\"/, /'/, /`/]; return re.length",
    "// import('fs')\nreturn `\n${'`'}import x from 'y'\n`",
    "class A { #import = 1; get import() { return this.#import } } return new A().import",
    "const o = { import() { return 1 } }; return o.import()",
    // A regex after a block or an `if (...)` head, not a division.
    "if (a) {} /import('fs')/.test(z)",
    "const r = /[/]import('x')/; return r",
    "x\n.import('fs')",
    // Destructured from a user object: the cell's own binding, not node:module's.
    'const { createRequire } = await catalog.search("x"); createRequire(1)',
  ];

  it.each(acceptedInputs)("accepts %j", (source) => {
    expect(checkModuleAccess(source)).toEqual({ ok: true });
  });
});

describe("checkShellCommand", () => {
  const shellInputs = [
    "ls -la",
    "git status",
    "npm test",
    "cat file | grep x",
    "cd src && make",
    "rm -rf /tmp/x",
    "echo hello > out.txt",
    "curl https://x",
    "python3 script.py",
    "pwd",
    "ls",
    "ls;",
    "  \n ls -la \n",
    "ls | grep ts",
    "ls > out.txt",
    "npx wrangler deploy",
    "apt-get install -y jq",
    "NODE_ENV=test npm test",
    "$ git log --oneline",
    "# list files\nls -la",
    "```bash\nls -la\n```",
    "cd ..",
    "find . -name '*.ts'",
    "cat /etc/passwd",
    "ls ~/projects",
    'echo "hello world"',
    "head -5 file.txt",
    "./build.sh --prod",
    "sudo apt update",
    "docker ps -a",
    "kubectl get pods",
    "export FOO=bar",
    "#!/bin/bash\necho hi",
    "ls *.ts",
    "cd src; make",
  ];

  it.each(shellInputs)("rejects %j", (source) => {
    const message = rejected(checkShellCommand(source));
    expect(message).toContain("shell command");
    expect(message).toContain("JavaScript");
    expect(message).toContain("`command` is only an alias for `code`");
    expect(message).toContain('const [tool] = await catalog.search("run a shell command"); return await tool(');
    expect(message).toContain("return 1 + 2");
    expect(message).not.toContain("shell_exec");
  });

  it("quotes the offending line in the message", () => {
    expect(rejected(checkShellCommand("\n\ngit status --short\nreturn 1"))).toContain("`git status --short`");
  });

  const javascriptInputs = [
    "const ls = [1]; return ls",
    "return git.status",
    "return 1 + 2",
    "ls = [1, 2]; return ls",
    "git.status()",
    "ls(1)",
    "ls[0]",
    "ls.length",
    "ls ? a : b",
    "ls in obj",
    "node as unknown",
    "cat - 1",
    "ls / 2",
    "ls == x",
    "echo `hi`",
    "find\n  .call(x)",
    "test('x')",
    "make({ a: 1 })",
    "type Foo = { a: string }\nconst f: Foo = { a: 'x' }\nreturn f",
    "export const x = 1",
    "const [tool] = await catalog.search('run a shell command');\nreturn await tool({ command: 'ls -la' })",
    "// ls -la\nreturn 1",
    "git: for (;;) { break git; }",
    "ls && ls.length",
    "node => node.id",
    "echo (1)",
    "",
    "return 'rm -rf /'",
    "await catalog.search('git status')",
    "ls += 1",
  ];

  it.each(javascriptInputs)("accepts JavaScript %j", (source) => {
    expect(checkShellCommand(source)).toEqual({ ok: true });
  });
});

describe("the corpus of ordinary code and module/shell patterns", () => {
  it("has at least 30 of each", () => {
    expect(ORDINARY_CELLS.length).toBeGreaterThanOrEqual(30);
    expect(REFUSED_CELLS.length).toBeGreaterThanOrEqual(30);
  });

  it.each(ORDINARY_CELLS.map((c) => [c.name, c] as const))("accepts %s", (_name, cell) => {
    expect(checkSource(cell.code)).toEqual({ ok: true });
  });

  it.each(REFUSED_CELLS.map((c) => [c.name, c] as const))("refuses %s", (_name, cell) => {
    const message = rejected(checkSource(cell.code));
    expect(message).toContain(cell.mentions);
    expect(message).toContain(cell.kind === "shell" ? "looks like a shell command" : "Module access is not available in code mode");
  });
});

describe("module access: declarations and roles", () => {
  const accepted = [
    "function f(exports) { exports.x = 1; return exports; } return f({})",
    "const [require] = [(x) => x]; return require(1)",
    "for (const require of [1]) {} return 1",
    "let { a, b: { require } } = { a: 1, b: { require: 2 } }; return require",
    "const f = ({ require = () => 1 }) => require(); return f({})",
    "const o = { ...{ a: 1 }, require }",
    "class A { static import = 1; static export; } return A.import",
    "class A extends Base { require = 1 }",
    "label: { break label; } exports: for (;;) { continue exports; }",
    "const o = { 'require': 1, 2: 3, [k]: 4, require: 5 }",
    "interface I { readonly require: string; import?(): void; exports!: number }",
  ];
  it.each(accepted)("accepts %j", (source) => {
    expect(checkModuleAccess(source)).toEqual({ ok: true });
  });

  const refused: Array<[string, string]> = [
    // A default value is an expression, not a binding.
    ["const { a = require('fs') } = {}", "`require(...)`"],
    ["function f(a = require('fs')) {}", "`require(...)`"],
    ["const a = 1, b = require('fs')", "`require(...)`"],
    ["cond ? require('fs') : null", "`require(...)`"],
    ["f(a, require)", "`require`"],
    ["const o = { ...require }", "`require`"],
    ["const o = { a: require('fs') }", "`require(...)`"],
    ["namespaceish { export const x = 1 }", "an `export` declaration"],
    ["function f() { export const x = 1 }", "an `export` declaration"],
  ];
  it.each(refused)("refuses %j", (source, what) => {
    expect(rejected(checkModuleAccess(source))).toContain(what);
  });

  it("reports editor lines: U+2028/U+2029 do not start a line, \\r\\n and \\r do", () => {
    expect(rejected(checkModuleAccess("const s = 'a\u2028b\u2029c';\nrequire('fs')"))).toContain("on line 2");
    expect(rejected(checkModuleAccess("// a\u2028b\r\nx;\ry;\n\nrequire('fs')"))).toContain("on line 5");
    // A line comment still ends at U+2028, as ECMAScript says: the require after it is code.
    expect(rejected(checkModuleAccess("// comment\u2028require('fs')"))).toContain("on line 1");
  });
});

describe("the scanner is linear and compact", () => {
  it("stores a megabyte of `;` as a million tokens without an object each", () => {
    const tokens = tokenize(";".repeat(1 << 20));
    expect(tokens.count).toBe(1 << 20);
    // Typed columns capped at one token per character (+1), not doubled past it.
    expect(tokens.kind.length).toBeLessThanOrEqual((1 << 20) + 1);
    expect(tokens.start).toBeInstanceOf(Int32Array);
  });

  it("handles deep nesting without recursion", () => {
    expect(checkModuleAccess("(".repeat(200_000))).toEqual({ ok: true });
    expect(checkModuleAccess("{".repeat(200_000) + "}".repeat(200_000))).toEqual({ ok: true });
    expect(checkModuleAccess("({ a: (b = { c: (d = ".repeat(5000) + "1" + ") }) })".repeat(5000))).toEqual({ ok: true });
    expect(rejected(checkModuleAccess("[".repeat(100_000) + "require('fs')"))).toContain("`require(...)`");
  });

  it("refuses nesting deeper than the VM can compile, with the line where it got too deep", () => {
    const deep = (n: number) => "return " + "[".repeat(n) + "1" + "]".repeat(n);
    expect(checkSource(deep(MAX_NESTING))).toEqual({ ok: true });
    expect(rejected(checkSource(deep(MAX_NESTING + 1)))).toContain(`nests brackets more than ${MAX_NESTING} levels deep (first on line 1)`);
    expect(rejected(checkSource("const a = 1;\nreturn " + "`${".repeat(300)))).toContain("(first on line 2)");
    expect(rejected(checkSource("f(() => (".repeat(200) + "1" + "))".repeat(200)))).toContain("levels deep");
    // Sequential brackets are not nested.
    expect(checkSource("return [" + "[1], ".repeat(10_000) + "];")).toEqual({ ok: true });
  });
});

describe("checkShellCommand: bounded and iterative", () => {
  it("decides thousands of `;` or `|` segments without recursion", () => {
    for (const source of ["ls;".repeat(5000), "ls | ".repeat(5000) + "ls", "cd a && ".repeat(5000) + "make", "ls; ".repeat(200_000)]) {
      expect(rejected(checkShellCommand(source))).toContain("looks like a shell command");
    }
  });

  it("a segment chain that ends in JavaScript is JavaScript", () => {
    expect(checkShellCommand("ls | x.y()")).toEqual({ ok: true });
  });

  it("a megabyte first line or a flood of assignments is examined only up to its prefix", () => {
    expect(rejected(checkShellCommand("ls -la " + "x".repeat(1 << 20)))).toContain("`ls -la xxxx");
    expect(checkShellCommand("x = " + "1 + ".repeat(250_000) + "1")).toEqual({ ok: true });
    // No command word within the examined prefix: the assignments alone are not a command.
    expect(checkShellCommand("A=1 ".repeat(250_000) + "npm test")).toEqual({ ok: true });
    expect(checkShellCommand("ls > " + ".".repeat(1 << 20))).toEqual({ ok: true });
    expect(rejected(checkShellCommand("A=1 B=2 npm test"))).toContain("shell command");
  });

  const ambiguous: Array<[string, boolean]> = [
    // [source, is a shell command]
    ["ls -la", true],
    ["ls -la\ncd src", true],
    ["time -offset", true],
    ["time -offset\nvar time = 1, offset = 2;", false],
    ["time -offset\n  > limit ? a : b", false],
    ["const offset = 1;\ntime -offset", false], // not the first line: never a shell command
    ["sort -order\nfunction sort() {}", false],
    ["time -offset.x", false],
    ["time -offset * 2", false],
    ["ls -la | grep x", true],
    ["ls -l -a", true],
    ["rm -rf dir", true],
    ["pwd\nreturn 1", false],
    ["pwd\ncd /tmp", true],
  ];
  it.each(ambiguous)("%j is a shell command: %s", (source, shell) => {
    expect(checkShellCommand(source).ok).toBe(!shell);
  });

  it("uses the declarations it is given instead of analysing the cell again", () => {
    expect(checkShellCommand("time -offset", new Set(["time"]))).toEqual({ ok: true });
    expect(checkShellCommand("time -offset", new Set())).not.toEqual({ ok: true });
  });
});
