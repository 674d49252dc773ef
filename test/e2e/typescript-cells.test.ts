import { describe, expect, it } from "vitest";
import { frozenClock } from "../../src/runtime";
import { exec, freshTurn } from "./helpers";
import { setClock } from "./session-controls";

/** The TypeScript compiler is loaded in this isolate (the session objects run in the tests' isolate). */
async function compilerLoaded(): Promise<boolean> {
  return (await import("../../src/source/typescript-transform")).isTypeScriptCompilerLoaded();
}

describe("TypeScript cells", () => {
  // Order matters: the first test proves JavaScript cells never load the compiler.
  it("JavaScript cells do not load the TypeScript compiler", async () => {
    const { session, turnId } = await freshTurn();
    expect((await exec(session, turnId, "return [1, 2].map((x) => x * 2)")).value).toEqual([2, 4]);
    expect((await exec(session, turnId, "const s = await shipping_list({}); return s.length")).value).toBe(6);
    expect(await compilerLoaded()).toBe(false);
  });

  it("a TypeScript cell is transpiled, run, and loads the compiler only then", async () => {
    const { session, turnId } = await freshTurn();
    // The compiler start is charged to this cell. Frozen, as in production, the clock leaves that
    // charge to its estimate; the test runner's clock would add the seconds it takes to ship the
    // compiler to workerd over a socket, which a deployed Worker never does.
    setClock(frozenClock());
    const r = await exec(
      session,
      turnId,
      `interface Shipment { id: string; paid: boolean; tons: number }
       enum Kind { Heavy = "heavy" }
       const list = (await shipping_list({})) as Shipment[];
       const heavy = list.filter((s: Shipment): boolean => s.tons > 20).map((s) => ({ id: s.id, kind: Kind.Heavy } as const));
       return heavy;`,
      { language: "typescript" },
    );
    expect(r).toMatchObject({
      status: "completed",
      value: [
        { id: "SH-1004", kind: "heavy" },
        { id: "SH-1005", kind: "heavy" },
      ],
    });
    expect(await compilerLoaded()).toBe(true);
  });

  it("transform diagnostics are a failed invalid_input result with a line number", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(session, turnId, "const x: number = 1;\nconst y = (;\nreturn x;", { language: "typescript" });
    expect(r).toMatchObject({ status: "failed", code: "invalid_input" });
    expect(r.error).toMatch(/^TypeScript transform failed:\s+line 2:\d+ - error TS1109/);
  });

  it("a chain of operators too long for the compiler's transform is refused before it runs; a long but ordinary one runs", async () => {
    const { session, turnId } = await freshTurn();
    // `enum` takes the compiler path; a left-deep chain of 10,000 identifiers sums ~50 million depths.
    const chain = (n: number) => `enum E { A }\nconst a = 1;\nreturn ${Array.from({ length: n }, () => "a").join(" + ")};`;
    const refused = await exec(session, turnId, chain(10_000), { language: "typescript" });
    expect(refused).toMatchObject({ status: "failed", code: "invalid_input" });
    expect(refused.error).toContain("This TypeScript cell chains too many operators or commas in one expression (around line 3)");
    const fine = await exec(session, turnId, chain(1_000), { language: "typescript" });
    expect(fine).toMatchObject({ status: "completed", value: 1_000 });
  });

  it("error lines are editor lines: U+2028/U+2029 do not count, \\r\\n and \\r do", async () => {
    const { session, turnId } = await freshTurn();
    const ts = await exec(session, turnId, "const s = 'a\u2028b\u2029c';\r\nlet t = 1;\rconst x = ;", { language: "typescript" });
    expect(ts).toMatchObject({ status: "failed", code: "invalid_input" });
    expect(ts.error).toMatch(/^TypeScript transform failed:\n  line 3:11 - error TS1109/);
    const js = await exec(session, turnId, "/* a\u2028b */\nconst fs = require('fs');");
    expect(js).toMatchObject({ status: "failed", code: "invalid_input" });
    expect(js.error).toContain("on line 2");
  });

  it("module syntax in TypeScript is rejected", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(session, turnId, "import fs from 'fs';\nreturn 1", { language: "typescript" });
    expect(r).toMatchObject({ status: "failed", code: "invalid_input" });
  });
});
