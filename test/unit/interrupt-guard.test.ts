import { describe, expect, it } from "vitest";
import { frozenClock, manualClock } from "../../src/runtime/clock";
import { INTERRUPT_TICKS_PER_TIMEOUT_MS, InterruptGuard, MAX_INTERRUPT_TICKS } from "../../src/runtime/interrupt-guard";

describe("interrupt guard", () => {
  it("a frozen clock still trips on the tick budget", () => {
    const g = new InterruptGuard(frozenClock(0), 1000, 100);
    let n = 0;
    while (!g.handler()) n++;
    expect(n).toBe(100 * INTERRUPT_TICKS_PER_TIMEOUT_MS);
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

  it("the tick budget is capped below the platform CPU limit for long timeouts", () => {
    const g = new InterruptGuard(frozenClock(0), Number.MAX_SAFE_INTEGER, 60_000);
    let n = 0;
    while (!g.handler()) n++;
    expect(n).toBe(MAX_INTERRUPT_TICKS);
  });
});

describe("bridge bytes are charged to the same budget", () => {
  it("megabytes through the host trip the budget; small calls cost almost nothing", async () => {
    const { BRIDGE_BYTES_PER_TICK } = await import("../../src/runtime/interrupt-guard");
    const g = new InterruptGuard(frozenClock(0), 1000, 100); // 300 ticks
    for (let i = 0; i < 1000; i++) g.charge(10);
    expect(g.reason).toBeNull();
    g.charge(300 * BRIDGE_BYTES_PER_TICK);
    expect(g.reason).toBe("cpu_budget");
    expect(g.handler()).toBe(true);
  });
});
