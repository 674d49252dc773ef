import { QuickJS } from "quickjs-wasi";
import { describe, expect, it } from "vitest";
import { QUICKJS_MODULE } from "../../../wasm/quickjs";
import { frozenClock } from "../../../src/runtime";
import {
  CellBudget,
  COSTS,
  isTypeScriptCompilerLoaded,
  isTypeScriptStripperLoaded,
  prepareSource,
  routesToCompiler,
  stripTypeScript,
  transpileTypeScript,
} from "../../../src/source";

/** Runs a cell body as the runtime does (an async function in QuickJS); the value or the thrown error, as JSON. */
async function run(code: string): Promise<unknown> {
  const vm = await QuickJS.create({ wasm: QUICKJS_MODULE });
  try {
    const promise = vm.evalCode(
      `(async function () {\n${code}\n})().then((v) => JSON.stringify({ value: v }), (e) => JSON.stringify({ error: String(e) }))`,
    );
    vm.executePendingJobs();
    const settled = await vm.resolvePromise(promise);
    if ("error" in settled) throw new Error(`guest error: ${JSON.stringify(vm.dump(settled.error))}`);
    return JSON.parse(vm.dump(settled.value) as string);
  } finally {
    vm.dispose();
  }
}

async function compiled(source: string): Promise<string> {
  const out = await transpileTypeScript(source);
  if (!out.ok) throw new Error(`the compiler refused: ${out.message}`);
  return out.code;
}

/** Constructs of pure erasure: the fast path takes them, and the program is the compiler's. */
const ERASED: [string, string][] = [
  [
    "annotations, interfaces and type aliases",
    "interface P { x: number }\ntype Q = P & { y?: string };\nconst p: Q = { x: 1 };\nreturn p.x + (p.y ?? 'none');",
  ],
  ["`satisfies`", "const cfg = { retries: 3, name: 'a' } satisfies { retries: number; name: string };\nreturn cfg;"],
  [
    "`as`, `as const`, `<T>x` and `!`",
    "const xs = [1, 2] as const;\nconst n = <number>(xs[0] as unknown);\nconst m = new Map([[1, 'a']]).get(1)!;\nreturn [n, m, xs.length];",
  ],
  [
    "generics and arrow generics",
    "function first<T>(xs: T[]): T | undefined { return xs[0]; }\nconst id = <T,>(x: T): T => x;\nreturn id(first<number>([7, 8]));",
  ],
  [
    "overload signatures and `this` parameters",
    "function f(a: string): string;\nfunction f(a: number): number;\nfunction f(this: void, a: any): any { return a; }\nreturn [f('x'), f(2)];",
  ],
  [
    "optional parameters, definite assignment and type predicates",
    "let d!: number; d = 4;\nconst isNum = (v: unknown): v is number => typeof v === 'number';\nfunction g(a?: number) { return a ?? d; }\nreturn [g(), g(1), isNum(3)];",
  ],
  [
    "top-level await, return and modern syntax",
    "const v = await Promise.resolve<number>(1_000);\ntry { throw 1 } catch { }\nreturn { v, o: ({} as { a?: { b: number } }).a?.b ?? null };",
  ],
];

/** Constructs whose output or errors could differ: always the compiler, never the fast path. */
const ROUTED: [string, string][] = [
  ["enums", "enum E { A, B = 'b' }\nreturn [E.A, E[0], E.B];"],
  ["const enums", "const enum C { X = 2 }\nreturn C.X;"],
  ["namespaces", "namespace N { export const k = 3; }\nreturn N.k;"],
  ["decorators", "function dec(target: any, context: any) { return target; }\nclass K { @dec m() { return 1; } }\nreturn new K().m();"],
  ["parameter properties", "class P { constructor(public x: number, private y = 2) {} sum() { return this.x + this.y; } }\nreturn new P(1).sum();"],
  [
    "class fields (useDefineForClassFields)",
    "class B { set v(x: number) { (globalThis as any).hit = x; } }\nclass D extends B { v: any; }\nconst d = new D();\nreturn [Object.keys(d), (globalThis as any).hit ?? null];",
  ],
  ["`declare`", "declare const missing: number;\ndeclare function g(): void;\nreturn typeof missing;"],
  ["`accessor`", "class A { accessor n = 1; }\nreturn new A().n;"],
];

/** Module syntax: refused as ever (the source checks name it), and never stripped into a runnable cell. */
const MODULE_SYNTAX: [string, string][] = [
  ["`import =`", "import fs = require('fs');\nreturn 1;"],
  ["`export =`", "export = 1;"],
];

// Must stay first: it proves the fast path starts no compiler in this module state.
describe("the fast path", () => {
  it("runs a TypeScript cell without loading the compiler, charging the stripper start instead", async () => {
    expect(isTypeScriptCompilerLoaded()).toBe(false);
    const budget = new CellBudget(frozenClock(0), 10_000);
    const r = await prepareSource("const n: number = 41;\nreturn n + 1;", "typescript", budget);
    expect(r).toEqual({ ok: true, code: "const n = 41;\nreturn n + 1;" });
    expect(isTypeScriptStripperLoaded()).toBe(true);
    expect(isTypeScriptCompilerLoaded()).toBe(false);
    const charged = 10_000 - budget.remainingMs();
    expect(charged).toBeGreaterThanOrEqual(COSTS.stripperStartMs);
    expect(charged).toBeLessThan(COSTS.compilerStartMs);
  });

  it("a fast-path cell that cannot afford the stripper start is refused naming the transform, not the compiler", async () => {
    expect(isTypeScriptCompilerLoaded()).toBe(false);
    const r = await prepareSource("return 1 as number;", "typescript", new CellBudget(frozenClock(0), 1));
    expect(r).toMatchObject({ ok: false, code: "timeout" });
    if (!r.ok) expect(r.message).toContain("The TypeScript transform exceeded timeoutMs (1)");
    expect(isTypeScriptCompilerLoaded()).toBe(false);
  });
});

describe("the fast path gives the compiler's program", () => {
  it.each(ERASED)(
    "%s: taken, and runs to the same result",
    async (_name, source) => {
      expect(routesToCompiler(source)).toBe(false);
      const fast = await stripTypeScript(source);
      expect(fast).toBeDefined();
      const slow = await compiled(source);
      const [a, b] = [await run(fast!), await run(slow)];
      expect(a).toEqual(b);
      expect(a).not.toHaveProperty("error");
    },
    120_000,
  ); // the first compiler load ships ~9 MB through the test runner

  it.each(ROUTED)("%s: left to the compiler, whose result the cell gets", async (_name, source) => {
    expect(routesToCompiler(source)).toBe(true);
    expect(await stripTypeScript(source)).toBeUndefined();
    const viaCell = await prepareSource(source, "typescript", new CellBudget(frozenClock(0), 10_000));
    const viaCompiler = await transpileTypeScript(source);
    if (viaCompiler.ok) expect(viaCell).toEqual({ ok: true, code: viaCompiler.code });
    else expect(viaCell).toMatchObject({ ok: false, code: "invalid_input", message: viaCompiler.message });
  });

  it.each(MODULE_SYNTAX)("%s: left to the compiler, and the cell is refused as invalid input", async (_name, source) => {
    expect(routesToCompiler(source)).toBe(true);
    expect(await stripTypeScript(source)).toBeUndefined();
    expect(await transpileTypeScript(source)).toMatchObject({ ok: false });
    const viaCell = await prepareSource(source, "typescript", new CellBudget(frozenClock(0), 10_000));
    expect(viaCell).toMatchObject({ ok: false, code: "invalid_input", message: expect.stringContaining("Module access is not available") });
  });

  it("a word in a string or a comment does not route a cell to the compiler", () => {
    expect(routesToCompiler("// enum, class, @decorator\nconst s: string = 'import x; export = 1';\nreturn s;")).toBe(false);
  });
});

describe("the compiler decides whatever the fast path cannot vouch for", () => {
  it("syntax errors get the compiler's diagnostics, located in the user's code", async () => {
    const source = "const x: number = 1;\nconst y = (;\nreturn x;";
    expect(await stripTypeScript(source)).toBeUndefined();
    const r = await prepareSource(source, "typescript", new CellBudget(frozenClock(0), 10_000));
    expect(r).toMatchObject({ ok: false, code: "invalid_input" });
    if (!r.ok) expect(r.message).toMatch(/^TypeScript transform failed:\s+line 2:\d+ - error TS1109/);
  });

  it("code that closes the wrapper early is refused as the compiler refuses it", async () => {
    const source = "return 1;\n}\nasync function other() {\nreturn 2;";
    expect(await stripTypeScript(source)).toBeUndefined();
    const r = await prepareSource(source, "typescript", new CellBudget(frozenClock(0), 10_000));
    expect(r).toMatchObject({ ok: false, code: "invalid_input" });
    if (!r.ok) expect(r.message).toContain("unbalanced braces");
  });
});
