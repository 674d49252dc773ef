import { describe, expect, it } from "vitest";
import { frozenClock, manualClock } from "../../../src/runtime";
import { InterruptGuard, TICKS_PER_TIMEOUT_MS } from "../../../src/runtime";
import { WORK_UNITS_PER_TICK } from "../../../src/runtime";

describe("interrupt guard", () => {
  it("a frozen clock still trips on the tick budget", () => {
    const g = new InterruptGuard(frozenClock(0), 1000, 100);
    let n = 0;
    while (!g.handler()) n++;
    expect(n).toBe(100 * TICKS_PER_TIMEOUT_MS);
    expect(g.reason).toBe("cpu_budget");
  });

  it("the clock deadline trips first when the clock moves", () => {
    const clock = manualClock(0);
    const g = new InterruptGuard(clock, 50, 10_000);
    expect(g.handler()).toBe(false);
    clock.advance(60);
    expect(g.handler()).toBe(true);
    expect(g.reason).toBe("deadline");
  });

  it("timeoutMs governs: the budget grows with it, with no hidden ceiling", () => {
    const count = (timeoutMs: number) => {
      const g = new InterruptGuard(frozenClock(0), Number.MAX_SAFE_INTEGER, timeoutMs);
      let n = 0;
      while (!g.handler()) n++;
      return n;
    };
    expect(count(10_000)).toBe(10_000 * TICKS_PER_TIMEOUT_MS);
    expect(count(60_000)).toBe(6 * count(10_000));
  });
});

describe("native work announced by the work meter", () => {
  it("is refused once it cannot be paid for, and never refunds", () => {
    const g = new InterruptGuard(frozenClock(0), 1000, 100); // 300 ticks
    g.chargeWork(-1e12);
    g.chargeWork(Number.NaN);
    g.chargeWork(299 * WORK_UNITS_PER_TICK);
    expect(g.reason).toBeNull();
    g.chargeWork(2 * WORK_UNITS_PER_TICK);
    expect(g.reason).toBe("cpu_budget");
  });

  it("an unaffordable single call (Infinity units) trips at once", () => {
    const g = new InterruptGuard(frozenClock(0), 1000, 100);
    g.chargeWork(Number.POSITIVE_INFINITY);
    expect(g.reason).toBe("cpu_budget");
  });
});

describe("bridge bytes are charged to the same budget", () => {
  it("megabytes through the host trip the budget; small calls cost almost nothing", async () => {
    const { BRIDGE_BYTES_PER_TICK } = await import("../../../src/runtime/interrupt-guard");
    const g = new InterruptGuard(frozenClock(0), 1000, 100); // 300 ticks
    for (let i = 0; i < 1000; i++) g.charge(10);
    expect(g.reason).toBeNull();
    g.charge(300 * BRIDGE_BYTES_PER_TICK);
    expect(g.reason).toBe("cpu_budget");
    expect(g.handler()).toBe(true);
  });
});
