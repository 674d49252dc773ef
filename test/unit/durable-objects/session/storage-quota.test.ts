import { describe, expect, it } from "vitest";
import { estimateStoredBytes } from "../../../../durable-objects/session/storage-quota";

describe("estimateStoredBytes (what a tool value is charged)", () => {
  it("counts the key and UTF-8 bytes of strings", () => {
    expect(estimateStoredBytes("k", "")).toBe(1);
    expect(estimateStoredBytes("tool:note:a", "hello")).toBe(11 + 5);
    expect(estimateStoredBytes("k", "é€😀")).toBe(1 + 2 + 3 + 4);
  });

  it("counts binary data by byte length, numbers and dates as 8, booleans and null as 1", () => {
    expect(estimateStoredBytes("", new Uint8Array(1000))).toBe(1000);
    expect(estimateStoredBytes("", new ArrayBuffer(64))).toBe(64);
    expect(estimateStoredBytes("", 3.14)).toBe(8);
    expect(estimateStoredBytes("", new Date(0))).toBe(8);
    expect(estimateStoredBytes("", true)).toBe(1);
    expect(estimateStoredBytes("", null)).toBe(1);
  });

  it("walks objects, arrays, maps and sets, counting property names", () => {
    expect(estimateStoredBytes("", { ab: "xyz", n: 1 })).toBe(2 + 3 + 1 + 8);
    expect(estimateStoredBytes("", ["a", "b"])).toBe(1 + 1 + 1);
    expect(estimateStoredBytes("", new Map([["k", "v"]]))).toBe(2);
    expect(estimateStoredBytes("", new Set(["abc"]))).toBe(3);
  });

  it("counts a shared or cyclic reference once (structured clone stores it once)", () => {
    const shared = { text: "x".repeat(100) };
    expect(estimateStoredBytes("", [shared, shared, shared])).toBe(1 + 4 + 100);
    const cyclic: Record<string, unknown> = { s: "abc" };
    cyclic.self = cyclic;
    expect(estimateStoredBytes("", cyclic)).toBe(1 + 3 + 4);
  });
});
