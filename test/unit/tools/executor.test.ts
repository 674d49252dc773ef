import { describe, expect, it } from "vitest";
import { executeTool } from "../../../src/tools";
import type { ToolContext, ToolDefinition } from "../../../src/tools";

const ctx: ToolContext = {
  signal: new AbortController().signal,
  tenantId: "t",
  sessionId: "s",
  turnId: "u",
  store: { get: async () => undefined, put: async () => {}, delete: async () => false, list: async () => [] },
};
const Closed = { type: "object", properties: { id: { type: "string" } }, required: ["id"], additionalProperties: false };

describe("output contracts", () => {
  it("a matching result passes", async () => {
    const t: ToolDefinition = { name: "t", description: "", parameters: { type: "object" }, outputSchema: Closed, execute: () => ({ id: "a" }) };
    expect(await executeTool(t, {}, ctx)).toEqual({ ok: true, details: { id: "a" } });
  });

  it("a mismatch fails without printing the value", async () => {
    const t: ToolDefinition = {
      name: "t",
      description: "",
      parameters: { type: "object" },
      outputSchema: Closed,
      execute: () => ({ id: 42, secret: "hunter2-value" }),
    };
    const r = await executeTool(t, {}, ctx);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.message).toMatch(/does not match its declared outputSchema/);
      expect(r.message).not.toMatch(/hunter2|42/);
    }
  });

  it("an invalid outputSchema cannot run the tool", async () => {
    let ran = false;
    const t: ToolDefinition = {
      name: "t",
      description: "",
      parameters: { type: "object" },
      outputSchema: { type: "object", properties: { a: { $ref: "#/nowhere" } } },
      execute: () => {
        ran = true;
        return {};
      },
    };
    const r = await executeTool(t, {}, ctx);
    expect(r.ok).toBe(false);
    expect(ran).toBe(false);
  });

  it("input is validated against parameters before running", async () => {
    let ran = false;
    const t: ToolDefinition = {
      name: "t",
      description: "",
      parameters: { type: "object", properties: { n: { type: "integer", minimum: 1 } }, required: ["n"] },
      execute: () => {
        ran = true;
        return 1;
      },
    };
    const r = await executeTool(t, { n: 0 }, ctx);
    expect(r).toMatchObject({ ok: false });
    expect(ran).toBe(false);
  });

  it("a throwing tool becomes a message, never a host Error", async () => {
    const t: ToolDefinition = {
      name: "t",
      description: "",
      parameters: { type: "object" },
      execute: () => {
        throw new TypeError("nope");
      },
    };
    expect(await executeTool(t, {}, ctx)).toEqual({ ok: false, message: "nope" });
  });

  it("non-JSON results are rejected", async () => {
    const cyclic: any = {};
    cyclic.self = cyclic;
    const t: ToolDefinition = { name: "t", description: "", parameters: { type: "object" }, execute: () => cyclic };
    expect(await executeTool(t, {}, ctx)).toMatchObject({ ok: false, message: expect.stringMatching(/not JSON-compatible/) });
  });
});

import { compileSchema } from "../../../src/tools";

describe("schema compile", () => {
  it.each([
    [{ type: "strang" }, /unknown type/],
    [{ type: "object", properties: { a: { $ref: "#/$defs/missing" } } }, /does not resolve/],
    [{ type: "string", pattern: "(" }, /invalid regular expression/],
    [{ type: "object", required: "a" }, /required/],
    [{ anyOf: [] }, /non-empty/],
  ])("rejects %j", (schema, message) => {
    const r = compileSchema(schema as any);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.message).toMatch(message);
  });

  it("accepts ordinary schemas with local refs", () => {
    expect(compileSchema({ type: "object", properties: { a: { $ref: "#/$defs/A" } }, $defs: { A: { type: "string" } } }).ok).toBe(true);
    expect(compileSchema({ type: "array", items: { type: ["string", "null"] } }).ok).toBe(true);
  });
});

describe("schema patterns that can backtrack exponentially are refused", async () => {
  const { backtrackingRisk } = await import("../../../src/tools/schema-lint");
  it.each(["^(a+)+$", "(\\w*)*", "(a|aa)+", "^((ab)+c)+$", "(x+x+)+y", "(a{1,5})+", "(?:aa?)+c", "(?:a+){12}c"])("refuses %s", (p) => {
    expect(backtrackingRisk(p)).toMatch(/backtrack/);
  });
  it.each(["^[a-z0-9_-]+$", "^\\d{3}-\\d{4}$", "^(foo|bar)$", "^(ab){3}$", "^[(+*|)]+$", "^\\(a+\\)+$", "^[A-Z]{2}\\d+$"])("accepts %s", (p) => {
    expect(backtrackingRisk(p)).toBeUndefined();
  });
  it("refuses very long patterns", () => {
    expect(backtrackingRisk("a".repeat(513))).toMatch(/longer than 512/);
  });
  it.each(["^a*a*a*a*a*a*a*a*a*a*a*a*a*$", ".*a.*a.*a!", "^\\w+\\d*\\s{2,}$", "a{1,100}b{1,100}c{1,100}"])(
    "refuses %s (polynomial: more than two unbounded repeats)",
    (p) => {
      expect(backtrackingRisk(p)).toMatch(/more than 2 unbounded repeats/);
    },
  );
  it.each([
    "^[a-z]+-\\d+$",
    "^https?://.+$",
    "^a{1,32}b{1,32}c{1,32}$",
    "^[*+]{2}$",
    "^-?\\d+(\\.\\d+)?$",
    "^https?://[^/]+(/.*)?$",
    "^(\\d{1,3}\\.){3}\\d{1,3}$",
    "^(https?://)?[a-z]+$",
  ])("accepts %s", (p) => {
    expect(backtrackingRisk(p)).toBeUndefined();
  });
  it.each([
    "(a|aa){30}c",
    "(?:a|aa)".repeat(40) + "c",
    "^a{0,32}a{0,32}a{0,32}a{0,32}a{0,32}a{0,32}b",
    "^a?a?a?a?a?a?a?a?a?a?a?a?a?a?a?a?a?a?a?a?a?a?a?a?a?aaaaaaaaaaaaaaaaaaaaaaaaa$",
    "a{0,20}a{0,20}a{0,20}a{0,20}a{0,20}b",
  ])("refuses %s (bounded repeats with too many choices)", (p) => {
    expect(backtrackingRisk(p)).toMatch(/too many choices/);
  });
});

describe("a pattern only meets strings it can check quickly", async () => {
  const { checkValue } = await import("../../../src/tools/schema-validator");
  const str = (pattern: string) => ({ type: "string", pattern });
  it("one unbounded repeat: up to 4096 characters; two: up to 256; a longer string fails closed", () => {
    expect(checkValue(str("^a+$"), "a".repeat(4096)).ok).toBe(true);
    expect(checkValue(str("^a+$"), "a".repeat(4097))).toEqual({ ok: false, message: "pattern check failed" });
    expect(checkValue(str("a*a*b"), "a".repeat(255) + "b").ok).toBe(true);
    expect(checkValue(str("a*a*b"), "a".repeat(300) + "b").ok).toBe(false);
  });
  it("a value holding more text than its patterns can check in bounded time fails closed, whatever field holds it", () => {
    const schema = { type: "object", properties: { s: { type: "array", items: { type: "string", pattern: "a*a*b" } } } };
    expect(checkValue(schema, { s: Array(3).fill("a".repeat(200) + "b") }).ok).toBe(true);
    expect(checkValue(schema, { s: Array(10).fill("a".repeat(270)) })).toEqual({
      ok: false,
      message: "pattern check refused: the value holds more text than the schema's patterns can check in bounded time",
    });
    // A flat anchored pattern costs what its text is long: a large value passes.
    const flat = { type: "array", items: { type: "string", pattern: "^[a-z]+$" } };
    expect(checkValue(flat, Array(1000).fill("a".repeat(1000))).ok).toBe(true);
  });

  it("the meaning is unchanged: an unanchored pattern searches, anchors and backreferences work", () => {
    expect(checkValue(str("b"), "abc").ok).toBe(true);
    expect(checkValue(str("^b"), "abc").ok).toBe(false);
    expect(checkValue(str("c$"), "abc").ok).toBe(true);
    expect(checkValue(str("(x)\\1"), "axxb").ok).toBe(true);
    expect(checkValue(str("(x)\\1"), "axyb").ok).toBe(false);
  });
  it("patternProperties keys are bounded the same way; const and enum values are never rewritten", () => {
    const schema = { type: "object", patternProperties: { "^k+$": { type: "number" } }, additionalProperties: false };
    expect(checkValue(schema, { kkk: 1 }).ok).toBe(true);
    expect(checkValue(schema, { ["k".repeat(5000)]: 1 }).ok).toBe(false);
    expect(checkValue({ const: { pattern: "x" } }, { pattern: "x" }).ok).toBe(true);
    expect(checkValue({ enum: [{ pattern: "^a$" }] }, { pattern: "^a$" }).ok).toBe(true);
  });
});
