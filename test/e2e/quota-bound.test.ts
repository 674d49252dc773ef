import { describe, expect, it } from "vitest";
import { api, exec, footprint, openTurn, sessionId, sessionProbe } from "./helpers";
import { setLimits } from "./session-controls";
import { chat, requests, script } from "./chat-helpers";

// Storage is bounded by the session's quota, not only charged to it: every write that grows a
// session is checked against gateway.sessions.maxStoredBytes before it is made (HTTP → session
// object → VM, the fake provider for /chat).

const MODEL = "fakeoai/gpt-fake";
const MAX = 65_536;

const usage = (session: string): Promise<{ turns: number; bytes: number }> => sessionProbe(session).storageUsage();

type Stored = { role: string; toolCalls?: Array<{ id: string }>; toolCallId?: string; content: unknown };
const transcript = async (session: string, turnId: string): Promise<Stored[]> =>
  (await sessionProbe(session).storageRows<{ message: string }>("SELECT message FROM transcript WHERE turn_id = ? ORDER BY seq", turnId)).map(
    (row) => JSON.parse(row.message) as Stored,
  );

/** Every assistant tool call has its result before the next assistant message, and the last round is whole. */
function expectWholeRounds(messages: Stored[]): void {
  let open = new Set<string>();
  for (const m of messages) {
    if (m.role === "assistant") {
      expect([...open]).toEqual([]);
      open = new Set((m.toolCalls ?? []).map((c) => c.id));
    } else if (m.role === "tool") {
      expect(open.has(m.toolCallId!)).toBe(true);
      open.delete(m.toolCallId!);
    }
  }
  expect([...open]).toEqual([]);
}

/** A new session limited to MAX bytes (the limit holds until the test ends: test/e2e/session-controls.ts). */
async function smallSession(): Promise<string> {
  const session = sessionId();
  setLimits({ maxStoredBytes: MAX });
  return session;
}

describe("a /chat turn whose transcript would exceed the session's quota", () => {
  it("ends with 409 quota_exceeded (stopReason quota_exceeded), its transcript in whole rounds, the session within the bound", async () => {
    const session = await smallSession();
    // Each round stores an exec call and its ~6 KB result: ten rounds would need ~60 KB plus the trajectory.
    const steps = Array.from({ length: 20 }, (_, i) => ({
      toolCalls: [{ id: `e${i}`, name: "exec", input: { code: `return '${i}'.repeat(6000)` } }],
    }));
    const s = await script(steps);
    const r = await chat(session, { model: MODEL, messages: [{ role: "user", content: `${s.marker} go` }], maxAssistantTurns: 20 });
    expect(r.status).toBe(409);
    expect(r.json.error).toMatchObject({
      code: "quota_exceeded",
      message: expect.stringMatching(/session storage is full.*gateway\.sessions\.maxStoredBytes/),
    });
    expect(r.json.meta.stopReason).toBe("quota_exceeded");
    const turnId: string = r.json.turnId;
    // Stopped where it could not store: no model call after the round that hit the bound.
    const made = (await requests(s.id)).length;
    expect(made).toBeGreaterThan(2);
    expect(made).toBeLessThan(20);

    const messages = await transcript(session, turnId);
    expect(messages[0]).toMatchObject({ role: "user" });
    expectWholeRounds(messages);
    expect((await usage(session)).bytes).toBeLessThanOrEqual(MAX);

    const t = await api("GET", `/v1/sessions/${session}/turns/${turnId}/trajectory`);
    expect(t.json).toMatchObject({ status: "stopped", meta: { stopReason: "quota_exceeded" } });
    expect(t.json.limitsHit.at(-1)).toMatchObject({ limit: "quota_exceeded" });
  });

  it("a round whose result cannot be stored keeps a short placeholder for it and runs none of the round's later calls", async () => {
    const session = await smallSession();
    // One round of eight cells, each writing a note then returning ~12 KB: the bound falls inside the round.
    const calls = Array.from({ length: 8 }, (_, i) => ({
      id: `r${i}`,
      name: "exec",
      input: { code: `await notes_write({ key: 'n${i}', text: 'x' }); return 'v'.repeat(12000)` },
    }));
    const s = await script([{ toolCalls: calls }, { text: "never asked" }]);
    const r = await chat(session, { model: MODEL, messages: [{ role: "user", content: `${s.marker} go` }], maxAssistantTurns: 5 });
    expect(r.status).toBe(409);
    expect(r.json.error.code).toBe("quota_exceeded");
    expect(await requests(s.id)).toHaveLength(1);
    const messages = await transcript(session, r.json.turnId);
    expectWholeRounds(messages);
    const results = messages.filter((m) => m.role === "tool").map((m) => String(m.content));
    expect(results).toHaveLength(8);
    const placeholder = results.findIndex((c) => c.includes("was not stored: the session's storage is full"));
    expect(placeholder).toBeGreaterThan(0);
    // Calls after the refused result did not run: their notes were never written.
    for (const later of results.slice(placeholder + 1)) expect(later).toMatch(/not run: the session's storage is full|was not stored/);
    const notes = (await sessionProbe(session).storageKeys("tool:")).length;
    expect(notes).toBe(placeholder + 1);
    expect((await usage(session)).bytes).toBeLessThanOrEqual(MAX);
  });

  it("deleting a turn frees room: a new /chat turn is refused while the session is full, and completes after the DELETE", async () => {
    const session = await smallSession();
    const steps = Array.from({ length: 20 }, (_, i) => ({ toolCalls: [{ id: `f${i}`, name: "exec", input: { code: `return 'f'.repeat(6000)` } }] }));
    const s = await script(steps);
    const full = await chat(session, { model: MODEL, messages: [{ role: "user", content: `${s.marker} go` }], maxAssistantTurns: 20 });
    expect(full.json.error.code).toBe("quota_exceeded");

    const next = await script([{ text: "hello again" }]);
    const refused = await chat(session, { model: MODEL, messages: [{ role: "user", content: `${next.marker} ${"w".repeat(6000)}` }] });
    expect(refused.status).toBe(409);
    expect(refused.json.error).toMatchObject({ code: "quota_exceeded", message: expect.stringMatching(/maxStoredBytes/) });
    expect(await requests(next.id)).toHaveLength(0);

    expect((await api("DELETE", `/v1/sessions/${session}/turns/${full.json.turnId}`)).status).toBe(200);
    const again = await chat(session, { model: MODEL, messages: [{ role: "user", content: `${next.marker} ${"w".repeat(6000)}` }] });
    expect(again.status).toBe(200);
    expect(again.json).toMatchObject({ status: "completed", message: { content: "hello again" } });
    expect((await usage(session)).bytes).toBeLessThanOrEqual(MAX);
  });
});

describe("a turn's trajectory under the session's quota", () => {
  it("an exec loop of many nested calls keeps the most recent ones and counts what it dropped; the session stays within the bound", async () => {
    const session = await smallSession();
    const turnId = await openTurn(session);
    const r = await exec(session, turnId, "let n = 0; for (let i = 0; i < 400; i++) n += await echo({ value: i }); return n;");
    expect(r).toMatchObject({ status: "completed", value: (399 * 400) / 2 });
    expect((await usage(session)).bytes).toBeLessThanOrEqual(MAX);

    const t = await api("GET", `/v1/sessions/${session}/turns/${turnId}/trajectory`);
    expect(t.status).toBe(200);
    const [call] = t.json.calls;
    // The outer call stays, with its end; its nested calls are a tail: the newest, in order, up to the last.
    expect(call).toMatchObject({ tool: "exec", status: "completed" });
    const nested: Array<{ input: string }> = call.nested;
    expect(t.json.droppedEvents).toBeGreaterThan(0);
    expect(nested.length + t.json.droppedEvents).toBe(400);
    expect(nested.at(-1)!.input).toContain("399");
    expect(nested[0]!.input).toContain(String(t.json.droppedEvents));
  });

  it("a session full of tool data still runs cells: their trajectory events are counted as dropped, nothing stored is lost", async () => {
    const session = await smallSession();
    const turnId = await openTurn(session);
    // Fill the session with notes until the store refuses.
    const fill = await exec(
      session,
      turnId,
      "let n = 0; try { for (;;) { await notes_write({ key: 'k' + n, text: 'x'.repeat(4000) }); n++; } } catch (e) { return { n, error: e.message }; }",
    );
    expect(fill.value.error).toMatch(/session storage is full.*gateway\.sessions\.maxStoredBytes/);
    const before = (await sessionProbe(session).storageKeys("tool:")).length;
    expect(before).toBe(fill.value.n);
    expect((await usage(session)).bytes).toBeLessThanOrEqual(MAX);

    expect(await exec(session, turnId, "return (await notes_read({ prefix: 'k' })).length")).toMatchObject({ status: "completed", value: before });
    expect((await usage(session)).bytes).toBeLessThanOrEqual(MAX);
    const t = await api("GET", `/v1/sessions/${session}/turns/${turnId}/trajectory`);
    expect(t.json.droppedEvents).toBeGreaterThan(0);
  });
});

describe("parked runs count against the session's quota", () => {
  it("a cell that cannot be parked in a full session fails with snapshot_limit_exceeded naming maxStoredBytes; after a DELETE of a turn it parks", async () => {
    const session = await smallSession();
    const parker = await openTurn(session);
    // A turn whose catalog takes ~25 KB, then notes until the store refuses: the session is full.
    const filler = await openTurn(session, {
      clientTools: Array.from({ length: 25 }, (_, i) => ({ name: `client_${i}`, description: "d".repeat(1000) })),
    });
    const fill = await exec(
      session,
      parker,
      "try { for (let n = 0; ; n++) await notes_write({ key: 'p' + n, text: 'x'.repeat(1000) }); } catch (e) { return e.message; }",
    );
    expect(fill.value).toMatch(/session storage is full/);

    const refused = await exec(session, parker, "await yield_control(); return 1");
    expect(refused).toMatchObject({
      status: "failed",
      code: "snapshot_limit_exceeded",
      error: expect.stringMatching(/gateway\.sessions\.maxStoredBytes.*the run was dropped/),
    });
    expect((await footprint(session)).runs).toBe(0);
    expect((await usage(session)).bytes).toBeLessThanOrEqual(MAX);

    expect((await api("DELETE", `/v1/sessions/${session}/turns/${filler}`)).status).toBe(200);
    const parked = await exec(session, parker, "await yield_control(); return 1");
    expect(parked.status).toBe("waiting");
    expect((await usage(session)).bytes).toBeLessThanOrEqual(MAX);
    const resumed = await api("POST", `/v1/sessions/${session}/turns/${parker}/tools/wait`, { runId: parked.runId });
    expect(resumed.json).toMatchObject({ status: "completed", value: 1 });
  });
});

describe("client results count against the session's quota", () => {
  it("a result the full session cannot hold is 409 quota_exceeded and stays deliverable: after a DELETE of a turn it is accepted and the run completes", async () => {
    const session = await smallSession();
    const turnId = await openTurn(session, { clientTools: [{ name: "ask_user", description: "Ask the user" }] });
    const parked = await exec(session, turnId, "return (await ask_user({ q: 'name?' })).length");
    expect(parked.status).toBe("waiting");
    const callId: string = parked.pendingToolCalls[0].callId;
    // A turn whose catalog takes ~25 KB, then notes until the store refuses: the session is full.
    const filler = await openTurn(session, {
      clientTools: Array.from({ length: 25 }, (_, i) => ({ name: `client_${i}`, description: "d".repeat(1000) })),
    });
    const fill = await exec(
      session,
      filler,
      "try { for (let n = 0; ; n++) await notes_write({ key: 'c' + n, text: 'x'.repeat(1000) }); } catch (e) { return e.message; }",
    );
    expect(fill.value).toMatch(/session storage is full/);

    const result = { callId, value: "v".repeat(8000) };
    const refused = await api("POST", `/v1/sessions/${session}/turns/${turnId}/client-results`, result);
    expect(refused.status).toBe(409);
    expect(refused.json.error).toMatchObject({ code: "quota_exceeded", message: expect.stringMatching(/gateway\.sessions\.maxStoredBytes/) });
    expect((await usage(session)).bytes).toBeLessThanOrEqual(MAX);

    expect((await api("DELETE", `/v1/sessions/${session}/turns/${filler}`)).status).toBe(200);
    expect((await api("POST", `/v1/sessions/${session}/turns/${turnId}/client-results`, result)).status).toBe(202);
    const done = await api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/wait`, { runId: parked.runId });
    expect(done.json).toMatchObject({ status: "completed", value: 8000 });
  });
});
