import { describe, expect, it } from "vitest";
import { MAX_TOKEN_COUNT } from "../../../src/limits";
import { costUsd, type ModelUsage } from "../../../src/providers";

const usage = (over: Partial<ModelUsage> = {}): ModelUsage => ({ inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, ...over });

describe("costUsd", () => {
  it("bills each usage field at its own tier (USD per 1M tokens)", () => {
    const cost = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };
    const u = usage({ inputTokens: 1_000, outputTokens: 2_000, cacheReadTokens: 10_000, cacheWriteTokens: 4_000 });
    // 1000×3 + 2000×15 + 10000×0.3 + 4000×3.75 = 3000 + 30000 + 3000 + 15000 = 51000 µUSD
    expect(costUsd(u, cost)).toBeCloseTo(0.051, 12);
  });

  it("one million input tokens at $2 cost exactly $2", () => {
    expect(costUsd(usage({ inputTokens: 1_000_000 }), { input: 2, output: 8 })).toBe(2);
  });

  it("a tier the row leaves out counts 0", () => {
    const u = usage({ inputTokens: 1_000_000, outputTokens: 1_000_000, cacheReadTokens: 1_000_000, cacheWriteTokens: 1_000_000 });
    expect(costUsd(u, { output: 8 })).toBe(8);
    expect(costUsd(u, { input: 1, cacheRead: 0.5 })).toBe(1.5);
  });

  it("a model with no prices has no cost (undefined, not 0)", () => {
    expect(costUsd(usage({ inputTokens: 500 }), undefined)).toBeUndefined();
    expect(costUsd(usage({ inputTokens: 500 }), {})).toBeUndefined();
  });

  it("a free model (prices of 0) costs 0, and no usage costs 0", () => {
    expect(costUsd(usage({ inputTokens: 500, outputTokens: 10 }), { input: 0, output: 0 })).toBe(0);
    expect(costUsd(usage(), { input: 2, output: 8 })).toBe(0);
  });

  it("cache reads are billed at the cache tier, not at the input price", () => {
    const cost = { input: 2, output: 8, cacheRead: 0.5 };
    expect(costUsd(usage({ cacheReadTokens: 1_000_000 }), cost)).toBe(0.5);
    expect(costUsd(usage({ inputTokens: 1_000_000 }), cost)).toBe(2);
  });

  it("is never negative: counts that are not counts bill as 0", () => {
    // The hostile usage { input: -5000000, output: -1 } once cost -10.000008.
    expect(costUsd(usage({ inputTokens: -5_000_000, outputTokens: -1 }), { input: 2, output: 8 })).toBe(0);
    expect(costUsd(usage({ inputTokens: Number.NaN, outputTokens: 1.5 }), { input: 2, output: 8 })).toBe(0);
  });

  it("is always finite: counts past the bound bill as the bound; a figure past the double range is no figure", () => {
    expect(costUsd(usage({ inputTokens: 1e308 }), { input: 2 })).toBe((MAX_TOKEN_COUNT * 2) / 1_000_000);
    expect(costUsd(usage({ inputTokens: Number.POSITIVE_INFINITY }), { input: 2 })).toBe(0);
    expect(costUsd(usage({ inputTokens: MAX_TOKEN_COUNT }), { input: 1e300 })).toBeUndefined();
  });
});
