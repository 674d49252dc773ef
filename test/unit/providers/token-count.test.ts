import { describe, expect, it } from "vitest";
import { addUsage, ZERO_USAGE } from "../../../src/agent/chat-state";
import { MAX_TOKEN_COUNT } from "../../../src/limits";
import { addTokenCounts, tokenCount } from "../../../src/providers";

describe("tokenCount", () => {
  it.each([0, 1, 42, 1_000_000, MAX_TOKEN_COUNT])("a count (%d) is kept", (value) => {
    expect(tokenCount(value)).toBe(value);
  });

  // Hostile usage (a provider reporting { input: -5000000, output: -1 }) gave meta.costUsd -10.000008.
  it.each([-1, -5_000_000, 1.5, 0.1, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, "12", null, undefined, {}])(
    "%j is not a count: unknown, 0",
    (value) => {
      expect(tokenCount(value)).toBe(0);
    },
  );

  // Usage of 1e308 gave costUsd and inputTokens `null` in the JSON (Infinity and 1e308 × price).
  it.each([MAX_TOKEN_COUNT + 1, 2 ** 60, 1e20, 1e308, Number.MAX_VALUE])("a count past the bound (%d) is clamped to it", (value) => {
    expect(tokenCount(value)).toBe(MAX_TOKEN_COUNT);
  });

  it("sums saturate at the bound and never go negative", () => {
    expect(addTokenCounts(2, 3)).toBe(5);
    expect(addTokenCounts(MAX_TOKEN_COUNT, MAX_TOKEN_COUNT)).toBe(MAX_TOKEN_COUNT);
    expect(addTokenCounts(MAX_TOKEN_COUNT, 1)).toBe(MAX_TOKEN_COUNT);
    expect(addTokenCounts(-10, 3)).toBe(3);
  });
});

describe("addUsage", () => {
  it("adds field by field, each total bounded", () => {
    const total = { ...ZERO_USAGE, inputTokens: MAX_TOKEN_COUNT - 1 };
    addUsage(total, { inputTokens: 10, outputTokens: 2, cacheReadTokens: 3, cacheWriteTokens: 4 });
    addUsage(total, { inputTokens: 1, outputTokens: 2, cacheReadTokens: 3, cacheWriteTokens: 4 });
    expect(total).toEqual({ inputTokens: MAX_TOKEN_COUNT, outputTokens: 4, cacheReadTokens: 6, cacheWriteTokens: 8 });
  });

  it("a stored total that is not a count (an older gateway kept -5000000) restarts from 0", () => {
    const total = { inputTokens: -5_000_000, outputTokens: -1, cacheReadTokens: 0, cacheWriteTokens: 0 };
    addUsage(total, { inputTokens: 7, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 });
    expect(total).toEqual({ inputTokens: 7, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 });
  });
});
