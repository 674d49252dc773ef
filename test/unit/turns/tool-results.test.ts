import { describe, expect, it } from "vitest";
import { buildCatalog, guestDescription, guestMetadata } from "../../../src/catalog";
import { CODE_MODE_DEFAULTS } from "../../../src/config";
import { parseExecInput } from "../../../src/cell";
import { boundedResult } from "../../../src/code-mode";
import { clientResultSettlement } from "../../../src/turns";
import { defaultExecLanguage, modelSurface } from "../../../src/turns";
import type { TurnSpec } from "../../../src/turns";

describe("boundedResult: the size cap agrees with the output contract", () => {
  const big = Array.from({ length: 100 }, (_, i) => ({ id: `SH-${i}`, paid: false, tons: i }));
  const bytes = new TextEncoder().encode(JSON.stringify(big)).length;

  it("a value within maxOutputBytes arrives whole either way", () => {
    expect(boundedResult("t", [1, 2], 1024, true)).toEqual({ ok: true, text: "[1,2]" });
    expect(boundedResult("t", undefined, 1024, false)).toEqual({ ok: true, text: "null" });
  });

  it("a declared output over the cap fails naming the tool, the size and the limit", () => {
    expect(boundedResult("shipping_list", big, 2048, true)).toEqual({
      ok: false,
      message: `shipping_list returned ${bytes} bytes, over maxOutputBytes (2048); its declared output cannot be truncated — ask for less (narrower arguments, fewer items, a page at a time)`,
    });
  });

  it("an undeclared output over the cap becomes the seed's marker", () => {
    const r = boundedResult("echo", big, 2048, false);
    expect(r.ok).toBe(true);
    const marker = r.ok ? JSON.parse(r.text!) : undefined;
    expect(Object.keys(marker).sort()).toEqual(["guidance", "omittedBytes", "prefix", "truncated"]);
    expect(marker.truncated).toBe(true);
    expect(marker.omittedBytes + new TextEncoder().encode(marker.prefix).length).toBe(bytes);
  });
});

describe("clientResultSettlement", () => {
  const catalog = buildCatalog({
    plugins: [],
    clientTools: [{ name: "names list", outputSchema: { type: "array", items: { type: "string" } } }, { name: "free" }],
    policy: {},
  });
  const spec = { catalog, options: { ...CODE_MODE_DEFAULTS, maxOutputBytes: 1024 } } as unknown as TurnSpec;

  it("an error result is the client's own message", () => {
    expect(clientResultSettlement(spec, "names list", { error: { message: "declined" } })).toEqual({ ok: false, message: "declined" });
  });

  it("a value that matches the declared outputSchema passes; one that does not fails without printing it", () => {
    expect(clientResultSettlement(spec, "names list", { value: ["a"] })).toEqual({ ok: true, text: '["a"]' });
    const bad = clientResultSettlement(spec, "names list", { value: [{ secret: "hunter2" }] });
    expect(bad).toEqual({ ok: false, message: "names list result does not match its declared outputSchema (type check failed at /0)" });
  });

  it("size: declared outputs fail over the cap, undeclared ones (and unknown tools) get the marker", () => {
    const many = Array.from({ length: 300 }, (_, i) => `n${i}`);
    const declared = clientResultSettlement(spec, "names list", { value: many });
    expect(declared.ok === false && declared.message).toMatch(/^names list returned \d+ bytes, over maxOutputBytes \(1024\)/);
    for (const tool of ["free", undefined]) {
      const r = clientResultSettlement(spec, tool, { value: many });
      expect(r.ok && JSON.parse(r.text!).truncated).toBe(true);
    }
    expect(clientResultSettlement(spec, "free", {})).toEqual({ ok: true, text: "null" });
  });

  it("a client's outputSchema is kept apart from trusted contracts: no hint, not in describe()", () => {
    const entry = catalog.entries[0]!;
    expect(entry.outputSchema).toBeUndefined();
    expect(entry.clientOutputSchema).toEqual({ type: "array", items: { type: "string" } });
    expect(guestMetadata(entry)).not.toHaveProperty("output");
    expect(guestDescription(entry)).not.toHaveProperty("outputSchema");
  });
});

describe("exec language default follows the enabled languages", () => {
  it.each([
    [["javascript", "typescript"], "javascript"],
    [["typescript", "javascript"], "javascript"],
    [["javascript"], "javascript"],
    [["typescript"], "typescript"],
  ] as const)("%j → %s, in the schema and in exec input", (languages, expected) => {
    expect(defaultExecLanguage(languages)).toBe(expected);
    const execTool = modelSurface({ entries: [], direct: [] }, { kind: "code_mode", languages })[0]!;
    expect((execTool.parameters.properties as any).language.description).toBe(`Source language; defaults to "${expected}".`);
    const parsed = parseExecInput({ code: "return 1" }, languages);
    expect(parsed.ok && parsed.input.language).toBe(expected);
  });
});
