import { describe, expect, it } from "vitest";
import { api, sessionId, sessionProbe } from "./helpers";
import { countedChatTurn, trajectory } from "./chat-helpers";

// How many SQLite statements a /chat step costs, counted through the storage probe (deterministic,
// unlike time): opening a turn and answering, and each model round trip with an exec call. Was:
// every write re-checked its turn's row and re-summed the session's usage (4 sums), and every
// trajectory event recounted the turn's events: 67 statements for a turn answered at once, 57.5
// for each exec round trip.

const USAGE_SUM = /SUM\(stored_bytes\) AS b FROM turns|FROM run_results|key = 'tool_bytes'/;

describe("a /chat turn's storage work per step", () => {
  it("sums the session's usage once, not per write, and counts a turn's events once, not per event", async () => {
    const session = sessionId();
    await countedChatTurn(session, 0); // the first turn creates the schema and sums the (empty) session once
    const three = await countedChatTurn(session, 3);
    expect(three.log.filter((q) => USAGE_SUM.test(q))).toEqual([]);
    // A turn it just opened has no events: not even counted once (chat-statements-per-step.test.ts pins the rest).
    expect(three.log.filter((q) => q.startsWith("SELECT COUNT(*) AS n FROM trajectory"))).toEqual([]);
    expect(three.log.filter((q) => q.startsWith("SELECT 1 AS x FROM turns WHERE turn_id"))).toEqual([]);
    // What was written is all there: three exec calls and four model calls on record.
    const t = (await trajectory(session, three.turnId)).json;
    expect(t.calls.map((c: any) => [c.tool, c.status])).toEqual([
      ["exec", "completed"],
      ["exec", "completed"],
      ["exec", "completed"],
    ]);
    expect(await sessionProbe(session).storageUsage()).toMatchObject({ turns: 2 });
  });

  it("opens a turn and answers in at most 24 statements, and runs each exec round trip in at most 18", async () => {
    const session = sessionId();
    await countedChatTurn(session, 0);
    const plain = await countedChatTurn(session, 0);
    const one = await countedChatTurn(session, 1);
    const three = await countedChatTurn(session, 3);
    expect(plain.statements).toBeLessThanOrEqual(24);
    expect((three.statements - one.statements) / 2).toBeLessThanOrEqual(18);
  });

  it("the usage the quota keeps in memory is what SQL sums, after turns are written and after one is deleted", async () => {
    const session = sessionId();
    const first = await countedChatTurn(session, 2);
    await countedChatTurn(session, 1);
    const probe = sessionProbe(session);
    const summed = async () => {
      const [t] = await probe.storageRows<{ n: number; b: number }>("SELECT COUNT(*) AS n, SUM(stored_bytes) AS b FROM turns");
      const [k] = await probe.storageRows<{ value: string }>("SELECT value FROM session_meta WHERE key = 'tool_bytes'");
      return { turns: t!.n, bytes: t!.b + Number(k!.value) };
    };
    expect(await probe.storageUsage()).toMatchObject(await summed());
    expect((await api("DELETE", `/v1/sessions/${session}/turns/${first.turnId}`)).status).toBeLessThan(300);
    expect(await probe.storageUsage()).toMatchObject(await summed());
    expect((await probe.storageUsage()).turns).toBe(1);
  });
});
