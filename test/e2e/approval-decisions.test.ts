import { describe, expect, it } from "vitest";
import { api, exec, expectHealthy, openTurn, sessionId, TOKEN_B } from "./helpers";
import { recordsSince, mark } from "../support/log-capture";
import { decide, listApprovals, noHostLeak, notes, pendingApprovals, startExec } from "./approval-helpers";

// Deciding an operator approval, through HTTP → session object → VM: one decision per approval,
// only by its own tenant and session, and an approval whose call is gone can no longer run it.
// Agents come from test/test-config.ts: `approve` (1 s cell budget, notes_write needs approval,
// 30 s to decide), `approvefast` (notes_* need approval, 1 s to decide).

describe("approval races and decisions", () => {
  it("two decisions at once on one approval: exactly one wins (200), the other is 409, and the outcome is the winner's", async () => {
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

  it("a decision racing the turn's deletion never runs the tool unless the allow was accepted first", async () => {
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

  it("ids guessed, over-long, of another session or another tenant are 404; bad bodies 400; never a 500", async () => {
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

  it("a timed-out approval leaves nothing pending, records timed_out and never runs the tool", async () => {
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

describe("many approvals at once", () => {
  it("maxPendingToolCalls (16) gated calls all wait; an operator denying them all at once rejects each; 17 are refused before any approval is asked", async () => {
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

describe("approvals against teardown and cancellation", () => {
  it("deleting the whole session mid-approval fails the cell (no 500), the approval is gone (404) and nothing ran", async () => {
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

  it("deleting the session while a batch with a client call waits for a decision: no 500, nothing runs, the id is usable again", async () => {
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

  it("a caller that goes away mid-approval cancels it: the cell is aborted, deciding is 409, the tool never runs", async () => {
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
    expect((await running).body.result).toMatchObject({ status: "failed", code: "aborted" });
    const late = await decide(session, p!.approvalId, "allow");
    expect(late.status).toBe(409);
    expect(late.json.error.message).toContain("cancelled");
    expect(await notes(session)).toEqual([]);
    const t = await api("GET", `/v1/sessions/${session}/turns/${turnId}/trajectory`);
    expect(t.json.calls[0].nested.find((n: any) => n.tool === "notes_write")).toMatchObject({ decision: "cancelled" });
  });
});
