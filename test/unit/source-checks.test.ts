import { describe, expect, it } from "vitest";
import { checkModuleAccess, checkShellCommand } from "../../src/source";

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
    ['const { createRequire } = await catalog.search("x"); createRequire(1)', "`createRequire`"],
    ['const r = module.createRequire("/")', "`createRequire`"],
    ['return globalThis.require("fs")', "`require`"],
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
    'return { require: true }',
    'const s = "import x from \\"y\\""; return s',
    "const s = 'require(\"fs\")'; return s",
    "const t = `import(${1 + 1}) and require(x)`; return t",
    "return /import\\(\"x\"\\)/.test(s)",
    "const r = /require\\(/g; return r",
    "if (x) /import(x)/.test(y)",
    "const a = b / 2; const c = d / 3; return a",
    "return [1,2].map((x) => x / 2 /* import */)",
    "const exportsCount = 3; const modules = []; return exportsCount",
    "return lib.require(\"x\")",
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
    "echo \"hello world\"",
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
