import { describe, expect, it } from "vitest";
import { sessionId, sessionProbe } from "./helpers";
import { appendSteps, chat, countedChatTurn, rows, script, trajectory, user } from "./chat-helpers";
import { mark, recordsSince } from "../support/log-capture";

// SQLite statements of a code-mode /chat turn, counted through the storage probe (deterministic,
// unlike time). Was 21 for a turn answered at once and 16–17 per exec round trip: activity re-read
// on every call, each charged write its own `UPDATE turns SET stored_bytes`, a new turn's sizes
// summed back from empty tables. Now a step's writes share one transaction and one charge, and
// what this object last wrote (activity, a new turn's sizes) is not read back. Opening writes the
// turn's spec in a row of its own (turn_specs): the turn row, updated on every step, stays small;
// its catalog once per session (turn_catalogs), after one lookup of its digest.

const CHARGE = "UPDATE turns SET stored_bytes";

/**
 * A turn row's charge less its transcript, trajectory and state: what the row charges for itself,
 * the same for every turn when each step charged exactly what it wrote.
 */
async function ownBytes(session: string, turnId: string): Promise<number> {
  const [r] = await rows<{ b: number }>(
    session,
    `SELECT stored_bytes
       - (SELECT SUM(bytes) FROM transcript WHERE turn_id = '${turnId}')
       - (SELECT SUM(64 + length(CAST(kind AS BLOB)) + length(CAST(body AS BLOB))) FROM trajectory WHERE turn_id = '${turnId}')
       - (SELECT length(CAST(state AS BLOB)) FROM chat_turns WHERE turn_id = '${turnId}') AS b
     FROM turns WHERE turn_id = '${turnId}'`,
  );
  return r!.b;
}

/** The roles of a turn's transcript messages, in order. */
async function transcriptRoles(session: string, turnId: string): Promise<string[]> {
  const roles = await rows<{ role: string }>(
    session,
    `SELECT json_extract(message, '$.role') AS role FROM transcript WHERE turn_id = '${turnId}' ORDER BY seq`,
  );
  return roles.map((r) => r.role);
}

/** The session's usage kept in memory is what SQL sums (turn rows and tool data). */
async function expectUsageIsSql(session: string): Promise<void> {
  const [sum] = await rows<{ n: number; b: number }>(session, "SELECT COUNT(*) AS n, SUM(stored_bytes) AS b FROM turns");
  const [tool] = await rows<{ value: string }>(session, "SELECT value FROM session_meta WHERE key = 'tool_bytes'");
  expect(await sessionProbe(session).storageUsage()).toMatchObject({ turns: sum!.n, bytes: sum!.b + Number(tool!.value) });
}

describe("a code-mode /chat turn's SQL statements", () => {
  it("opens a turn and answers in 15 statements, and runs each exec round trip in 11, with one charge per step", async () => {
    const session = sessionId();
    await countedChatTurn(session, 0); // creates the schema
    const plain = await countedChatTurn(session, 0);
    const one = await countedChatTurn(session, 1);
    const three = await countedChatTurn(session, 3);
    expect(plain.statements).toBe(15);
    expect(plain.log.filter((q) => q.startsWith("INSERT INTO turn_specs"))).toHaveLength(1);
    // No statement of a step rewrites the spec: per-step updates touch only the small turn row.
    expect(three.log.filter((q) => q.includes("turn_specs"))).toHaveLength(1);
    expect((three.statements - one.statements) / 2).toBe(11);
    // Per round trip: the model's reply (event, state, message) with the call's start, and the call's end with its result and the state.
    const charges = (c: { log: string[] }) => c.log.filter((q) => q.startsWith(CHARGE)).length;
    expect((charges(three) - charges(one)) / 2).toBe(2);
    // Activity this object wrote is not read back on every call.
    expect(three.log.filter((q) => q.includes("last_active_at") && q.startsWith("SELECT") && !q.includes("MIN(deadline)"))).toEqual([]);
  });

  it("runs each exec round trip in 2 storage transactions: the reply with the call's start, the call's end with its result (was 9, then 4)", async () => {
    const session = sessionId();
    await countedChatTurn(session, 0);
    const one = await countedChatTurn(session, 1);
    const three = await countedChatTurn(session, 3);
    expect((three.transactions - one.transactions) / 2).toBe(2);
    // Still in this order on record: each model call, then the call it asked for from start to end.
    const traj = await rows<{ kind: string }>(session, `SELECT kind FROM trajectory WHERE turn_id = '${three.turnId}' ORDER BY seq`);
    expect(traj.map((r) => r.kind)).toEqual([
      ...["model_call", "outer_start", "outer_end"],
      ...["model_call", "outer_start", "outer_end"],
      ...["model_call", "outer_start", "outer_end"],
      "model_call",
    ]);
    expect(await rows(session, "SELECT * FROM open_calls")).toEqual([]);
  });

  it("updates a turn's /chat state in place: the same row from the turn's first step to its last", async () => {
    const session = sessionId();
    await countedChatTurn(session, 0);
    const s = await script([{ toolCalls: [{ id: "x0", name: "exec", input: { code: "return 1;" } }] }, { text: "done" }]);
    // (A replaced row would take a new rowid at every step.)
    const before = await rows<{ r: number }>(session, "SELECT MAX(rowid) AS r FROM chat_turns");
    const r = await chat(session, { model: "fakeoai/gpt-fake", messages: user(s.marker) });
    expect(r.json).toMatchObject({ status: "completed" });
    const [row] = await rows<{ r: number; status: string }>(
      session,
      `SELECT rowid AS r, json_extract(state, '$.status') AS status FROM chat_turns WHERE turn_id = '${r.json.turnId}'`,
    );
    expect(row).toEqual({ r: before[0]!.r + 1, status: "completed" });
  });

  it("a direct tool whose result step fails is logged once: its end is written again, its log line is not", async () => {
    const session = sessionId();
    const s = await script([{ toolCalls: [{ id: "e1", name: "echo", input: { value: 1 } }] }, { text: "done" }]);
    await sessionProbe(session).failNextStatement("INSERT INTO transcript", "string or blob too big: SQLITE_TOOBIG", 2);
    const from = mark();
    const r = await chat(session, { model: "fakeoai/gpt-fake", agentId: "off", messages: user(s.marker) });
    expect(r.json.error?.code).toBe("internal_error");
    const turnId = r.json.turnId as string;
    const kinds = await rows<{ kind: string }>(session, `SELECT kind FROM trajectory WHERE turn_id = '${turnId}' ORDER BY seq`);
    expect(kinds.map((k) => k.kind)).toEqual(["model_call", "outer_start", "outer_end", "limit"]);
    expect(recordsSince(from).filter((x) => x.kind === "tool_call" && x.callId === "e1")).toHaveLength(1);
  });

  it("a first call that cannot be opened ends the /chat call after its reply is stored: started once, ended failed, not left open", async () => {
    const session = sessionId();
    const s = await script([{ toolCalls: [{ id: "w1", name: "wait", input: { runId: "cm_x" } }] }, { text: "done" }]);
    // Opening a wait reads whether its run is untrusted, after the call's start was written.
    await sessionProbe(session).failNextStatement("SELECT 1 AS x FROM untrusted_runs", "SQLITE_IOERR: disk I/O error");
    const r = await chat(session, { model: "fakeoai/gpt-fake", messages: user(s.marker) });
    expect(r.status).toBe(500);
    expect(r.json.error.code).toBe("internal_error");
    const turnId = r.json.turnId as string;
    const kinds = await rows<{ kind: string }>(session, `SELECT kind FROM trajectory WHERE turn_id = '${turnId}' ORDER BY seq`);
    expect(kinds.map((k) => k.kind)).toEqual(["model_call", "outer_start", "outer_end", "limit"]);
    const [end] = await rows<{ body: string }>(session, `SELECT body FROM trajectory WHERE turn_id = '${turnId}' AND kind = 'outer_end'`);
    expect(JSON.parse(end!.body)).toMatchObject({ callId: "w1", tool: "wait", status: "failed", code: "internal_error" });
    expect(await rows(session, `SELECT * FROM open_calls WHERE turn_id = '${turnId}'`)).toEqual([]);
    expect(await transcriptRoles(session, turnId)).toEqual(["user", "assistant"]);
  });

  it("a result step that fails still puts the call's end on record: no call is left open, the charges match SQL", async () => {
    const session = sessionId();
    const plain = await countedChatTurn(session, 0);
    const s = await script([{ toolCalls: [{ id: "x0", name: "exec", input: { code: "return 1;" } }] }, { text: "done" }]);
    // The turn's messages: the user's (opening), the model's reply (first step), the call's result (second step): that one fails.
    await sessionProbe(session).failNextStatement("INSERT INTO transcript", "string or blob too big: SQLITE_TOOBIG", 2);
    const r = await chat(session, { model: "fakeoai/gpt-fake", messages: user(s.marker) });
    expect(r.status).toBe(500);
    expect(r.json.error.code).toBe("internal_error");
    const turnId = r.json.turnId as string;
    expect(await rows(session, `SELECT * FROM open_calls WHERE turn_id = '${turnId}'`)).toEqual([]);
    const traj = (await trajectory(session, turnId)).json;
    expect(traj.calls.map((c: any) => [c.tool, c.status])).toEqual([["exec", "completed"]]);
    expect(await transcriptRoles(session, turnId)).toEqual(["user", "assistant"]);
    expect(await ownBytes(session, turnId)).toBe(await ownBytes(session, plain.turnId));
    await expectUsageIsSql(session);
  });

  it("a write that fails inside a step leaves the step's other writes, the charges and the usage whole", async () => {
    const session = sessionId();
    await countedChatTurn(session, 0);
    const s = await script([{ toolCalls: [{ id: "x0", name: "exec", input: { code: "return 1;" } }] }, { text: "done" }]);
    // The first trajectory row of the turn is the first model call's, written in the step that stores its reply.
    await sessionProbe(session).failNextStatement("INSERT INTO trajectory", "string or blob too big: SQLITE_TOOBIG");
    const r = await chat(session, { model: "fakeoai/gpt-fake", messages: user(s.marker) });
    expect(r.json).toMatchObject({ status: "completed", message: { role: "assistant", content: "done" } });
    const turnId = r.json.turnId as string;
    // The event is counted as dropped; the reply's message and state were stored with it all the same.
    const traj = (await trajectory(session, turnId)).json;
    expect(traj.droppedEvents).toBe(1);
    expect(traj.modelCalls.map((m: any) => m.n)).toEqual([2]);
    expect(traj.calls.map((c: any) => [c.tool, c.status])).toEqual([["exec", "completed"]]);
    expect(await transcriptRoles(session, turnId)).toEqual(["user", "assistant", "tool", "assistant"]);
    // The turn row is charged exactly what its rows hold, and the usage kept in memory is what SQL sums.
    const plain = await countedChatTurn(session, 0);
    expect(await ownBytes(session, turnId)).toBe(await ownBytes(session, plain.turnId));
    await expectUsageIsSql(session);
  });

  it("a reply the platform refuses to store ends the call with internal_error; its state and event stay, and a retry continues the turn", async () => {
    const session = sessionId();
    const plain = await countedChatTurn(session, 0);
    // A turn stopped by the provider, continued: its first step stores the reply's event, state and message together.
    const s = await script([{ error: { status: 500, message: "boom" } }]);
    const first = await chat(session, { model: "fakeoai/gpt-fake", messages: user(s.marker) });
    expect(first.json.error.code).toBe("provider_unavailable");
    const turnId = first.json.turnId as string;
    await appendSteps(s.id, [{ text: "hello" }, { text: "again" }]);
    await sessionProbe(session).failNextStatement("INSERT INTO transcript", "string or blob too big: SQLITE_TOOBIG");
    const failed = await chat(session, { turnId });
    expect(failed.status).toBe(500);
    expect(failed.json.error.code).toBe("internal_error");
    // The message failed alone: the reply's model call is on record, the transcript still ends at the user's message.
    const roles = () => transcriptRoles(session, turnId);
    expect(await roles()).toEqual(["user"]);
    expect((await trajectory(session, turnId)).json.modelCalls.map((m: any) => m.n)).toEqual([1]);
    const consistent = async () => {
      expect(await ownBytes(session, turnId)).toBe(await ownBytes(session, plain.turnId));
      await expectUsageIsSql(session);
    };
    await consistent();
    const retried = await chat(session, { turnId });
    expect(retried.json).toMatchObject({ status: "completed", message: { role: "assistant", content: "again" } });
    expect(await roles()).toEqual(["user", "assistant"]);
    await consistent();
  });

  it("charges each turn row exactly what its rows hold, and keeps its trajectory and transcript whole", async () => {
    const session = sessionId();
    const plain = await countedChatTurn(session, 0);
    const two = await countedChatTurn(session, 2);
    const traj = (await trajectory(session, two.turnId)).json;
    expect(traj.calls.map((c: any) => [c.tool, c.status])).toEqual([
      ["exec", "completed"],
      ["exec", "completed"],
    ]);
    expect(traj.modelCalls.map((m: any) => m.n)).toEqual([1, 2, 3]);
    expect(await transcriptRoles(session, two.turnId)).toEqual(["user", "assistant", "tool", "assistant", "tool", "assistant"]);
    // A turn row is charged its own row plus its transcript, trajectory and state: what is left after
    // those is the same for a turn answered at once and one with two rounds (charges per step add up exactly).
    expect(await ownBytes(session, two.turnId)).toBe(await ownBytes(session, plain.turnId));
    // The usage kept in memory is what SQL sums.
    await expectUsageIsSql(session);
  });
});
