import { describe, expect, it } from "vitest";
import { runRounds } from "../../../../bench/harness/rounds.ts";
import {
  blocks,
  invert,
  quantile,
  roundDifferences,
  roundP90Ratios,
  roundRatios,
  roundRatiosIfDefined,
  summarize,
} from "../../../../bench/harness/stats.ts";
import { exactBasis, iqrBasis, judge } from "../../../../bench/harness/verdict.ts";

describe("bench statistics", () => {
  it("interpolates quantiles between order statistics", () => {
    expect(quantile([1, 2, 3, 4], 0.5)).toBe(2.5);
    expect(quantile([1, 2, 3, 4, 5], 0.25)).toBe(2);
    expect(quantile([10], 0.9)).toBe(10);
    const s = summarize([5, 1, 4, 2, 3]);
    expect([s.n, s.median, s.q1, s.q3, s.min, s.max, s.mean]).toEqual([5, 3, 2, 4, 1, 5, 3]);
  });

  it("takes ratios and differences round by round, from each round's medians", () => {
    const subject = [
      [1, 2, 3],
      [10, 20, 30],
      [2, 2, 2],
    ];
    const baseline = [
      [10, 10, 10],
      [100, 200, 300],
      [20, 20, 20],
    ];
    // Per-round medians 2/10, 20/200, 2/20: the same ratio although round 2 ran ten times slower.
    const r = roundRatios(subject, baseline);
    expect(r.median).toBeCloseTo(0.1);
    expect(r.min).toBeCloseTo(0.1);
    expect(r.max).toBeCloseTo(0.2);
    expect(roundDifferences(baseline, subject).median).toBe(18);
    expect(roundRatiosIfDefined(subject, [[0], [1], [1]])).toBeNull();
    expect(() => roundRatios(subject, baseline.slice(1))).toThrow();
  });

  it("takes the ratio of each round's p90s: the tail, not the median", () => {
    // Round 1: same medians, a longer tail in the subject; round 2: equal tails.
    const subject = [
      [1, 1, 1, 1, 1, 1, 1, 1, 1, 20],
      [2, 2, 2, 2, 2, 2, 2, 2, 2, 4],
    ];
    const baseline = [
      [1, 1, 1, 1, 1, 1, 1, 1, 1, 10],
      [2, 2, 2, 2, 2, 2, 2, 2, 2, 4],
    ];
    const r = roundP90Ratios(subject, baseline);
    expect(r.max).toBeCloseTo(2.9 / 1.9); // interpolated p90s: 1 + 0.1 × 19 over 1 + 0.1 × 9
    expect(r.min).toBeCloseTo(1);
    expect(roundRatios(subject, baseline).max).toBeCloseTo(1);
    expect(() => roundP90Ratios(subject, baseline.slice(1))).toThrow();
  });

  it("inverts a summary of ratios by swapping its ends", () => {
    const inv = invert(summarize([0.1, 0.2, 0.25]));
    expect(inv.median).toBeCloseTo(5);
    expect(inv.min).toBeCloseTo(4);
    expect(inv.max).toBeCloseTo(10);
    expect(inv.q1).toBeLessThanOrEqual(inv.median);
    expect(inv.q3).toBeGreaterThanOrEqual(inv.median);
  });

  it("cuts a sequence into contiguous blocks of near-equal size", () => {
    expect(blocks([1, 2, 3, 4, 5, 6, 7], 3)).toEqual([
      [1, 2],
      [3, 4],
      [5, 6, 7],
    ]);
    expect(blocks([1, 2], 5)).toEqual([[1], [2]]);
  });
});

describe("bench verdicts", () => {
  const spread = (values: number[]) => iqrBasis(summarize(values), "rounds");

  it("is met only when the whole IQR is on the good side of the line", () => {
    expect(judge(spread([11, 12, 13, 14, 15]), { kind: "atLeast", line: 10 })).toBe("met");
    expect(judge(spread([6, 7, 8, 9, 30]), { kind: "atLeast", line: 10 })).toBe("not met");
    expect(judge(spread([8, 9, 10.5, 11, 12]), { kind: "atLeast", line: 10 })).toBe("unclear");
    expect(judge(spread([1, 1.5, 1.8, 2.5, 9]), { kind: "atMost", line: 2 })).toBe("unclear");
    expect(judge(spread([0.8, 0.9, 1, 1.1, 9]), { kind: "atMost", line: 2 })).toBe("met");
  });

  it("does not let one outlying round flip a verdict", () => {
    expect(judge(spread([12, 12, 13, 13, 14, 2]), { kind: "atLeast", line: 10 })).toBe("met");
  });

  it("judges deterministic figures as they are, and NaN as unclear", () => {
    expect(judge(exactBasis(0.849), { kind: "atLeast", line: 0.95 })).toBe("not met");
    expect(judge(exactBasis(0.02), { kind: "atMost", line: 0.02 })).toBe("met");
    expect(judge(exactBasis(NaN), { kind: "atMost", line: 1 })).toBe("unclear");
  });
});

describe("bench rounds", () => {
  it("takes every step's block in every round, reversing the order each round", async () => {
    const order: string[] = [];
    const step = (name: "a" | "b") => ({ name, perRound: 2, warmup: 1, run: async () => (order.push(name), 1) });
    const out = await runRounds(3, [step("a"), step("b")]);
    expect(order.join("")).toBe("ab" + "aabb" + "bbaa" + "aabb");
    expect(out.a).toEqual([
      [1, 1],
      [1, 1],
      [1, 1],
    ]);
  });

  it("takes turns in blocks, each led by its step's samples not kept, with a hook before each round", async () => {
    const order: string[] = [];
    let n = 0;
    const step = (name: "a" | "b", perRound: number, lead: number) => ({
      name,
      perRound,
      warmup: 0,
      lead,
      run: async () => (order.push(name), ++n),
    });
    const out = await runRounds(2, [step("a", 5, 1), step("b", 2, 0)], undefined, {
      block: 2,
      beforeRound: async (round) => void order.push(`|${round}`),
    });
    // a: lead + 2, b: 2, a: lead + 2, a: lead + 1; then reversed.
    expect(order.join("")).toBe("|0" + "aaabbaaaaa" + "|1" + "bbaaaaaaaa");
    expect(out.a[0]).toEqual([2, 3, 7, 8, 10]);
    expect(out.b[0]).toEqual([4, 5]);
    expect(out.a[1]).toHaveLength(5);
  });
});
