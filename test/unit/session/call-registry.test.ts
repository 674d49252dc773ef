import { describe, expect, it } from "vitest";
import { CallRegistry } from "../../../src/session/call-registry";
import { systemClock } from "../../../src/runtime";

describe("CallRegistry: cancelling a request", () => {
  it("reaches the /chat loop after an outer call of the same request ended (nested calls share the request id)", () => {
    const calls = new CallRegistry(() => systemClock);
    const loop = calls.track("turn-1", "req-1");
    const cell = calls.track("turn-1", "req-1", loop.signal);
    cell.untrack();
    calls.cancel("req-1");
    expect(loop.signal.aborted).toBe(true);
  });

  it("reaches every call of the request that is still running", () => {
    const calls = new CallRegistry(() => systemClock);
    const a = calls.track("turn-1", "req-1");
    const b = calls.track("turn-2", "req-1");
    const other = calls.track("turn-1", "req-2");
    calls.cancel("req-1");
    expect([a.signal.aborted, b.signal.aborted, other.signal.aborted]).toEqual([true, true, false]);
  });

  it("a call that arrives after its request was cancelled starts aborted; other requests do not", () => {
    const calls = new CallRegistry(() => systemClock);
    calls.cancel("req-early");
    expect(calls.track("turn-1", "req-early").signal.aborted).toBe(true);
    expect(calls.track("turn-1", "req-late").signal.aborted).toBe(false);
  });

  it("untracking the last call of a turn leaves the registry idle", () => {
    const calls = new CallRegistry(() => systemClock);
    const a = calls.track("turn-1", "req-1");
    const b = calls.track("turn-1", "req-1");
    a.untrack();
    expect(calls.isActive("turn-1")).toBe(true);
    b.untrack();
    b.untrack();
    expect(calls.idle).toBe(true);
  });
});
