import { describe, expect, inject, it } from "vitest";
import { api, exec, openTurn, sessionId, sessionProbe } from "./helpers";
import { setLimits } from "./session-controls";
import { estimateStoredBytes } from "../../durable-objects/session/storage-quota";

const usage = (session: string): Promise<{ turns: number; bytes: number }> => sessionProbe(session).storageUsage();

/** A cell that writes 16 KiB notes until the store refuses, and reports what happened. */
const FILL = `
  let written = 0, error = null;
  for (let i = 0; i < 1000; i++) {
    try { await notes_write({ key: 'n' + i, text: 'x'.repeat(16000) }); written++; }
    catch (e) { error = e.message; break; }
  }
  return { written, error };`;

describe("per-session storage bounds", () => {
  it("opening a turn past maxTurnsPerSession is 409 quota_exceeded naming the limit; deleting a turn frees a slot", async () => {
    const session = sessionId();
    setLimits({ maxTurnsPerSession: 3 });
    const turns = [await openTurn(session), await openTurn(session), await openTurn(session)];
    const refused = await api("POST", `/v1/sessions/${session}/turns`, {});
    expect(refused.status).toBe(409);
    expect(refused.json.error.code).toBe("quota_exceeded");
    expect(refused.json.error.message).toMatch(/holds 3 turns.*maxTurnsPerSession = 3.*DELETE \/v1\/sessions\/:sessionId\/turns\/:turnId/);
    expect((await api("DELETE", `/v1/sessions/${session}/turns/${turns[0]}`)).status).toBe(200);
    expect((await api("POST", `/v1/sessions/${session}/turns`, {})).status).toBe(201);
  });

  it("opening a turn past maxStoredBytes is 409 quota_exceeded; turn rows count their catalog", async () => {
    const session = sessionId();
    const big = { clientTools: Array.from({ length: 40 }, (_, i) => ({ name: `client_${i}`, description: "d".repeat(1000) })) };
    await openTurn(session, big);
    const one = (await usage(session)).bytes;
    expect(one).toBeGreaterThan(40_000);
    setLimits({ maxStoredBytes: 2 * one + 100 });
    await openTurn(session, big);
    const refused = await api("POST", `/v1/sessions/${session}/turns`, big);
    expect(refused.status).toBe(409);
    expect(refused.json.error).toMatchObject({
      code: "quota_exceeded",
      message: expect.stringMatching(/over gateway\.sessions\.maxStoredBytes \(\d+\)/),
    });
    expect((await usage(session)).turns).toBe(2);
  });

  it("a turn's trajectory counts against maxStoredBytes and is freed with the turn", async () => {
    const session = sessionId();
    const turnId = await openTurn(session);
    const opened = (await usage(session)).bytes;
    const r = await exec(session, turnId, "let n = 0; for (let i = 0; i < 300; i++) n += await echo({ value: 1 }); return n;");
    expect(r).toMatchObject({ status: "completed", value: 300 });
    const rows = (
      await sessionProbe(session).storageRows<{ kind: string; body: string }>(
        "SELECT kind, body FROM trajectory WHERE turn_id = ? ORDER BY seq",
        turnId,
      )
    ).map((row) => ({ kind: row.kind, body: JSON.parse(row.body) as unknown }));
    expect(rows.length).toBeGreaterThan(300);
    const rowBytes = rows.reduce((sum, row) => sum + row.kind.length + new TextEncoder().encode(JSON.stringify(row.body)).length, 0);
    const after = (await usage(session)).bytes;
    expect(after - opened).toBeGreaterThanOrEqual(rowBytes);
    // Full with what the trajectory recorded: a new turn is refused until the turn goes.
    setLimits({ maxStoredBytes: after + 50 });
    expect((await api("POST", `/v1/sessions/${session}/turns`, {})).json.error.code).toBe("quota_exceeded");
    expect((await api("DELETE", `/v1/sessions/${session}/turns/${turnId}`)).status).toBe(200);
    expect((await usage(session)).bytes).toBe(0);
    expect((await api("POST", `/v1/sessions/${session}/turns`, {})).status).toBe(201);
  });

  it("a cell writing notes past maxStoredBytes gets a catchable error naming the limit; nothing is stored past it", async () => {
    const session = sessionId();
    const turnId = await openTurn(session);
    const base = (await usage(session)).bytes;
    // Room for three 16 KB notes and the trajectory rows of the calls (bounded previews); not for a fourth note.
    setLimits({ maxStoredBytes: base + 60_000 });
    const r = await exec(session, turnId, FILL);
    expect(r.status).toBe("completed");
    expect(r.value.written).toBe(3);
    expect(r.value.error).toMatch(/session storage is full.*over gateway\.sessions\.maxStoredBytes \(\d+\).*DELETE \/v1\/sessions\/:sessionId/);
    const used = await usage(session);
    expect(used.bytes).toBeLessThanOrEqual(base + 60_000);
    expect(used.bytes).toBeGreaterThan(base + 48_000);
    expect((await sessionProbe(session).storageKeys("tool:")).length).toBe(3);
    // Rewriting a note with the same size does not grow the session: allowed at the bound.
    expect(await exec(session, turnId, "return await notes_write({ key: 'n0', text: 'y'.repeat(16000) })")).toMatchObject({ status: "completed" });
  });

  it("tool data is session-scoped: it survives DELETE of its turn, still counts, and goes with DELETE of the session", async () => {
    const session = sessionId();
    const writer = await openTurn(session);
    const base = (await usage(session)).bytes;
    // Room for three notes and the two turns opened below.
    setLimits({ maxStoredBytes: 3 * base + 50_000 });
    expect((await exec(session, writer, FILL)).value.written).toBe(3);
    expect((await api("DELETE", `/v1/sessions/${session}/turns/${writer}`)).status).toBe(200);
    const reader = await openTurn(session);
    expect((await exec(session, reader, "return (await notes_read({ prefix: 'n' })).length")).value).toBe(3);
    // The notes still fill the session: a new write is refused (a direct call fails as data, not a 500).
    const off = await openTurn(session, { agentId: "off" });
    const direct = await api("POST", `/v1/sessions/${session}/turns/${off}/tools/notes_write`, { key: "more", text: "z".repeat(16000) });
    expect(direct.status).toBe(200);
    expect(direct.json).toMatchObject({ status: "failed", error: expect.stringMatching(/maxStoredBytes/) });

    expect((await api("DELETE", `/v1/sessions/${session}`)).status).toBe(200);
    setLimits({ maxStoredBytes: 200_000 });
    const fresh = await openTurn(session);
    expect((await exec(session, fresh, FILL)).value.written).toBeGreaterThan(3);
  });

  it("the taint mark of a note an untrusted cell wrote is stored beside it and counted in the quota like it; a trusted rewrite removes the mark and gives its bytes back", async () => {
    const session = sessionId();
    const hostile = { hostile: { url: `${inject("mcpHostileUrl" as never) as unknown as string}/metadata/mcp` } };
    const turnId = await openTurn(session, { mcpServers: hostile });
    const rows = () => sessionProbe(session).storageRows("SELECT key, bytes FROM tool_data ORDER BY key");
    const toolBytes = async () =>
      Number((await sessionProbe(session).storageRows("SELECT value FROM session_meta WHERE key = 'tool_bytes'"))[0]!.value);
    const mark = estimateStoredBytes("taint:note:k", 1);
    const note = estimateStoredBytes("tool:note:k", "abc");
    const tainted = await exec(session, turnId, 'await API.read("mcp/hostile.d.ts"); return await notes_write({ key: "k", text: "abc" })');
    expect(tainted.status).toBe("completed");
    expect(await rows()).toEqual([
      { key: "taint:note:k", bytes: mark },
      { key: "tool:note:k", bytes: note },
    ]);
    expect(await toolBytes()).toBe(mark + note);
    expect(await exec(session, turnId, 'return await notes_write({ key: "k", text: "abc" })')).toMatchObject({ status: "completed" });
    expect(await rows()).toEqual([{ key: "tool:note:k", bytes: note }]);
    expect(await toolBytes()).toBe(note);
    expect((await sessionProbe(session).storageKeys("taint:")).length).toBe(0);
  });

  it("an untrusted note the session has no room for is refused whole: no value is stored (its mark may stay: too much taint, never too little)", async () => {
    const session = sessionId();
    const hostile = { hostile: { url: `${inject("mcpHostileUrl" as never) as unknown as string}/metadata/mcp` } };
    const turnId = await openTurn(session, { mcpServers: hostile });
    await exec(session, turnId, "return 1");
    const base = (await usage(session)).bytes;
    // Room for the cell's trajectory rows, not for a 16 KB note.
    setLimits({ maxStoredBytes: base + 8_000 });
    const r = await exec(
      session,
      turnId,
      'await API.read("mcp/hostile.d.ts"); try { await notes_write({ key: "k", text: "x".repeat(16000) }); return "stored" } catch (e) { return e.message }',
    );
    expect(r.value).toMatch(/maxStoredBytes/);
    expect((await sessionProbe(session).storageKeys("tool:")).length).toBe(0);
  });
});
