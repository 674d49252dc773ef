import { describe, expect, it } from "vitest";
import { MAX_TRANSCRIPT_BYTES } from "../../../src/limits";
import type { ModelMessage } from "../../../src/providers";
import { QuotaExceeded } from "../../../src/quota";
import type { TurnSpec } from "../../../src/turns";
import { inMemorySessionPorts } from "../../support/in-memory-session";

/** A stored turn: only what the stores read (tenant, id, creation time, an empty catalog). */
const spec = (turnId: string): TurnSpec =>
  ({ turnId, tenantId: "t", sessionId: "s", createdAt: 0, codeModeEngaged: true, catalog: { entries: [], direct: [] } }) as unknown as TurnSpec;
const counters = { search: 0, describe: 0, call: 0 };
const message = (text: string): ModelMessage => ({ role: "user", content: text }) as unknown as ModelMessage;

/** The adapters are only worth testing with if they keep the SQLite stores' behaviour the service relies on. */
describe("in-memory session adapters", () => {
  it("a transaction that throws leaves none of its writes, nested ones included; an async callback is refused", () => {
    const p = inMemorySessionPorts();
    p.sessionStorage.ensure();
    expect(() =>
      p.db.transaction(() => {
        p.turns.insert(spec("a"), counters);
        p.db.transaction(() => p.turns.recordDelivered("a", "call_1"));
        throw new Error("rolled back");
      }),
    ).toThrow("rolled back");
    expect(p.turns.ids()).toEqual([]);
    expect(p.turns.wasDelivered("a", "call_1")).toBe(false);
    expect(p.quota.usage()).toEqual({ turns: 0, bytes: 0 });
    expect(() => p.db.transaction(async () => p.turns.insert(spec("b"), counters))).toThrow("synchronous");
    expect(p.turns.ids()).toEqual([]);
  });

  it("a wiped session stores nothing until a turn creates it again", async () => {
    const p = inMemorySessionPorts();
    p.sessionStorage.ensure();
    p.turns.insert(spec("a"), counters);
    await p.kv.put("k", { v: 1 });
    await p.sessionStorage.wipe();
    expect(p.sessionStorage.ready).toBe(false);
    expect(p.turns.get("t", "a")).toBeUndefined();
    expect(p.kv.values.size).toBe(0);
    await expect(p.kv.put("k", 1)).rejects.toBeInstanceOf(QuotaExceeded);
  });

  it("the transcript keeps writes for live turns only, and reports full past MAX_TRANSCRIPT_BYTES while keeping the message", () => {
    const p = inMemorySessionPorts();
    p.sessionStorage.ensure();
    expect(p.transcript.append("ghost", message("x"))).toBe(false);
    p.transcript.event("ghost", 1, "outer_start", { callId: "c" });
    expect(p.transcript.events("ghost")).toEqual([]);
    p.turns.insert(spec("a"), counters);
    expect(p.transcript.append("a", message("small"))).toBe(true);
    expect(p.transcript.append("a", message("x".repeat(MAX_TRANSCRIPT_BYTES)))).toBe(false);
    expect(p.transcript.messages("a")).toHaveLength(2);
  });

  it("with a byte limit, a transcript message that does not fit is refused whole, and a trajectory event makes room by dropping the oldest", () => {
    const p = inMemorySessionPorts();
    p.sessionStorage.ensure();
    p.turns.insert(spec("a"), counters);
    p.transcript.event("a", 1, "outer_start", { callId: "c1", pad: "x".repeat(200) });
    p.transcript.event("a", 2, "outer_start", { callId: "c2", pad: "x".repeat(200) });
    p.quota.maxStoredBytes = p.quota.usage().bytes + 100;
    expect(() => p.transcript.append("a", message("y".repeat(500)))).toThrow(QuotaExceeded);
    expect(p.transcript.messages("a")).toEqual([]);
    p.transcript.event("a", 3, "outer_start", { callId: "c3", pad: "x".repeat(200) });
    expect(p.transcript.events("a").map((e) => e.body.callId)).toEqual(["c2", "c3"]);
    expect(p.transcript.droppedEvents("a")).toBe(1);
    expect(p.quota.usage().bytes).toBeLessThanOrEqual(p.quota.maxStoredBytes);
  });
});
