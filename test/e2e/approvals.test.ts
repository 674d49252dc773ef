import { abortAllDurableObjects } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { SETTLED_APPROVALS_KEPT } from "../../durable-objects/session/approval-broker";
import { api, exec, openTurn, sessionId, sessionProbe, sleep, TOKEN_B } from "./helpers";
import { mark, recordsSince } from "../support/log-capture";
import { chat, requests, script, toolResults } from "./chat-helpers";
import { decide, listApprovals, notes, pendingApprovals, startExec, startWait } from "./approval-helpers";

// Operator approvals inside nested calls (issue 12), through HTTP → session object → VM. The
// `approve*` agents (test/test-config.ts) require approval for notes_write (and the everything MCP
// server's tools); the cell's own budget is 1 s.

describe("approvals pause a nested call inside the original exec", () => {
  it("allowed: the exec stays in flight (no waiting result), its 1 s budget is paused for a 3 s decision, and it completes", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "approve" });
    const running = startExec(session, turnId, "await notes_write({ key: 'k', text: 'approved note' }); return await notes_read({ key: 'k' });");
    const [p] = await pendingApprovals(session);
    expect(p).toMatchObject({ turnId, tool: "notes_write", approvalId: expect.stringMatching(/^appr_/) });
    expect(p!.inputPreview).toContain("approved note");
    expect(typeof p!.requestedAt).toBe("number");
    await sleep(3000); // three times the cell's budget, spent waiting for the operator
    expect((await decide(session, p!.approvalId, "allow")).json).toEqual({ approvalId: p!.approvalId, decision: "allow" });
    const r = await running;
    expect(r.json).toMatchObject({ status: "completed", value: [{ key: "k", text: "approved note" }] });
    // Consumed once; nothing left pending.
    expect((await decide(session, p!.approvalId, "allow")).status).toBe(409);
    expect((await decide(session, p!.approvalId, "deny")).status).toBe(409);
    expect((await api("GET", `/v1/sessions/${session}/approvals`)).json).toEqual([]);
  });

  it("the operator's preview keeps every key in view when the model pads one field", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "approvepreview" });
    const running = startExec(
      session,
      turnId,
      "const value = {}; for (let i = 0; i < 12; i++) value['f' + i] = 'x'.repeat(300);\n" +
        "try { await echo({ value, delayMs: 7 }); } catch (e) { return e.message; }",
    );
    const [p] = await pendingApprovals(session);
    expect(p!.inputPreview).toContain('"delayMs":7');
    expect(p!.inputPreview).toContain('"f11"');
    await decide(session, p!.approvalId, "deny");
    expect((await running).json).toMatchObject({ status: "completed", value: expect.stringContaining("denied by the operator") });
  });

  it("denied: the call rejects with a catchable error naming the reason; nothing was written", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "approve" });
    const running = startExec(session, turnId, "try { await notes_write({ key: 'd', text: 'x' }); return 'ran'; } catch (e) { return e.message; }");
    const [p] = await pendingApprovals(session);
    expect((await decide(session, p!.approvalId, "deny", "not today")).status).toBe(200);
    expect((await running).json).toMatchObject({ status: "completed", value: "notes_write was denied by the operator: not today" });
    expect((await exec(session, turnId, "return await notes_read({ key: 'd' })")).value).toEqual([]);
  });

  it("timed out: no decision within timeoutSeconds fails the call closed; a late decision is a 409", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "approvefast" });
    const running = startExec(session, turnId, "try { await notes_write({ key: 't', text: 'x' }); return 'ran'; } catch (e) { return e.message; }");
    const [p] = await pendingApprovals(session);
    const r = await running;
    expect(r.json).toMatchObject({ status: "completed", value: expect.stringContaining("none came in time") });
    expect((await decide(session, p!.approvalId, "allow")).status).toBe(409);
  });

  it("a decision is never reused: each call asks again, after a caught denial too", async () => {
    const m = mark();
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "approve" });
    const running = startExec(
      session,
      turnId,
      "let first; try { await notes_write({ key: 'a', text: '1' }); first = 'ran'; } catch (e) { first = 'denied'; }\n" +
        "await notes_write({ key: 'b', text: '2' }); return first;",
    );
    const [p1] = await pendingApprovals(session);
    await decide(session, p1!.approvalId, "deny");
    const second = (await pendingApprovals(session)).find((p) => p.approvalId !== p1!.approvalId)!;
    expect(second.inputPreview).toContain('"b"');
    await decide(session, second.approvalId, "allow");
    expect((await running).json).toMatchObject({ status: "completed", value: "denied" });
    expect((await exec(session, turnId, "return (await notes_read({ prefix: '' })).map((n) => n.key)")).value).toEqual(["b"]);
    const t = await api("GET", `/v1/sessions/${session}/turns/${turnId}/trajectory`);
    expect(t.json.calls[0].nested.filter((n: any) => n.tool === "notes_write").map((n: any) => n.decision)).toEqual(["denied", "approved"]);
    // The structured log records each nested call under its parent with its decision, never its input.
    const logged = recordsSince(m).filter((r) => r.kind === "tool_call" && r.turnId === turnId && r.tool === "notes_write");
    expect(logged.map((r) => [r.decision, r.outcome])).toEqual([
      ["denied", "error"],
      ["approved", "ok"],
    ]);
    expect(logged[0]!.parentCallId).toBe(t.json.calls[0].callId);
    expect(JSON.stringify(logged)).not.toContain('"2"');
  });

  it("after a wait resume the resumed program's calls ask again", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "approvepark" });
    const parked = await exec(
      session,
      turnId,
      "await echo({ value: 1, delayMs: 800 }); await notes_write({ key: 'w', text: 'after resume' }); return 'done';",
    );
    expect(parked.status).toBe("waiting");
    await sleep(1000); // the slow echo settles while the run is parked
    const waiting = api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/wait`, { runId: parked.runId });
    const [p] = await pendingApprovals(session);
    expect(p).toMatchObject({ tool: "notes_write", turnId });
    await decide(session, p!.approvalId, "allow");
    expect((await waiting).json).toMatchObject({ status: "completed", value: "done" });
  });
});

describe("no surface runs an approval-gated tool without an allow", () => {
  it("direct tools (code mode off): the tools route waits for the decision", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "approvedirect" });
    const call = api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/notes_write`, { key: "direct", text: "x" });
    const [p] = await pendingApprovals(session);
    await decide(session, p!.approvalId, "deny", "no");
    expect((await call).json).toMatchObject({ status: "failed", error: "notes_write was denied by the operator: no" });
  });

  it("Tool Search tool_call: the hidden tool waits for the decision", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "approvesearch" });
    const call = api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/tool_call`, {
      id: "plugin:demo:notes_write",
      args: { key: "ts", text: "x" },
    });
    const [p] = await pendingApprovals(session);
    expect(p!.tool).toBe("notes_write");
    await decide(session, p!.approvalId, "allow");
    expect((await call).json).toMatchObject({ status: "completed", value: { key: "ts", bytes: 1 } });
  });

  it("the MCP namespace: MCP.<server>.<tool>() waits for the decision", async () => {
    const url = inject("mcpEverythingUrl" as never) as unknown as string;
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "approve", mcpServers: { everything: { url } } });
    const running = startExec(session, turnId, "return await MCP.everything.echo({ message: 'hi' });");
    const [p] = await pendingApprovals(session);
    expect(p!.tool).toBe("everything__echo");
    await decide(session, p!.approvalId, "allow");
    expect((await running).json).toMatchObject({ status: "completed" });
    expect(JSON.stringify((await running).json.value)).toContain("hi");
  });

  it("MCP resources and prompts: MCP.<server>.resources.read() and prompts.get() wait for the decision too ($api does not)", async () => {
    const url = inject("mcpEverythingUrl" as never) as unknown as string;
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "approve", mcpServers: { everything: { url } } });
    expect(await exec(session, turnId, "return typeof (await MCP.everything.$api())")).toMatchObject({ status: "completed", value: "object" });
    const reading = startExec(
      session,
      turnId,
      "const { resources } = await MCP.everything.resources.list({}); return await MCP.everything.resources.read({ uri: resources[0].uri });",
    );
    const [list] = await pendingApprovals(session);
    expect(list!.tool).toBe("everything__resources.list");
    await decide(session, list!.approvalId, "allow");
    const read = (await pendingApprovals(session)).find((p) => p.approvalId !== list!.approvalId)!;
    expect(read.tool).toBe("everything__resources.read");
    expect(read.inputPreview).toContain('"uri"');
    await decide(session, read.approvalId, "deny", "not that file");
    expect((await reading).json).toMatchObject({ status: "failed" });
    expect(JSON.stringify((await reading).json)).toContain("denied by the operator: not that file");
    const prompting = startExec(
      session,
      turnId,
      "try { await MCP.everything.prompts.get({ name: 'simple_prompt' }); return 'got'; } catch (e) { return e.message; }",
    );
    const [get] = (await pendingApprovals(session)).filter((p) => p.tool === "everything__prompts.get");
    await decide(session, get!.approvalId, "deny");
    expect((await prompting).json).toMatchObject({ status: "completed", value: "MCP.everything.prompts.get was denied by the operator" });
  });
});

describe("approval records are bounded", () => {
  it("a turn keeps its newest settled approvals only, and their bytes count against the session's storage", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "approvefast" });
    const rows = async () => (await sessionProbe(session).storageRows("SELECT status FROM approvals")).length;
    const used = async () => (await sessionProbe(session).storageUsage()).bytes;
    const before = await used();
    // Each cell asks for 16 approvals at once; none is decided, all time out after 1 s.
    const cell = "await Promise.allSettled(Array.from({ length: 16 }, (_, i) => notes_read({ key: 'k' + i }))); return 1";
    await exec(session, turnId, cell);
    const afterOne = await used();
    expect(await rows()).toBe(16);
    expect(afterOne - before).toBeGreaterThan(16 * 128);
    for (let i = 0; i < 5; i++) await exec(session, turnId, cell);
    expect(await rows()).toBe(SETTLED_APPROVALS_KEPT);
    // Pruned rows gave their bytes back: the session holds about what the kept rows weigh.
    const perRow = (afterOne - before) / 16;
    expect(await used()).toBeLessThan(before + (SETTLED_APPROVALS_KEPT + 8) * perRow + 20_000);
    expect((await api("DELETE", `/v1/sessions/${session}/turns/${turnId}`)).status).toBe(200);
    expect(await rows()).toBe(0);
  });
});

describe("approvals fail closed", () => {
  it("deleting the turn cancels a pending approval: the call never runs", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "approve" });
    const running = startExec(session, turnId, "await notes_write({ key: 'gone', text: 'x' }); return 'ran';");
    const [p] = await pendingApprovals(session);
    expect((await api("DELETE", `/v1/sessions/${session}/turns/${turnId}`)).status).toBe(200);
    expect((await running).json).toMatchObject({ status: "failed", code: "aborted" });
    expect((await decide(session, p!.approvalId, "allow")).status).toBe(404);
    const other = await openTurn(session, {});
    expect((await exec(session, other, "return await notes_read({ key: 'gone' })")).value).toEqual([]);
  });

  it("a reset of the session object while a decision is pending: the call is reported lost, the approval can never allow it", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "approve" });
    const running = startExec(session, turnId, "await notes_write({ key: 'reset', text: 'x' }); return 'ran';");
    const [p] = await pendingApprovals(session);
    await abortAllDurableObjects();
    const r = await running;
    expect(r.json).toMatchObject({ status: "failed", code: "internal_error" });
    expect((await api("GET", `/v1/sessions/${session}/approvals`)).json).toEqual([]);
    const late = await decide(session, p!.approvalId, "allow");
    expect(late.status).toBe(409);
    expect(late.json.error.message).toContain("no longer pending");
    expect((await exec(session, await openTurn(session, {}), "return await notes_read({ key: 'reset' })")).value).toEqual([]);
    // On record (it was an open call with no nested entry): the exec ended lost, its gated call shows the lost decision.
    const t = await api("GET", `/v1/sessions/${session}/turns/${turnId}/trajectory`);
    expect(t.json.calls).toEqual([expect.objectContaining({ tool: "exec", via: "route", status: "lost", code: "session_reset" })]);
    expect(t.json.calls[0].nested).toEqual([expect.objectContaining({ tool: "notes_write", status: "error", decision: "lost" })]);
  });

  it("another tenant cannot list or decide (404), bad bodies are 400, unknown ids 404", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "approve" });
    const running = startExec(session, turnId, "try { await notes_write({ key: 'x', text: 'x' }); } catch (e) { return e.message; } return 'ran';");
    const [p] = await pendingApprovals(session);
    expect((await api("GET", `/v1/sessions/${session}/approvals`, undefined, TOKEN_B)).status).toBe(404);
    expect((await decide(session, p!.approvalId, "allow", undefined, TOKEN_B)).status).toBe(404);
    expect((await api("POST", `/v1/sessions/${session}/approvals/${p!.approvalId}`, { decision: "maybe" })).json.error).toMatchObject({
      code: "invalid_request",
      path: "decision",
    });
    expect((await api("POST", `/v1/sessions/${session}/approvals/${p!.approvalId}`, { decision: "allow", extra: 1 })).status).toBe(400);
    expect((await decide(session, "appr_00000000-0000-0000-0000-000000000000", "allow")).status).toBe(404);
    expect((await decide(session, "not-an-approval", "allow")).status).toBe(404);
    expect((await api("GET", `/v1/sessions/${sessionId()}/approvals`)).status).toBe(404);
    await decide(session, p!.approvalId, "deny");
    expect((await running).json.value).toContain("denied");
  });
});

describe("approvals and parked runs", () => {
  it("a gated call in the same batch as a client tool keeps the exec in flight (budget paused) until the decision; then the client call parks it", async () => {
    // Was: the exec parked on the client call while the decision was pending, and the later wait
    // was not paused, so the model had to poll the operator with wait. A pending decision is now
    // checked before any park: approvals stay inside the original exec.
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "approve", clientTools: [{ name: "ask_user", description: "Ask the user" }] });
    const running = startExec(
      session,
      turnId,
      "const [a, b] = await Promise.all([ask_user({ q: 'name?' }), notes_write({ key: 'parked', text: 'x' })]);\nreturn [a, b.key];",
    );
    const [p] = await pendingApprovals(session);
    expect(p!.tool).toBe("notes_write");
    await sleep(1600); // longer than the cell's 1 s budget; the operator has not decided yet
    await decide(session, p!.approvalId, "allow");
    const first = (await running).json;
    expect(first).toMatchObject({ status: "waiting", reason: "pending_tools" });
    expect(first.pendingToolCalls.map((c: any) => c.tool)).toEqual(["ask_user"]);
    const ask = first.pendingToolCalls[0];
    expect((await api("POST", `/v1/sessions/${session}/turns/${turnId}/client-results`, { callId: ask.callId, value: "Ada" })).status).toBe(202);
    const w = (await startWait(session, turnId, first.runId)).json;
    expect(w).toMatchObject({ status: "completed", value: ["Ada", "parked"] });
  }, 20_000);

  it("the trajectory records only client calls as the caller's; an approved host call appears once, approved", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "approve", clientTools: [{ name: "ask_user", description: "Ask the user" }] });
    const running = startExec(session, turnId, "await Promise.all([ask_user({ q: 'x' }), notes_write({ key: 'traj', text: 'x' })]); return 1;");
    const [p] = await pendingApprovals(session);
    await decide(session, p!.approvalId, "allow");
    expect((await running).json.status).toBe("waiting");
    const t = await api("GET", `/v1/sessions/${session}/turns/${turnId}/trajectory`);
    const writes = t.json.calls[0].nested.filter((n: any) => n.tool === "notes_write");
    expect(writes.map((n: any) => [n.source, n.status, n.decision])).toEqual([["openclaw", "ok", "approved"]]);
    expect(t.json.calls[0].nested.filter((n: any) => n.source === "client").map((n: any) => [n.tool, n.status])).toEqual([["ask_user", "pending"]]);
  });

  it("deleting the turn while a batch with a client call waits for a decision cancels it; the tool never runs", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "approve", clientTools: [{ name: "ask_user", description: "Ask the user" }] });
    const running = startExec(
      session,
      turnId,
      "await Promise.all([ask_user({ q: 'x' }), notes_write({ key: 'gone-parked', text: 'x' })]); return 1;",
    );
    const [p] = await pendingApprovals(session);
    expect((await api("DELETE", `/v1/sessions/${session}/turns/${turnId}`)).status).toBe(200);
    expect((await running).json).toMatchObject({ status: "failed", code: "aborted" });
    expect([404, 409]).toContain((await decide(session, p!.approvalId, "allow")).status);
    expect(await listApprovals(session)).toEqual([]);
    expect(await notes(session)).toEqual([]);
  });

  it("two waits for a run whose approval is pending: the second is refused at once, the first completes after the allow", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "approve", clientTools: [{ name: "ask_user", description: "Ask the user" }] });
    const first = await exec(session, turnId, "const a = await ask_user({ q: 'x' }); await notes_write({ key: 'w2', text: a }); return a;");
    expect(first.status).toBe("waiting");
    await api("POST", `/v1/sessions/${session}/turns/${turnId}/client-results`, { callId: first.pendingToolCalls[0].callId, value: "v" });
    const w1 = startWait(session, turnId, first.runId);
    const [p] = await pendingApprovals(session);
    const w2 = await startWait(session, turnId, first.runId);
    expect(w2.json).toMatchObject({ status: "failed", code: "invalid_input" });
    await decide(session, p!.approvalId, "allow");
    expect((await w1).json).toMatchObject({ status: "completed", value: "v" });
    expect(await notes(session)).toEqual(["w2"]);
  });
});

describe("the guest cannot reach policy, hooks or the call context", () => {
  it("no ctx, approvals, hooks or host objects among the guest's globals; a gated call's error is a plain Error", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "approvefast" });
    const r = await exec(
      session,
      turnId,
      "const names = Object.getOwnPropertyNames(globalThis).filter((n) => /ctx|approv|hook|policy|signal|broker|pause|store|env/i.test(n));\n" +
        "let err; try { await notes_write({ key: 'g', text: 'x' }); } catch (e) { err = { proto: Object.getPrototypeOf(e) === Error.prototype, keys: Object.getOwnPropertyNames(e), ctor: e.constructor === Error }; }\n" +
        "return { names, types: [typeof ctx, typeof approvals, typeof signal, typeof process, typeof fetch], err };",
    );
    expect(r.status).toBe("completed");
    expect(r.value.names).toEqual([]);
    expect(r.value.types).toEqual(["undefined", "undefined", "undefined", "undefined", "undefined"]);
    expect(r.value.err.proto).toBe(true);
    expect(r.value.err.ctor).toBe(true);
    for (const k of r.value.err.keys) expect(["message", "stack"]).toContain(k);
  });
});

describe("approvals inside a /chat turn", () => {
  it("an exec the model runs waits for the operator inside the same /chat call; the stream never carries the approval's input preview or id", async () => {
    const session = sessionId();
    const s = await script([
      {
        toolCalls: [{ id: "c1", name: "exec", input: { code: "return await notes_write({ key: 'chat', text: 'sk-proj-AbCdEf0123456789XyZqq' })" } }],
      },
      { text: "done" },
    ]);
    const running = chat(
      session,
      { model: "fakeoai/gpt-fake", agentId: "approve", messages: [{ role: "user", content: `${s.marker} go` }] },
      { accept: "text/event-stream" },
    );
    const [p] = await pendingApprovals(session);
    expect(p!.inputPreview).not.toContain("AbCdEf0123456789");
    await decide(session, p!.approvalId, "allow");
    const r = await running;
    expect(r.status).toBe(200);
    expect(r.text).toContain("event: done");
    expect(r.text).not.toContain(p!.approvalId);
    const [result] = toolResults((await requests(s.id))[1]!);
    expect(JSON.parse(result!.content)).toMatchObject({ status: "completed", value: { key: "chat" } });
    expect(await listApprovals(session)).toEqual([]);
  });
});
