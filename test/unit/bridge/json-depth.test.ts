import { describe, expect, it } from "vitest";

describe("valueTooDeep: nesting of a parsed value, without recursion", () => {
  it("counts containers from 1 at the root; 100 000 levels do not overflow", async () => {
    const { valueTooDeep } = await import("../../../src/bridge");
    let deep: unknown = "leaf";
    for (let i = 0; i < 100_000; i++) deep = { a: [deep] };
    expect(valueTooDeep(deep)).toBe(true);
    expect(valueTooDeep({ a: { b: [1] } }, 3)).toBe(false);
    expect(valueTooDeep({ a: { b: [[1]] } }, 3)).toBe(true);
    expect(valueTooDeep("x", 0)).toBe(false);
  });
});
