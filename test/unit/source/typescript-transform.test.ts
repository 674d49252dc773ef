import { QuickJS } from "quickjs-wasi";
import { describe, expect, it } from "vitest";
import { QUICKJS_MODULE } from "../../../wasm/quickjs";
import { checkModuleAccess, checkShellCommand } from "../../../src/source";
import { isTypeScriptCompilerLoaded, loadTypeScriptCompiler, transpileTypeScript } from "../../../src/source";
import { formatDiagnostics, UserPositions } from "../../../src/source";
import { lineAndColumn, lineStarts } from "../../../src/source";

/** Runs a transpiled body the way the runtime will: inside QuickJS, wrapped as an async function. */
async function runInQuickJS(code: string): Promise<unknown> {
  const vm = await QuickJS.create({ wasm: QUICKJS_MODULE });
  try {
    const promise = vm.evalCode(`(async function () {\n${code}\n})().then((v) => JSON.stringify(v))`);
    vm.executePendingJobs();
    const settled = await vm.resolvePromise(promise);
    if ("error" in settled) throw new Error(`guest error: ${JSON.stringify(vm.dump(settled.error))}`);
    return JSON.parse(vm.dump(settled.value) as string);
  } finally {
    vm.dispose();
  }
}

async function transpileOk(source: string): Promise<string> {
  const result = await transpileTypeScript(source);
  if (!result.ok) throw new Error(`expected success, got: ${result.message}`);
  return result.code;
}

async function transpileError(source: string): Promise<string> {
  const result = await transpileTypeScript(source);
  if (result.ok) throw new Error(`expected failure, got code: ${result.code}`);
  return result.message;
}

// Must stay the first test in this file: module state is shared by the tests below.
describe("laziness", () => {
  it("does not load the compiler for JavaScript paths, only on the first transpile", async () => {
    expect(isTypeScriptCompilerLoaded()).toBe(false);
    // The JavaScript pipeline (source checks) never touches the compiler.
    expect(checkModuleAccess("const x = 1; return x").ok).toBe(true);
    expect(checkShellCommand("return 1 + 2").ok).toBe(true);
    expect(checkModuleAccess('import x from "y"').ok).toBe(false);
    expect(isTypeScriptCompilerLoaded()).toBe(false);

    const pending = transpileTypeScript("const n: number = 1; return n;");
    const result = await pending;
    expect(result).toEqual({ ok: true, code: "    const n = 1;\n    return n;" });
    expect(isTypeScriptCompilerLoaded()).toBe(true);
    // The temporary `process.browser` switch used while the compiler evaluates is restored.
    expect((globalThis as { process?: { browser?: unknown } }).process?.browser).toBeUndefined();
  }, 120_000); // the first load transforms and ships ~9 MB of compiler through the test runner
});

describe("transpileTypeScript", () => {
  it("erases interfaces and type annotations", async () => {
    const code = await transpileOk(
      "interface Shipment { id: string; paid: boolean; tons: number }\n" +
        "const shipments: Shipment[] = [];\n" +
        "return shipments.filter((s: Shipment): boolean => !s.paid && s.tons > 10);",
    );
    expect(code).not.toContain("interface");
    expect(code).not.toContain(": Shipment");
    expect(code).toContain("const shipments = [];");
    expect(code).toContain("return shipments.filter((s) => !s.paid && s.tons > 10);");
  });

  it("erases generics, `as`, `satisfies` and non-null assertions", async () => {
    const code = await transpileOk(
      "function first<T>(xs: readonly T[]): T | undefined { return xs[0]; }\n" +
        "const cfg = { a: 1 } satisfies Record<string, number>;\n" +
        "const v = first<number>([1, 2])! as number;\n" +
        "return { cfg, v };",
    );
    expect(code).toContain("function first(xs) { return xs[0]; }");
    expect(code).toContain("const cfg = { a: 1 };");
    expect(code).toContain("const v = first([1, 2]);");
    expect(code).not.toMatch(/satisfies|<number>|as number/);
  });

  it("compiles enums to plain JavaScript", async () => {
    const code = await transpileOk("enum Color { Red, Green = 'green' }\nreturn Color.Green;");
    expect(code).toContain('Color[Color["Red"] = 0] = "Red";');
    expect(code).toContain('Color["Green"] = "green";');
    expect(code).toContain("return Color.Green;");
    expect(code).not.toContain("enum");
  });

  it("keeps top-level await and return in the function body", async () => {
    const code = await transpileOk(
      'const [tool]: Array<(input: unknown) => Promise<unknown>> = await catalog.search("list shipments");\n' + "return await tool({});",
    );
    expect(code).toBe('    const [tool] = await catalog.search("list shipments");\n    return await tool({});');
    expect(code).not.toContain("__cm_cell__");
  });

  it("keeps `as const` values and drops the assertion", async () => {
    const code = await transpileOk("const modes = ['a', 'b'] as const;\ntype Mode = typeof modes[number];\nreturn modes;");
    expect(code).toBe("    const modes = ['a', 'b'];\n    return modes;");
  });

  it("returns an empty body for empty or type-only input", async () => {
    expect(await transpileOk("")).toBe("");
    expect(await transpileOk("type A = string;\ninterface B {}")).toBe("");
  });

  it("keeps template literal text verbatim, even a lone `}` line", async () => {
    const code = await transpileOk("const s: string = `\n}\n`;\nreturn s;");
    expect(code).toBe("    const s = `\n}\n`;\n    return s;");
  });

  it("moves emitted helpers (decorators) into the body", async () => {
    const code = await transpileOk("function dec(c: unknown) {}\n@dec class Box {}\nreturn Box.name;");
    expect(code.indexOf("var __esDecorate")).toBe(0);
    expect(code).toContain("return Box.name;");
    expect(code).not.toContain("__cm_cell__");
  });

  it("output runs in QuickJS as an async function body with the TypeScript semantics", async () => {
    const code = await transpileOk(
      "enum E { A = 2 }\n" +
        "interface P { x: number }\n" +
        "const xs: P[] = [{ x: 1 }, { x: 2 }];\n" +
        "const k = await Promise.resolve<number>(10);\n" +
        "function twice<T>(v: T): [T, T] { return [v, v]; }\n" +
        "return { mapped: xs.map((p) => p.x * E.A), k, pair: twice('a' as const), name: E[2] };",
    );
    expect(await runInQuickJS(code)).toEqual({ mapped: [2, 4], k: 10, pair: ["a", "a"], name: "A" });
  });

  it("output with emitted helpers (decorators) runs in QuickJS", async () => {
    const code = await transpileOk(
      "const seen: string[] = [];\n" +
        "function tag(c: unknown, ctx: ClassDecoratorContext) { seen.push(String(ctx.name)); }\n" +
        "@tag class Box {}\n" +
        "return seen;",
    );
    expect(await runInQuickJS(code)).toEqual(["Box"]);
  });

  it("reports syntax errors with line:column relative to the user's code", async () => {
    const message = await transpileError("const a = 1;\nconst b = ;\nreturn a;");
    expect(message).toMatch(/^TypeScript transform failed:/);
    expect(message).toContain("line 2:11 - error TS1109: Expression expected.");
  });

  it("reports the first line as line 1", async () => {
    const message = await transpileError("let x: = 3;");
    expect(message).toContain("line 1:");
    expect(message).toContain("error TS");
  });

  it("reports unterminated input at the end of the user's code, not the wrapper", async () => {
    const message = await transpileError("const a = 1;\nif (a) {\n  return a;");
    expect(message).toMatch(/line 3:\d+ - error TS1005: '}' expected\./);
    expect(message).not.toContain("line 4");
  });

  it("bounds the number of reported diagnostics and the message length", async () => {
    const source = Array.from({ length: 40 }, (_, i) => `const v${i} = ;`).join("\n");
    const message = await transpileError(source);
    expect(message.match(/error TS/g)?.length).toBe(5);
    expect(message).toMatch(/\(\d+ more\)/);
    expect(message.length).toBeLessThanOrEqual(1500);
  });

  it("rejects code that closes the wrapper early", async () => {
    const message = await transpileError("return 1 }\nfunction escape() {");
    expect(message).toContain("unbalanced braces");
    const trailing = await transpileError("return 1;\n}");
    expect(trailing).toContain("TypeScript transform failed");
  });

  const moduleSyntax: Array<[string, string, number]> = [
    ['import x from "y";\nreturn x;', "`import` declarations", 1],
    ['const a = 1;\nimport { b } from "c";', "`import` declarations", 2],
    ['import fs = require("fs");', "`import` declarations", 1],
    ["export const x = 1;", "`export`", 1],
    ["const x = 1;\nexport { x };", "`export`", 2],
    ["export default 1;", "`export`", 1],
    ['const m = await import("node:fs");', "dynamic `import(...)`", 1],
    ["\n\nreturn import.meta.url;", "`import.meta`", 3],
    ['let t: typeof import("fs");', "types are not available", 1],
  ];

  it.each(moduleSyntax)("reports module syntax %j", async (source, what, line) => {
    const message = await transpileError(source);
    expect(message).toContain(what);
    expect(message).toContain(`line ${line}:`);
    expect(message).toContain("catalog.search(");
  });

  it("handles concurrent first calls with one compiler instance", async () => {
    const results = await Promise.all([transpileTypeScript("return 1 as number"), transpileTypeScript("return 2 as number")]);
    expect(results).toEqual([
      { ok: true, code: "    return 1;" },
      { ok: true, code: "    return 2;" },
    ]);
  });
});

describe("diagnostics are bounded and located like an editor (items 1 and 11)", () => {
  it("a cell of thousands of one-line syntax errors reports the first five and counts the rest", async () => {
    // 320 KB: over a minute before (every diagnostic located by re-splitting the whole source).
    const message = await transpileError("a b;\n".repeat(64 * 1024));
    expect(message.match(/error TS/g)?.length).toBe(5);
    expect(message).toContain("line 1:1 - error TS1434");
    expect(message).toContain("line 5:1 - error TS1434");
    expect(message).toMatch(/\((\d+) more\)$/);
    expect(Number(/\((\d+) more\)$/.exec(message)![1])).toBeGreaterThan(60_000);
  });

  it("formats and locates only the diagnostics it shows", async () => {
    const ts = await loadTypeScriptCompiler();
    let read = 0;
    const diagnostics = Array.from({ length: 10_000 }, (_, i) => ({
      category: ts.DiagnosticCategory.Error,
      code: 1000 + i,
      file: undefined,
      start: undefined,
      length: undefined,
      get messageText() {
        read++;
        return `problem ${i}`;
      },
    }));
    const message = formatDiagnostics(ts, diagnostics, new UserPositions("x", 0));
    expect(read).toBe(5);
    expect(message).toContain("error TS1004: problem 4");
    expect(message).not.toContain("problem 5");
    expect(message).toContain("(9995 more)");
  });

  it("does not count U+2028/U+2029 as line breaks", async () => {
    // The compiler numbers lines the ECMAScript way (this was reported as line 3).
    expect(await transpileError("const s = 'a\u2028b\u2029c';\nconst x = ;")).toMatch(/^TypeScript transform failed:\n  line 2:11 - error TS1109/);
    expect(await transpileError("/* note\u2028still line 1 */\nlet y = 1;\nconst x = ;")).toMatch(
      /^TypeScript transform failed:\n  line 3:11 - error TS1109/,
    );
  });

  it("counts \\r\\n and a lone \\r as one line break each", async () => {
    expect(await transpileError("let a = 1;\r\nlet b = 2;\rconst x = ;")).toContain("line 3:11 - error TS1109");
  });

  it("locates module syntax with the same editor lines and bounds how much it lists", async () => {
    expect(await transpileError("const s = '\u2028';\nexport const x = 1;")).toContain("line 2:1 - `export`");
    const many = await transpileError("export const a = 1;\n".repeat(50));
    expect(many.match(/`export` is not available/g)?.length).toBe(4);
    expect(many).toContain("catalog.search(");
    expect(many).toContain("(46 more)");
  });

  it("namespace members may be exported; module syntax inside a namespace is still refused", async () => {
    const code = await transpileOk("namespace Geo { export const R = 2; export function km(x: number) { return x * R; } }\nreturn Geo.km(3);");
    expect(await runInQuickJS(code)).toBe(6);
    expect(await transpileError('namespace N { import x = require("y"); }')).toContain("`import` declarations");
  });

  it("a compiler stack overflow is a transform failure, and the compiler keeps working", async () => {
    expect(await transpileError("@\n".repeat(100_000))).toContain("Maximum call stack size exceeded");
    expect(await transpileOk("return 1 as number")).toBe("    return 1;");
  });

  it("line starts and positions: editor lines, clamped offsets", () => {
    const text = "ab\ncd\r\nef\rg\u2028h";
    const starts = lineStarts(text);
    expect(starts).toEqual([0, 3, 7, 10]);
    expect(lineAndColumn(starts, text.length, 0)).toEqual({ line: 1, column: 1 });
    expect(lineAndColumn(starts, text.length, 4)).toEqual({ line: 2, column: 2 });
    expect(lineAndColumn(starts, text.length, 12)).toEqual({ line: 4, column: 3 }); // after U+2028: same line
    expect(lineAndColumn(starts, text.length, -5)).toEqual({ line: 1, column: 1 });
    expect(lineAndColumn(starts, text.length, 999)).toEqual({ line: 4, column: text.length - 10 + 1 });
  });
});
