import { describe, expect, it } from "vitest";
import { HostBridge, type BridgeHandlers, type Settlement, type ToolRequest } from "../../../src/bridge";
import { MAX_BATCH_REQUESTS } from "../../../src/limits";
import { manualClock } from "../../../src/runtime";

/** In-memory handlers: host tools resolve when the test says so; `ask` is a client tool. */
function fakeHandlers(overrides: Partial<BridgeHandlers> = {}) {
  const calls: ToolRequest[] = [];
  const clientCalls: ToolRequest[] = [];
  const resolvers = new Map<number, (s: Settlement) => void>();
  const handlers: Omit<BridgeHandlers, "output"> & { output: BridgeHandlers["output"] } = {
    call: (request) => {
      calls.push(request);
      return new Promise<Settlement>((resolve) => resolvers.set(request.id, resolve));
    },
    isClientTool: (tool) => tool === "ask",
    clientCalled: (request) => void clientCalls.push(request),
    toolName: (callable) => `tool:${callable}`,
    search: () => ({ ok: true, text: "[]" }),
    describe: () => ({ ok: true, text: "{}" }),
    output: () => undefined,
    ...overrides,
  };
  return { handlers, calls, clientCalls, resolve: (id: number, s: Settlement) => resolvers.get(id)!(s) };
}

const limits = { maxPendingToolCalls: 2, maxRequestBytes: 4096, maxClientInputBytes: 1024 };
const call = (tool: string, input: unknown = {}) => JSON.stringify({ tool, input });
const flush = () => new Promise((r) => setTimeout(r, 0));

describe("HostBridge", () => {
  it("records requests synchronously and starts them only at dispatch", () => {
    const f = fakeHandlers();
    const b = new HostBridge(f.handlers, limits, manualClock(0));
    b.request(1, "call", call("slow"));
    expect(f.calls).toHaveLength(0);
    b.dispatch();
    expect(f.calls).toEqual([{ id: 1, tool: "slow", input: {}, callId: expect.stringMatching(/^call_1_/) }]);
    expect(b.hostCallsInFlight).toBe(1);
  });

  it("a batch over maxPendingToolCalls is refused whole: no call in it starts", () => {
    const f = fakeHandlers();
    const b = new HostBridge(f.handlers, limits, manualClock(0));
    for (let id = 1; id <= 3; id++) b.request(id, "call", call("t"));
    b.dispatch();
    expect(f.calls).toHaveLength(0);
    const ready = b.takeReady();
    expect(ready).toHaveLength(3);
    expect(ready.every((r) => !r.settlement.ok && r.settlement.message.includes("maxPendingToolCalls is 2"))).toBe(true);
  });

  it("bounds a batch by count and bytes before the program awaits", () => {
    const b = new HostBridge(fakeHandlers().handlers, { ...limits, maxRequestBytes: 100 }, manualClock(0));
    expect(() => b.request(1, "call", "x".repeat(101))).toThrow(/too large/);
    const many = new HostBridge(fakeHandlers().handlers, { ...limits, maxRequestBytes: 1 << 30 }, manualClock(0));
    for (let id = 1; id <= MAX_BATCH_REQUESTS; id++) many.request(id, "timer", "{}");
    expect(() => many.request(MAX_BATCH_REQUESTS + 1, "timer", "{}")).toThrow(/too many bridge requests/);
  });

  it("unknown operations, bad ids and a closed bridge throw strings (never host objects)", () => {
    const b = new HostBridge(fakeHandlers().handlers, limits, manualClock(0));
    for (const bad of [() => b.request(0, "call", "{}"), () => b.request(1, "eval", "{}")]) {
      let thrown: unknown;
      try {
        bad();
      } catch (e) {
        thrown = e;
      }
      expect(typeof thrown).toBe("string");
    }
    b.close();
    expect(() => b.request(2, "call", "{}")).toThrow();
  });

  it("a client tool call is handed out, not executed, and its input is bounded", () => {
    const f = fakeHandlers();
    const b = new HostBridge(f.handlers, limits, manualClock(0));
    b.request(1, "call", call("ask", { q: 1 }));
    b.request(2, "call", call("ask", { q: "x".repeat(2000) }));
    b.dispatch();
    expect(f.calls).toHaveLength(0);
    expect(f.clientCalls).toEqual([{ id: 1, tool: "ask", input: { q: 1 } }]);
    expect(b.clientCallsInFlight).toBe(1);
    expect(b.pending()).toEqual([{ id: 1, kind: "client", tool: "tool:ask", input: { q: 1 }, callId: expect.stringMatching(/^call_1_/) }]);
    expect(b.takeReady()).toEqual([{ id: 2, settlement: { ok: false, message: expect.stringContaining("maxOutputBytes") } }]);
  });

  it("refuseClientCall rejects a client call before it is handed out", () => {
    const f = fakeHandlers({ refuseClientCall: () => "not replay-safe" });
    const b = new HostBridge(f.handlers, limits, manualClock(0));
    b.request(1, "call", call("ask"));
    b.dispatch();
    expect(f.clientCalls).toHaveLength(0);
    expect(b.clientCallsInFlight).toBe(0);
    expect(b.takeReady()).toEqual([{ id: 1, settlement: { ok: false, message: "not replay-safe" } }]);
  });

  it("while detached (parked), host results go to the store and are not queued; reattached, they queue again", async () => {
    const f = fakeHandlers();
    const b = new HostBridge(f.handlers, limits, manualClock(0));
    b.request(1, "call", call("a"));
    b.request(2, "call", call("b"));
    b.request(3, "timer", JSON.stringify({ delayMs: 50 }));
    b.dispatch();
    const stored: Array<[number, Settlement]> = [];
    b.detach((id, s) => stored.push([id, s]));
    expect(b.nextTimerDue()).toBeUndefined(); // timers stop while parked (persisted with their due time)
    f.resolve(1, { ok: true, text: "1" });
    await flush();
    expect(stored).toEqual([[1, { ok: true, text: "1" }]]);
    expect(b.takeReady()).toEqual([]);
    b.reattach();
    f.resolve(2, { ok: true, text: "2" });
    await flush();
    expect(stored).toHaveLength(1);
    expect(b.takeReady()).toEqual([{ id: 2, settlement: { ok: true, text: "2" } }]);
  });

  it("adopted timers keep absolute due times; overdue ones fire in due order", async () => {
    const clock = manualClock(1000);
    const b = new HostBridge(fakeHandlers().handlers, limits, clock);
    b.adopt({ id: 7, kind: "timer", dueAt: 990 });
    b.adopt({ id: 5, kind: "timer", dueAt: 995 });
    b.adopt({ id: 9, kind: "timer", dueAt: 60_000 });
    expect(b.nextTimerDue()).toBe(990);
    await flush();
    expect(b.takeReady().map((r) => r.id)).toEqual([7, 5]);
    expect(b.nextTimerDue()).toBe(60_000);
    b.close();
  });

  it("a delivered result for an adopted client call settles it once; timers ignore deliveries", () => {
    const b = new HostBridge(fakeHandlers().handlers, limits, manualClock(0));
    b.adopt({ id: 4, kind: "client", tool: "ask", input: {}, callId: "call_4_x" });
    b.adopt({ id: 4, kind: "client", tool: "ask", input: {}, callId: "call_4_x" }); // idempotent
    b.startTimer(6, 10_000);
    b.deliver(6, { ok: true, text: undefined });
    b.deliver(4, { ok: true, text: '"v"' });
    expect(b.takeReady()).toEqual([{ id: 4, settlement: { ok: true, text: '"v"' } }]);
    expect(b.clientCallsInFlight).toBe(0);
    expect(b.nextTimerDue()).toBe(10_000);
    b.close();
  });

  it("cancel aborts an in-flight host call; its late result is dropped", async () => {
    let aborted = false;
    const f = fakeHandlers({
      call: (_req, signal) =>
        new Promise<Settlement>((resolve) => {
          signal.addEventListener("abort", () => {
            aborted = true;
            resolve({ ok: true, text: "late" });
          });
        }),
    });
    const b = new HostBridge(f.handlers, limits, manualClock(0));
    b.request(1, "call", call("a"));
    b.dispatch();
    b.cancel(1);
    await flush();
    expect(aborted).toBe(true);
    expect(b.takeReady()).toEqual([]);
    expect(b.inflightCount).toBe(0);
  });

  it("beforeFirstCall runs once, before the first tool call of the run starts", () => {
    const order: string[] = [];
    const f = fakeHandlers({
      call: (req) => {
        order.push(`call ${req.id}`);
        return new Promise(() => undefined);
      },
    });
    const b = new HostBridge(f.handlers, limits, manualClock(0));
    b.beforeFirstCall = () => order.push("mark");
    b.request(1, "search", JSON.stringify({ query: "x" }));
    b.dispatch();
    expect(order).toEqual([]);
    b.request(2, "call", call("a"));
    b.dispatch();
    b.request(3, "call", call("b"));
    b.dispatch();
    expect(order).toEqual(["mark", "call 2", "call 3"]);
    b.close();
  });
});
