import { describe, expect, it } from "vitest";
import { api, openTurn, sessionId } from "./helpers";

// A turn's counters (telemetry `counters`, `bridgeCalls`) are kept in the session object's parsed
// turn and saved after each call. Two calls of one turn at once must both count, also when the
// session touched many other turns meanwhile (the store keeps at most 64 turns parsed).

describe("a turn's counters under calls at once", () => {
  it("two direct calls of one turn both count, though 70 other turns were opened while the first ran", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "off" });
    let slowDone = false;
    const slow = api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/echo`, { value: 1, delayMs: 6000 }).finally(() => (slowDone = true));
    for (let i = 0; i < 70; i++) await openTurn(session, { agentId: "off" });
    const quick = await api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/echo`, { value: 2 });
    expect(quick.status).toBe(200);
    // The case at hand: the second call ran while the first still did.
    expect(slowDone).toBe(false);
    expect((await slow).status).toBe(200);
    const ended = await api("DELETE", `/v1/sessions/${session}/turns/${turnId}`);
    expect(ended.json.telemetry.counters.call).toBe(2);
  });
});
