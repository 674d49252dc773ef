import { describe, expect, it } from "vitest";
import { api, exec, expectHealthy, openTurn, sessionId, sleep, TOKEN_B } from "./helpers";
import { mark, linesSince, recordsSince } from "../support/log-capture";
import { chat, requests, script, toolResults } from "./chat-helpers";
import { decide, listApprovals, pendingApprovals, startExec, startWait } from "./approval-helpers";

// Hostile-tester pass over issue 12 (approvals inside nested calls, the budget pause, untrusted
// wrapping, call context, policy records) through HTTP → session object → VM. Agents come from
// test/test-config.ts: `approve` (1 s cell budget, notes_write + everything__* need approval,
// 30 s to decide), `approvefast` (notes_* need approval, 1 s to decide), `approvedirect`.
// `holds:` tests are regression tests for attacks that failed; `BUG:` tests fail on purpose and
// name the cause and a fix.

/** Notes stored under `prefix` in the session, read through a fresh ungated turn. */
async function notes(session: string, prefix = ""): Promise<string[]> {
  const t = await openTurn(session, {});
  const r = await exec(session, t, `return (await notes_read({ prefix: ${JSON.stringify(prefix)} })).map((n) => n.key)`);
  return r.value;
}

/** No answer of the gateway may carry a stack, a host object or an internal path. */
function noHostLeak(x: unknown): void {
  const text = JSON.stringify(x);
  expect(text).not.toMatch(/\bat [\w$.<>]+ \(|\.ts:\d+|\.js:\d+|\[object Object\]|node_modules|durable-objects\//);
}

describe("approval races and decisions", () => {
  it("holds: two decisions at once on one approval: exactly one wins (200), the other is 409, and the outcome is the winner's", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "approve" });
    const running = startExec(
      session,
      turnId,
      "try { await notes_write({ key: 'race', text: 'x' }); return 'ran'; } catch (e) { return e.message; }",
    );
    const [p] = await pendingApprovals(session);
    const [a, d] = await Promise.all([decide(session, p!.approvalId, "allow"), decide(session, p!.approvalId, "deny", "no")]);
    expect([a.status, d.status].sort()).toEqual([200, 409]);
    const r = (await running).json;
    if (a.status === 200) {
      expect(r).toMatchObject({ status: "completed", value: "ran" });
      expect(await notes(session)).toEqual(["race"]);
    } else {
      expect(r).toMatchObject({ status: "completed", value: "notes_write was denied by the operator: no" });
      expect(await notes(session)).toEqual([]);
    }
    noHostLeak([a.json, d.json, r]);
  });

  it("holds: a decision racing the turn's deletion never runs the tool unless the allow was accepted first", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "approve" });
    const running = startExec(session, turnId, "await notes_write({ key: 'del-race', text: 'x' }); return 'ran';");
    const [p] = await pendingApprovals(session);
    const [del, allow] = await Promise.all([api("DELETE", `/v1/sessions/${session}/turns/${turnId}`), decide(session, p!.approvalId, "allow")]);
    expect(del.status).toBe(200);
    expect([200, 404, 409]).toContain(allow.status);
    const r = await running;
    expect(r.status).toBe(200);
    if (allow.status !== 200) expect(await notes(session)).toEqual([]);
    noHostLeak([del.json, allow.json, r.json]);
    expect(await listApprovals(session)).toEqual([]);
  });

  it("holds: ids guessed, over-long, of another session or another tenant are 404; bad bodies 400; never a 500", async () => {
    const session = sessionId();
    const other = sessionId();
    const turnId = await openTurn(session, { agentId: "approve" });
    await openTurn(other, { agentId: "approve" });
    const running = startExec(session, turnId, "try { await notes_write({ key: 'ids', text: 'x' }); return 'ran'; } catch (e) { return e.message; }");
    const [p] = await pendingApprovals(session);
    const id = p!.approvalId;
    const probes = await Promise.all([
      decide(other, id, "allow"), // same tenant, another session
      decide(sessionId(), id, "allow"), // a session that never stored anything
      decide(session, id, "allow", undefined, TOKEN_B), // another tenant
      decide(session, `${id}0`, "allow"),
      decide(session, id.toUpperCase(), "allow"),
      decide(session, `appr_${"a".repeat(64)}`, "allow"),
      decide(session, `appr_${"a".repeat(5000)}`, "allow"),
      decide(session, "appr_", "allow"),
      decide(session, `appr_${encodeURIComponent("' OR 1=1 --")}`, "allow"),
      decide(session, encodeURIComponent(`${id}/../${id}`), "allow"),
      api("POST", `/v1/sessions/${session}/approvals/${id}/extra`, { decision: "allow" }),
      api("GET", `/v1/sessions/${session}/approvals/${id}`),
    ]);
    for (const r of probes) {
      expect(r.status).toBe(404);
      noHostLeak(r.json);
    }
    const bodies = await Promise.all([
      api("POST", `/v1/sessions/${session}/approvals/${id}`, { decision: "allow", reason: "x".repeat(501) }),
      api("POST", `/v1/sessions/${session}/approvals/${id}`, { decision: "allow", reason: null }),
      api("POST", `/v1/sessions/${session}/approvals/${id}`, { decision: "ALLOW" }),
      api("POST", `/v1/sessions/${session}/approvals/${id}`, ["allow"]),
      api("POST", `/v1/sessions/${session}/approvals/${id}`, "not json"),
      api("POST", `/v1/sessions/${session}/approvals/${id}`, '{"decision":"allow","__proto__":{"x":1}}'),
    ]);
    for (const r of bodies) {
      expect(r.status).toBe(400);
      noHostLeak(r.json);
    }
    // Nothing above decided it: still pending, and the cell is still waiting.
    expect((await listApprovals(session)).map((a) => a.approvalId)).toEqual([id]);
    expect((await decide(session, id, "deny")).status).toBe(200);
    expect((await running).json.value).toContain("denied by the operator");
    // The other session's list never showed it.
    expect(await listApprovals(other)).toEqual([]);
  });

  it("holds: a timed-out approval leaves nothing pending, records timed_out and never runs the tool", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "approvefast" });
    const r = await exec(session, turnId, "try { await notes_write({ key: 'late', text: 'x' }); return 'ran'; } catch (e) { return e.message; }");
    expect(r.value).toContain("none came in time");
    const t = await api("GET", `/v1/sessions/${session}/turns/${turnId}/trajectory`);
    expect(t.json.calls[0].nested[0]).toMatchObject({ tool: "notes_write", decision: "timed_out", status: "error" });
    // The timed-out approval is gone from the list; a decision now is a conflict.
    expect(await listApprovals(session)).toEqual([]);
    expect(await notes(session)).toEqual([]);
  });
});

describe("the budget pause cannot be turned into more budget", () => {
  it("holds: a cell that spins CPU while an approval is pending still stops at its tick budget (timeout), and its approval is cancelled", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "approve" });
    // The gated call is dispatched once the guest yields (the zero timer); then the guest spins.
    const r = await exec(
      session,
      turnId,
      "const p = notes_write({ key: 'spin', text: 'x' }).catch((e) => e.message);\n" +
        "await new Promise((r) => setTimeout(r, 0));\n" +
        "let i = 0; for (;;) { i++; }",
    );
    expect(r).toMatchObject({ status: "failed", code: "timeout" });
    // Fail closed: nothing is left for an operator to allow later.
    expect(await listApprovals(session)).toEqual([]);
    expect(await notes(session)).toEqual([]);
    await expectHealthy(session, turnId);
  }, 20_000);

  it("holds: zero-delay timers re-armed while paused spend the tick budget: the cell ends long before the 30 s approval timeout", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "approve" });
    const r = await exec(
      session,
      turnId,
      "notes_write({ key: 'tick', text: 'x' }).catch(() => {});\n" + "let n = 0; for (;;) { await new Promise((r) => setTimeout(r, 0)); n++; }",
    );
    expect(r).toMatchObject({ status: "failed", code: "timeout" });
    expect(await listApprovals(session)).toEqual([]);
    expect(await notes(session)).toEqual([]);
  }, 20_000);

  it("holds: a cell that throws while its approval is pending fails and leaves no approval behind", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "approve" });
    const r = await exec(
      session,
      turnId,
      "notes_write({ key: 'thrown', text: 'x' }).catch(() => {});\nawait new Promise((r) => setTimeout(r, 50));\nthrow new Error('boom');",
    );
    expect(r).toMatchObject({ status: "failed", error: expect.stringContaining("boom") });
    expect(await listApprovals(session)).toEqual([]);
    expect(await notes(session)).toEqual([]);
  });

  it("holds: timers due after the original deadline fire while paused; the cell completes after the allow", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "approve" });
    const running = startExec(
      session,
      turnId,
      "let fired = false; setTimeout(() => { fired = true; }, 1500);\nawait notes_write({ key: 'timer', text: 'x' });\nreturn fired;",
    );
    const [p] = await pendingApprovals(session);
    await sleep(2000); // past the 1 s budget and past the timer's due time
    await decide(session, p!.approvalId, "allow");
    expect((await running).json).toMatchObject({ status: "completed", value: true });
  });

  it("fixed: the pause has a bound per cell: a 1 s cell chaining gated calls that each time out runs on (5 × timeoutSeconds) holding the session", async () => {
    // Cause: src/policy/tool-call-policy.ts:120-131 (`deps.pause?.begin()` around every
    // approval) + src/cell/cell-runner.ts:85-88 (the deadline moves by every pause) +
    // src/cell/cell-runner.ts:155-158 (never times out while `pause.active`). Each approval is
    // bounded by timeoutSeconds, but the number of approvals one cell may await is not: the
    // only cost of a pause is about one settle tick, so a 1 s cell (3000 ticks) can wait for
    // thousands of approvals in a row (thousands × timeoutSeconds, up to 3600 s each), all the while holding the session's serial
    // queue (every other exec/wait of the session, of any turn, waits behind it). A deny does
    // not stop it either: the loop just asks again.
    // Fix: bound the total paused time of one cell (e.g. `approvals.timeoutSeconds` per cell,
    // or a per-cell cap on approvals awaited), after which further gated calls fail closed at
    // once without a new pause (or the cell fails with `timeout`).
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "approvefast" }); // 1 s budget, 1 s to decide
    const r = await exec(
      session,
      turnId,
      "let timedOut = 0;\nfor (let i = 0; i < 5; i++) { try { await notes_write({ key: 'k' + i, text: 'x' }); } catch (e) { if (/in time/.test(e.message)) timedOut++; } }\nreturn timedOut;",
    );
    // Expected: the cell's paused time is bounded (about one timeoutSeconds), so it cannot have
    // waited out five approvals in a row.
    expect(r.status === "failed" || (typeof r.value === "number" && r.value < 5)).toBe(true);
  }, 20_000);
});

describe("approvals and parked runs", () => {
  it("fixed: a gated call in the same batch as a client tool keeps the exec in flight (budget paused) until the decision; then the client call parks it", async () => {
    // Was: the exec parked on the client call while the decision was pending, and the later wait
    // was not paused, so the model had to poll the operator with wait. Now a pending decision is
    // checked before any park (src/cell/cell-runner.ts): approvals stay inside the original exec.
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

  it("fixed: the trajectory records only client calls as the caller's; an approved host call appears once, approved", async () => {
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

  it("holds: deleting the turn while a batch with a client call waits for a decision cancels it; the tool never runs", async () => {
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

  it("holds: two waits for a run whose approval is pending: the second is refused at once, the first completes after the allow", async () => {
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

describe("many approvals at once", () => {
  it("holds: maxPendingToolCalls (16) gated calls all wait; an operator denying them all at once rejects each; 17 are refused before any approval is asked", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "approve" });
    const over = await exec(
      session,
      turnId,
      "try { await Promise.all(Array.from({ length: 17 }, (_, i) => notes_write({ key: 'o' + i, text: 'x' }))); return 'ran'; } catch (e) { return e.message; }",
    );
    expect(over.value).toContain("too many pending tool calls");
    expect(await listApprovals(session)).toEqual([]);
    const running = startExec(
      session,
      turnId,
      "const r = await Promise.allSettled(Array.from({ length: 16 }, (_, i) => notes_write({ key: 'n' + i, text: 'x' })));\nreturn r.map((x) => x.status);",
    );
    const pending = await pendingApprovals(session, 16);
    expect(new Set(pending.map((p) => p.approvalId)).size).toBe(16);
    const decisions = await Promise.all(pending.map((p) => decide(session, p.approvalId, "deny")));
    expect(decisions.every((d) => d.status === 200)).toBe(true);
    expect((await running).json).toMatchObject({ status: "completed", value: Array(16).fill("rejected") });
    expect(await notes(session)).toEqual([]);
  });
});

describe("approvals never leak what they gate", () => {
  const SECRETS = ["sk-proj-AbCdEf0123456789XyZqq", `ghp_${"A1b2C3d4E5".repeat(4)}`, "test-token-b", "fake-key-openai"];
  const TEXT = `keys: ${SECRETS[0]} and ${SECRETS[1]}; gateway ${SECRETS[2]}; provider ${SECRETS[3]}; Authorization: Bearer abcdEFGH12345678`;

  it("holds: inputPreview, the trajectory and the log mask credential literals and registered secrets of a gated nested call", async () => {
    const m = mark();
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "approve" });
    const running = startExec(session, turnId, `await notes_write({ key: 'secret', text: ${JSON.stringify(TEXT)} }); return 'ok';`);
    const [p] = await pendingApprovals(session);
    for (const s of SECRETS) expect(p!.inputPreview).not.toContain(s);
    expect(p!.inputPreview).not.toContain("abcdEFGH12345678");
    expect(p!.inputPreview).toContain("***");
    await decide(session, p!.approvalId, "allow");
    expect((await running).json.status).toBe("completed");
    const t = await api("GET", `/v1/sessions/${session}/turns/${turnId}/trajectory`);
    const text = JSON.stringify(t.json);
    for (const s of SECRETS) expect(text).not.toContain(s);
    // The log: one tool_call record for the nested call, with its decision and never its input.
    const own = linesSince(m).filter((l) => l.includes(turnId));
    for (const s of SECRETS) expect(own.join("\n")).not.toContain(s);
    const calls = recordsSince(m).filter((r) => r.kind === "tool_call" && r.turnId === turnId);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ tool: "notes_write", decision: "approved", outcome: "ok" });
    expect(Object.keys(calls[0]!)).not.toContain("input");
    expect(JSON.stringify(calls[0])).not.toContain("keys:");
  });

  it("holds: a huge input is previewed within 2 KiB; the cell still runs the whole input after the allow", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "approve" });
    const running = startExec(session, turnId, "const r = await notes_write({ key: 'big', text: 'é'.repeat(16000) }); return r.bytes;");
    const [p] = await pendingApprovals(session);
    expect(new TextEncoder().encode(p!.inputPreview).length).toBeLessThanOrEqual(2048);
    // Each field is cut on its own (every key stays visible), then the whole is bounded.
    expect(p!.inputPreview).toContain('"key":"big"');
    expect(p!.inputPreview).toContain("more characters]");
    await decide(session, p!.approvalId, "allow");
    expect((await running).json).toMatchObject({ status: "completed", value: 32000 });
  });

  it("fixed: the approval preview cannot be steered to hide what is approved: a long field first pushes the note key out of the 2 KiB preview", async () => {
    // Cause: durable-objects/session/approval-broker.ts:43 previews the input with
    // `redactedPreview(input, NESTED_PREVIEW_BYTES)`, which cuts the compact JSON at 2 KiB from
    // the end (src/observability/redacted-preview.ts:40-46). The model controls key order and
    // sizes, so `{ text: <3 KB>, key: "victim" }` shows the operator only harmless text: the
    // field that decides the side effect (which note is overwritten; a recipient, a path, an
    // amount on other tools) is never displayed, and the operator approves blind. The approval
    // then runs the whole input.
    // Fix: build approval previews that keep every field visible: cap each string leaf (e.g.
    // 256 bytes with an omitted-bytes marker) and arrays' lengths before the overall bound,
    // write short scalar fields before long ones, or offer the full redacted input on a
    // separate route (e.g. GET …/approvals/:approvalId) so a decision never rests on a cut preview.
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "approve" });
    const running = startExec(session, turnId, "return await notes_write({ text: 'lorem ipsum '.repeat(300), key: 'victim-key' });");
    const [p] = await pendingApprovals(session);
    await decide(session, p!.approvalId, "deny");
    await running;
    // Expected: the operator can see which note the call would write.
    expect(p!.inputPreview).toContain("victim-key");
  });

  it("fixed: a direct (code mode off) gated call's input reaches the trajectory redacted, although its approval preview is masked", async () => {
    // Cause: durable-objects/session/outer-call-recorder.ts:41-49 (`storedInput` redacts only
    // exec's code/command and returns every other tool's input as given) → `outer_start`
    // (outer-call-recorder.ts:103) stores the raw input, and src/agent/trajectory.ts:71 hands it out. The README promises
    // "each outer call (callId, tool, redacted input, …)", and the same call's nested-style
    // preview (approval inputPreview, nested previews) is masked, so an operator who reads the
    // trajectory sees the credential the approval list hid. Also unbounded (up to the 1 MiB body).
    // Fix: in OuterCallRecorder.start, store non-exec inputs as `redactedPreview(input,
    // NESTED_PREVIEW_BYTES, redaction)` like nested calls (leave `storedInput` itself alone: the
    // provider-replay transcript uses it, and the seed keeps argument strings there).
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "approvedirect" });
    const call = api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/notes_write`, { key: "direct-secret", text: TEXT });
    const [p] = await pendingApprovals(session);
    for (const s of SECRETS) expect(p!.inputPreview).not.toContain(s); // the approval preview is masked…
    await decide(session, p!.approvalId, "allow");
    expect((await call).json).toMatchObject({ status: "completed" });
    const t = await api("GET", `/v1/sessions/${session}/turns/${turnId}/trajectory`);
    expect(t.json.calls[0]).toMatchObject({ tool: "notes_write", decision: "approved" });
    // …the trajectory must be too.
    for (const s of SECRETS) expect(JSON.stringify(t.json.calls[0].input)).not.toContain(s);
  });
});

describe("approvals against teardown and cancellation", () => {
  it("holds: deleting the whole session mid-approval fails the cell (no 500), the approval is gone (404) and nothing ran", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "approve" });
    const running = startExec(session, turnId, "await notes_write({ key: 'session-gone', text: 'x' }); return 'ran';");
    const [p] = await pendingApprovals(session);
    const del = await api("DELETE", `/v1/sessions/${session}`);
    expect(del.status).toBe(200);
    const r = await running;
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ status: "failed", code: "aborted" });
    expect((await decide(session, p!.approvalId, "allow")).status).toBe(404);
    expect((await api("GET", `/v1/sessions/${session}/approvals`)).status).toBe(404);
    // The same id starts a new, empty session: nothing was written, nothing is pending.
    expect(await notes(session)).toEqual([]);
    expect(await listApprovals(session)).toEqual([]);
  });

  it("holds: deleting the session while a batch with a client call waits for a decision: no 500, nothing runs, the id is usable again", async () => {
    const m = mark();
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "approve", clientTools: [{ name: "ask_user", description: "Ask the user" }] });
    const running = startExec(session, turnId, "await Promise.all([ask_user({ q: 'x' }), notes_write({ key: 'wiped', text: 'x' })]); return 1;");
    const [p] = await pendingApprovals(session);
    expect((await api("DELETE", `/v1/sessions/${session}`)).status).toBe(200);
    expect((await running).json).toMatchObject({ status: "failed", code: "aborted" });
    expect((await decide(session, p!.approvalId, "allow")).status).toBe(404);
    const fresh = await openTurn(session, { agentId: "approve" });
    await expectHealthy(session, fresh);
    expect(await notes(session)).toEqual([]);
    // The cancelled approval's bookkeeping never threw into the log (a wiped table).
    expect(recordsSince(m).filter((r) => r.kind === "host_error" && JSON.stringify(r).includes(session))).toEqual([]);
  });

  it("holds: a caller that goes away mid-approval cancels it: the cell is aborted, deciding is 409, the tool never runs", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "approve" });
    const { sessionStub } = await import("./helpers");
    const stub = sessionStub(session) as any;
    const running = stub.callTool(
      "tenant-a",
      turnId,
      "exec",
      { code: "await notes_write({ key: 'gone-caller', text: 'x' }); return 1;" },
      "req-appr",
    );
    const [p] = await pendingApprovals(session);
    await stub.cancelRequest("req-appr");
    expect((await running).body).toMatchObject({ status: "failed", code: "aborted" });
    const late = await decide(session, p!.approvalId, "allow");
    expect(late.status).toBe(409);
    expect(late.json.error.message).toContain("cancelled");
    expect(await notes(session)).toEqual([]);
    const t = await api("GET", `/v1/sessions/${session}/turns/${turnId}/trajectory`);
    expect(t.json.calls[0].nested.find((n: any) => n.tool === "notes_write")).toMatchObject({ decision: "cancelled" });
  });
});

describe("the guest cannot reach policy, hooks or the call context", () => {
  it("holds: no ctx, approvals, hooks or host objects among the guest's globals; a gated call's error is a plain Error", async () => {
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
  it("holds: an exec the model runs waits for the operator inside the same /chat call; the stream never carries the approval's input preview or id", async () => {
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
