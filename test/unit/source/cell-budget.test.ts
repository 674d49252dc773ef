import { describe, expect, it } from "vitest";
import { frozenClock, manualClock, type Clock } from "../../../src/runtime";
import { CellBudget, COSTS, estimateChecksMs, estimateGuestCompileMs, estimateTranspileMs } from "../../../src/source";
import { prepareSource } from "../../../src/source";
import { isTypeScriptCompilerLoaded, isTypeScriptStripperLoaded } from "../../../src/source";

const KiB = 1024;

// Must stay first: module state (the compiler) is shared by the tests of this file.
// `declare` sends these cells to the compiler (plain erasure takes the fast path: typescript-strip.test.ts).
describe("the TypeScript compiler start is charged to the cell that causes it", () => {
  it("is refused up front, without loading the compiler, when it cannot fit", async () => {
    expect(isTypeScriptCompilerLoaded()).toBe(false);
    const r = await prepareSource("declare const seed: number;\nreturn 1 as number", "typescript", new CellBudget(frozenClock(), 100));
    expect(r).toMatchObject({ ok: false, code: "timeout" });
    if (r.ok) return;
    expect(r.message).toContain("The TypeScript compiler start exceeded timeoutMs (100)");
    expect(r.message).toContain("write this cell in JavaScript");
    expect(isTypeScriptCompilerLoaded()).toBe(false);
  });

  it("is charged its estimate on a frozen clock, leaving the rest for the VM", async () => {
    const budget = new CellBudget(frozenClock(0), 10_000);
    const r = await prepareSource("declare const seed: number;\nreturn 1 as number", "typescript", budget);
    expect(r).toEqual({ ok: true, code: "    return 1;" });
    expect(isTypeScriptCompilerLoaded()).toBe(true);
    const charged = 10_000 - budget.remainingMs();
    expect(charged).toBeGreaterThanOrEqual(COSTS.compilerStartMs);
    expect(charged).toBeLessThan(COSTS.compilerStartMs + 20);
    expect(budget.guestDeadline()).toBe(budget.deadline - charged);
  }, 120_000); // the test runner ships ~9 MB of compiler on the first load

  it("a warm compiler is not charged again", async () => {
    const budget = new CellBudget(frozenClock(0), 10_000);
    expect(await prepareSource("declare const seed: number;\nreturn 2 as number", "typescript", budget)).toEqual({ ok: true, code: "    return 2;" });
    expect(10_000 - budget.remainingMs()).toBeLessThan(COSTS.compilerStartMs);
  });
});

describe("CellBudget", () => {
  it("takes its deadline once, from the injected clock", () => {
    const clock = manualClock(1_000);
    const budget = new CellBudget(clock, 400);
    clock.advance(150);
    expect(budget.deadline).toBe(1_400);
    expect(budget.remainingMs()).toBe(250);
    expect(budget.guestDeadline()).toBe(1_400);
    // Time the clock saw is off the deadline only; the tick budget loses only unseen work.
    expect(budget.guestBudgetMs()).toBe(400);
  });

  it("queued work shares the deadline: counted from admission, the tick budget is what the queue left", () => {
    const clock = manualClock(1_000);
    const admittedAt = clock.now();
    clock.advance(300); // waiting behind another cell of the session
    const budget = new CellBudget(clock, 400, admittedAt);
    expect(budget.queuedMs).toBe(300);
    expect(budget.deadline).toBe(1_400);
    expect(budget.remainingMs()).toBe(100);
    expect(budget.guestBudgetMs()).toBe(100);
    expect(budget.expiredInQueue()).toBe(false);
    // Refused up front: a phase that needs more than the queue left.
    expect(budget.admit("source checks", 150, "checking x")).toContain("and 100 ms were left, so the cell was not run");
  });

  it("a deadline that passed in the queue is expired before anything runs; one taken at start never is", () => {
    const clock = manualClock(0);
    const admittedAt = clock.now();
    clock.advance(400);
    expect(new CellBudget(clock, 400, admittedAt).expiredInQueue()).toBe(true);
    expect(new CellBudget(clock, 400).expiredInQueue()).toBe(false);
    // An admission time ahead of the clock (a clock swapped meanwhile) counts as now.
    expect(new CellBudget(clock, 400, clock.now() + 5_000).deadline).toBe(800);
  });

  it("refuses a phase up front when its estimate does not fit, naming it", () => {
    const budget = new CellBudget(frozenClock(0), 100);
    expect(budget.admit("source checks", 99, "checking x")).toBeUndefined();
    const refused = budget.admit("TypeScript transform", 100, "transpiling 930 KiB of TypeScript");
    expect(refused).toContain(
      "The TypeScript transform exceeded timeoutMs (100): transpiling 930 KiB of TypeScript needs about 100 ms and 100 ms were left",
    );
  });

  it("charges the larger of the estimate and what the clock saw", async () => {
    // Frozen clock (production during synchronous work): the estimate.
    const frozen = new CellBudget(frozenClock(0), 1_000);
    await frozen.run("source checks", 30, "x", () => undefined);
    expect(frozen.remainingMs()).toBe(970);
    expect(frozen.guestDeadline()).toBe(970);
    expect(frozen.guestBudgetMs()).toBe(970);
    // A clock that saw more than estimated: what it saw (and nothing unseen).
    const clock = manualClock(0);
    const moving = new CellBudget(clock, 1_000);
    await moving.run("source checks", 30, "x", () => clock.advance(200));
    expect(moving.remainingMs()).toBe(800);
    expect(moving.guestDeadline()).toBe(1_000);
    expect(moving.guestBudgetMs()).toBe(1_000);
    // Less than estimated: the estimate (the difference is taken off the guest's deadline).
    const slow = new CellBudget(clock, 1_000);
    await slow.run("source checks", 30, "x", () => clock.advance(10));
    expect(slow.remainingMs()).toBe(970);
    expect(slow.guestDeadline()).toBe(clock.now() - 10 + 1_000 - 20);
  });

  it("a phase that overruns the clock fails the cell, naming the phase", async () => {
    const clock = manualClock(0);
    const budget = new CellBudget(clock, 100);
    const r = await budget.run("TypeScript transform", 10, "transpiling 5 KiB of TypeScript", () => clock.advance(150));
    expect(r).toMatchObject({ ok: false });
    if (!r.ok) expect(r.message).toContain("The TypeScript transform exceeded timeoutMs (100): transpiling 5 KiB of TypeScript took about 150 ms");
  });

  it("refuses a whole plan that cannot fit, naming its most expensive phase", () => {
    const budget = new CellBudget(frozenClock(0), 100);
    const message = budget.admitPlan([
      { phase: "source checks", estimateMs: 40, detail: "checking" },
      { phase: "TypeScript transform", estimateMs: 60, detail: "transpiling 10 KiB of TypeScript" },
      { phase: "guest compile", estimateMs: 5, detail: "compiling" },
    ]);
    expect(message).toContain(
      "The TypeScript transform exceeded timeoutMs (100): transpiling 10 KiB of TypeScript needs about 60 ms (about 105 ms for the whole cell)",
    );
    expect(budget.admitPlan([{ phase: "source checks", estimateMs: 40, detail: "checking" }])).toBeUndefined();
  });

  it("estimates grow linearly with the source length", () => {
    expect(estimateChecksMs(1000 * KiB)).toBeCloseTo(COSTS.checksBaseMs + 1000 * COSTS.checksMsPerKiB);
    expect(estimateTranspileMs(2 * KiB) - estimateTranspileMs(KiB)).toBeCloseTo(COSTS.transpileMsPerKiB);
    expect(estimateGuestCompileMs(10 * KiB)).toBeCloseTo(10 * COSTS.guestCompileMsPerKiB);
  });
});

describe("prepareSource: every phase within the one budget", () => {
  it("refuses a megabyte of `;` under timeoutMs 100 before checking it", async () => {
    let reads = 0;
    const clock: Clock = { now: () => (reads++, 0) };
    const r = await prepareSource(";".repeat(1000 * KiB), "javascript", new CellBudget(clock, 100));
    expect(r).toMatchObject({ ok: false, code: "timeout" });
    if (!r.ok) expect(r.message).toMatch(/^The source checks exceeded timeoutMs \(100\): checking 1000 KiB of JavaScript needs about \d+ ms/);
    // Refused up front: the clock was read for the deadline and the one admission, nothing ran.
    expect(reads).toBeLessThanOrEqual(3);
  });

  it("refuses a 930 KB type-only TypeScript cell under timeoutMs 100 naming the transform", async () => {
    const r = await prepareSource("type T = { a: string; b: number };\n".repeat(27_000), "typescript", new CellBudget(frozenClock(), 100));
    expect(r).toMatchObject({ ok: false, code: "timeout" });
    if (!r.ok) expect(r.message).toContain("The TypeScript transform exceeded timeoutMs (100)");
  });

  it("a cell that fits runs every phase and leaves the VM what remains", async () => {
    const code = "const a: number = 1;\n".repeat(500); // ~10 KiB
    const budget = new CellBudget(frozenClock(0), 10_000);
    // The fast path: its start is charged once per isolate, to the first cell that takes it.
    const stripperStart = isTypeScriptStripperLoaded() ? 0 : COSTS.stripperStartMs;
    const r = await prepareSource(code, "typescript", budget);
    expect(r.ok).toBe(true);
    const expected = stripperStart + estimateChecksMs(code.length) + estimateTranspileMs(code.length) + estimateGuestCompileMs(code.length);
    expect(10_000 - budget.remainingMs()).toBeCloseTo(expected, 5);
  });

  it("the guest compile is charged even for JavaScript, by size", async () => {
    const code = `// ${"x".repeat(100 * KiB)}\nreturn 1`;
    const budget = new CellBudget(frozenClock(0), 10_000);
    expect(await prepareSource(code, "javascript", budget)).toEqual({ ok: true, code });
    expect(10_000 - budget.remainingMs()).toBeCloseTo(estimateChecksMs(code.length) + estimateGuestCompileMs(code.length), 5);
  });

  it("check failures stay invalid_input, and a check that throws is a failed result, not an exception", async () => {
    const shell = await prepareSource("ls;".repeat(5000), "javascript", new CellBudget(frozenClock(), 10_000));
    expect(shell).toMatchObject({ ok: false, code: "invalid_input" });
    let calls = 0;
    const broken: Clock = {
      now: () => {
        if (++calls > 2) throw new RangeError("Maximum call stack size exceeded");
        return 0;
      },
    };
    const r = await prepareSource("return 1", "javascript", new CellBudget(broken, 10_000));
    expect(r).toMatchObject({ ok: false, code: "invalid_input" });
    if (!r.ok) expect(r.message).toContain("could not check this cell's source (RangeError: Maximum call stack size exceeded)");
  });
});
