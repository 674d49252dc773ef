import { describe, expect, it } from "vitest";
import { BudgetPause } from "../../../src/policy";

describe("BudgetPause.whenIdle", () => {
  it("settles at once when no decision is awaited, and only after the last of overlapping decisions ends", async () => {
    let now = 0;
    const pause = new BudgetPause({ now: () => now });
    await pause.whenIdle();
    const endA = pause.begin();
    const endB = pause.begin();
    let idle = false;
    const waiting = pause.whenIdle().then(() => (idle = true));
    now = 50;
    endA();
    endA(); // idempotent: one decision cannot end the other's pause
    await Promise.resolve();
    expect(idle).toBe(false);
    expect(pause.active).toBe(true);
    now = 80;
    endB();
    await waiting;
    expect(idle).toBe(true);
    expect(pause.pausedMs()).toBe(80);
  });
});
