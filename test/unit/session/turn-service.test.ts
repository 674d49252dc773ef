import { describe, expect, it } from "vitest";
import type { CodeModeResult } from "../../../src/code-mode";
import type { SessionReply } from "../../../src/errors";
import { demoPlugin } from "../../../src/plugins";
import { RUN_UNAVAILABLE } from "../../../src/runs";
import { TurnService, type TrustedResult } from "../../../src/session";
import { defineToolPlugin, type ToolPlugin } from "../../../src/tools";
import type { OpenTurnRequest } from "../../../src/turns";
import { inMemoryTurnService, type InMemorySessionOptions } from "../../support/in-memory-session";

const TENANT = "tenant-a";
const SESSION = "s-inmem";

/** Code mode on with small VMs (the test pool has 64 MiB); agents for approvals, parking on host calls, Tool Search. */
const CONFIG = {
  tools: { codeMode: { enabled: true, memoryLimitBytes: 16 << 20 } },
  agents: {
    entries: {
      approve: { approvals: { require: ["notes_write"], timeoutSeconds: 30 } },
      // A short deadline: a cell whose host call outlasts it parks (the manual clock is moved past it).
      park: { tools: { codeMode: { timeoutMs: 300 } } },
      searchtools: { tools: { codeMode: false, toolSearch: { mode: "tools" } } },
    },
  },
};

/** A tool that holds its call until the test opens the gate, or the call is aborted. */
function gate() {
  let entered!: () => void;
  const reached = new Promise<void>((resolve) => (entered = resolve));
  let open!: (value: unknown) => void;
  const opened = new Promise<unknown>((resolve) => (open = resolve));
  const seen = { calls: 0, aborted: false };
  const plugin = defineToolPlugin({
    id: "gate",
    name: "Gate",
    description: "A call the test holds.",
    tools: (tool) => [
      tool({
        name: "hold",
        description: "Wait until the test opens the gate.",
        parameters: { type: "object", properties: {}, additionalProperties: false },
        execute: (_input, ctx) => {
          seen.calls++;
          entered();
          return new Promise((resolve, reject) => {
            void opened.then(resolve);
            ctx.signal.addEventListener(
              "abort",
              () => {
                seen.aborted = true;
                reject(new Error("aborted"));
              },
              { once: true },
            );
          });
        },
      }),
    ],
  });
  return { plugin, reached, open, seen };
}

function world(plugins: readonly ToolPlugin[] = [demoPlugin], options: InMemorySessionOptions = {}) {
  return inMemoryTurnService(plugins, { config: CONFIG, ...options });
}

async function openTurn(service: TurnService, req: OpenTurnRequest = {}): Promise<string> {
  const r = await service.openTurn(TENANT, SESSION, req);
  if (!r.ok) throw new Error(`openTurn: ${r.reason} ${r.message}`);
  return r.body.turnId;
}

/** The cell result of an exec/wait reply (the call itself must have been answered). */
function cell(reply: SessionReply<TrustedResult>): CodeModeResult {
  if (!reply.ok) throw new Error(`call refused: ${reply.reason} ${reply.message}`);
  return reply.body.result as CodeModeResult;
}

/** `p`, or a failure naming `what` after `ms` (a call that never ends fails the test at once, not at its timeout). */
function within<T>(p: Promise<T>, what: string, ms = 5000): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | null = null;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} did not end within ${ms} ms`)), ms)));
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

async function trajectoryOf(service: TurnService, turnId: string) {
  const t = await service.trajectory(TENANT, turnId);
  if (!t.ok) throw new Error(`trajectory: ${t.reason}`);
  return t.body;
}

describe("TurnService over in-memory ports", () => {
  it("opening a code-mode turn stores it (tenant-scoped) and answers the code-mode surface: exec and wait", async () => {
    const { service, ports } = world();
    expect(ports.sessionStorage.ready).toBe(false);
    const r = await service.openTurn(TENANT, SESSION, {});
    if (!r.ok) throw new Error(r.message);
    expect(r.body).toMatchObject({ codeModeEngaged: true, toolSearchEngaged: false, telemetry: { controlTools: ["exec", "wait"] } });
    expect(r.body.tools.map((t) => t.name)).toEqual(["exec", "wait"]);
    expect(ports.sessionStorage.ready).toBe(true);
    expect(ports.turns.ids()).toEqual([r.body.turnId]);
    expect(ports.turns.get(TENANT, r.body.turnId)?.spec).toMatchObject({ turnId: r.body.turnId, sessionId: SESSION, codeModeEngaged: true });
    expect(ports.turns.get("tenant-b", r.body.turnId)).toBeUndefined();
    expect(ports.quota.usage().turns).toBe(1);
    expect(ports.quota.usage().bytes).toBeGreaterThan(0);
    // The idle alarm is armed for the turn's deadline.
    expect(ports.alarm.at).toBeGreaterThan(ports.clock.now());
    expect(await service.describeTurn(TENANT, r.body.turnId)).toMatchObject({ ok: true, body: { codeModeEngaged: true } });
  });

  it("exec of a trivial cell completes with its value, and the trajectory shows that one outer call", async () => {
    const { service, ports } = world();
    const turnId = await openTurn(service);
    expect(await service.callTool(TENANT, turnId, "exec", { code: "return 1 + 2" })).toMatchObject({
      ok: true,
      body: { untrusted: false, result: { status: "completed", value: 3 } },
    });
    const t = await trajectoryOf(service, turnId);
    expect(t.status).toBe("open");
    expect(t.calls).toHaveLength(1);
    expect(t.calls[0]).toMatchObject({ tool: "exec", via: "route", status: "completed", input: { code: "return 1 + 2" }, nested: [] });
    expect(ports.transcript.openCalls()).toEqual([]);
  });

  it("a tool the cell calls is recorded under its exec, and the turn's call counter is saved", async () => {
    const { service, ports } = world();
    const turnId = await openTurn(service);
    const done = cell(
      await service.callTool(TENANT, turnId, "exec", { code: "return (await shipping_get({ id: (await shipping_list())[0].id })).id" }),
    );
    expect(done).toMatchObject({ status: "completed", value: expect.any(String) });
    const t = await trajectoryOf(service, turnId);
    expect(t.calls[0]!.nested).toMatchObject([
      { tool: "shipping_list", status: "ok" },
      { tool: "shipping_get", status: "ok" },
    ]);
    expect(ports.turns.get(TENANT, turnId)?.counters.call).toBe(2);
    expect(t.telemetry.counters.call).toBe(2);
  });

  it("a cell that calls yield_control() parks (waiting, runId); wait resumes it to completed; the run store is empty after", async () => {
    const { service, ports } = world();
    const turnId = await openTurn(service);
    const parked = cell(await service.callTool(TENANT, turnId, "exec", { code: "const a = 3; await yield_control(); return a * 2 + 1" }));
    if (parked.status !== "waiting") throw new Error(`expected waiting, got ${parked.status}`);
    expect(parked.reason).toBe("yield");
    expect(ports.snapshots.count()).toBe(1);
    expect(ports.snapshots.state(parked.runId)).toMatchObject({ turnId, reason: "yield" });
    // The run's expiry is asked for.
    expect(ports.alarm.asked).toContain(ports.snapshots.state(parked.runId)!.expiresAt);

    expect(cell(await service.callTool(TENANT, turnId, "wait", { runId: parked.runId }))).toMatchObject({ status: "completed", value: 7 });
    expect(ports.snapshots.count()).toBe(0);
    expect(ports.snapshots.stored.size).toBe(0);
    expect(cell(await service.callTool(TENANT, turnId, "wait", { runId: parked.runId }))).toMatchObject({ status: "failed", error: RUN_UNAVAILABLE });

    const t = await trajectoryOf(service, turnId);
    expect(t.calls.map((c) => [c.tool, c.status])).toEqual([
      ["exec", "waiting"],
      ["wait", "completed"],
      ["wait", "failed"],
    ]);
    expect(t.snapshots.map((s) => s.event)).toEqual(["parked", "resumed", "settled", "unavailable"]);
  });

  it("a client tool call parks; clientResult delivers its value; wait completes with it", async () => {
    const { service, ports } = world();
    const turnId = await openTurn(service, { clientTools: [{ name: "ask", description: "Ask the user" }] });
    const parked = cell(await service.callTool(TENANT, turnId, "exec", { code: "const a = await ask({ q: 1 }); return 'got ' + a" }));
    if (parked.status !== "waiting") throw new Error(`expected waiting, got ${parked.status}`);
    expect(parked).toMatchObject({ reason: "pending_tools", pendingToolCalls: [{ tool: "ask", input: { q: 1 } }] });
    const callId = parked.pendingToolCalls![0]!.callId;
    expect((await trajectoryOf(service, turnId)).calls[0]!.nested).toMatchObject([{ invocationId: callId, tool: "ask", status: "pending" }]);
    expect(ports.transcript.parentOf(turnId, callId)).toBe((await trajectoryOf(service, turnId)).calls[0]!.callId);

    expect(await service.clientResult(TENANT, turnId, { callId, value: "yes" })).toEqual({ ok: true, body: { accepted: true } });
    expect(ports.turns.wasDelivered(turnId, callId)).toBe(true);
    expect(cell(await service.callTool(TENANT, turnId, "wait", { runId: parked.runId }))).toMatchObject({ status: "completed", value: "got yes" });
    expect(ports.snapshots.count()).toBe(0);
    expect((await trajectoryOf(service, turnId)).calls[0]!.nested).toMatchObject([{ invocationId: callId, status: "ok" }]);
  });

  it("a second clientResult for the same call is a conflict, before and after the wait; an unknown call is not_found and records nothing", async () => {
    const { service, ports } = world();
    const turnId = await openTurn(service, { clientTools: [{ name: "ask" }] });
    const parked = cell(await service.callTool(TENANT, turnId, "exec", { code: "return await ask({})" }));
    if (parked.status !== "waiting") throw new Error(`expected waiting, got ${parked.status}`);
    const callId = parked.pendingToolCalls![0]!.callId;
    expect(await service.clientResult(TENANT, turnId, { callId, value: 1 })).toMatchObject({ ok: true });
    expect(await service.clientResult(TENANT, turnId, { callId, value: 2 })).toMatchObject({ ok: false, reason: "conflict" });
    expect(cell(await service.callTool(TENANT, turnId, "wait", { runId: parked.runId }))).toMatchObject({ status: "completed", value: 1 });
    expect(await service.clientResult(TENANT, turnId, { callId, value: 3 })).toMatchObject({ ok: false, reason: "conflict" });

    // Refused whole: the delivery record written before the refusal was rolled back with it.
    expect(await service.clientResult(TENANT, turnId, { callId: "call_nobody", value: 1 })).toMatchObject({ ok: false, reason: "not_found" });
    expect(ports.turns.wasDelivered(turnId, "call_nobody")).toBe(false);
    expect(ports.db.rolledBack).toBeGreaterThan(0);
    expect(await service.clientResult(TENANT, turnId, { callId: "call_nobody", value: 1 })).toMatchObject({ ok: false, reason: "not_found" });
  });

  it("deleting the turn aborts its running cell, drops its parked runs and its transcript, and leaves other turns alone", async () => {
    const g = gate();
    const { service, ports } = world([g.plugin]);
    const turnId = await openTurn(service);
    const other = await openTurn(service);
    const parked = cell(await service.callTool(TENANT, turnId, "exec", { code: "await yield_control(); return 1" }));
    const kept = cell(await service.callTool(TENANT, other, "exec", { code: "await yield_control(); return 2" }));
    if (parked.status !== "waiting" || kept.status !== "waiting") throw new Error("expected two parked runs");
    const running = service.callTool(TENANT, turnId, "exec", { code: "await hold({}); return 'finished'" });
    await g.reached;
    expect(service.calls.running()).toEqual({ [turnId]: 1 });

    expect(await service.deleteTurn(TENANT, turnId)).toMatchObject({ ok: true, body: { telemetry: { controlTools: ["exec", "wait"] } } });
    expect(cell(await within(running, "the deleted turn's exec"))).toMatchObject({ status: "failed", code: "aborted" });
    expect(g.seen.aborted).toBe(true);
    expect(ports.snapshots.runsOfTurn(turnId)).toEqual([]);
    // The aborted cell's own end was not written for the deleted turn either.
    expect(ports.transcript.events(turnId)).toEqual([]);
    expect(ports.transcript.openCalls()).toEqual([]);
    expect(ports.turns.ids()).toEqual([other]);
    expect(service.calls.running()).toEqual({});

    expect(await service.callTool(TENANT, turnId, "wait", { runId: parked.runId })).toMatchObject({ ok: false, reason: "not_found" });
    expect(await service.deleteTurn(TENANT, turnId)).toMatchObject({ ok: false, reason: "not_found" });
    expect(cell(await service.callTool(TENANT, other, "wait", { runId: kept.runId }))).toMatchObject({ status: "completed", value: 2 });
  });

  it("an unknown turn, or another tenant's, is not_found on every call", async () => {
    const { service } = world();
    const turnId = await openTurn(service);
    for (const [tenant, id] of [
      [TENANT, "turn-nobody"],
      ["tenant-b", turnId],
    ] as const) {
      expect(await service.callTool(tenant, id, "exec", { code: "return 1" })).toMatchObject({ ok: false, reason: "not_found" });
      expect(await service.clientResult(tenant, id, { callId: "call_x", value: 1 })).toMatchObject({ ok: false, reason: "not_found" });
      expect(await service.trajectory(tenant, id)).toMatchObject({ ok: false, reason: "not_found" });
      expect(await service.describeTurn(tenant, id)).toMatchObject({ ok: false, reason: "not_found" });
      expect(await service.deleteTurn(tenant, id)).toMatchObject({ ok: false, reason: "not_found" });
    }
    // The other tenant's attempt did not delete it.
    expect(cell(await service.callTool(TENANT, turnId, "exec", { code: "return 1" }))).toMatchObject({ status: "completed", value: 1 });
  });

  it("the quota refusing a turn answers quota_exceeded and stores nothing", async () => {
    const { service, ports } = world();
    ports.quota.maxStoredBytes = 100;
    expect(await service.openTurn(TENANT, SESSION, {})).toMatchObject({ ok: false, reason: "quota_exceeded" });
    expect(ports.sessionStorage.ready).toBe(false);
    expect(ports.turns.ids()).toEqual([]);

    ports.quota.maxStoredBytes = Number.POSITIVE_INFINITY;
    ports.quota.maxTurns = 1;
    const first = await openTurn(service);
    expect(await service.openTurn(TENANT, SESSION, {})).toMatchObject({
      ok: false,
      reason: "quota_exceeded",
      message: expect.stringContaining("1 turns"),
    });
    expect(ports.turns.ids()).toEqual([first]);
  });

  it("cancelRequest of a running cell's request ends it aborted; a request cancelled before its call arrives starts aborted", async () => {
    const g = gate();
    const { service } = world([g.plugin]);
    const turnId = await openTurn(service);
    const running = service.callTool(TENANT, turnId, "exec", { code: "await hold({}); return 'finished'" }, "req-1");
    await g.reached;
    service.cancelRequest("req-1");
    expect(cell(await within(running, "the cancelled exec"))).toMatchObject({ status: "failed", code: "aborted" });
    expect(g.seen.aborted).toBe(true);
    const t = await trajectoryOf(service, turnId);
    expect(t.calls).toMatchObject([{ tool: "exec", status: "failed", code: "aborted" }]);
    expect(t.limitsHit).toMatchObject([{ limit: "aborted", callId: t.calls[0]!.callId }]);

    service.cancelRequest("req-2");
    expect(cell(await service.callTool(TENANT, turnId, "exec", { code: "await hold({}); return 'finished'" }, "req-2"))).toMatchObject({
      status: "failed",
      code: "aborted",
    });
    expect(g.seen.calls).toBe(1);
    // Another request is not affected.
    expect(cell(await service.callTool(TENANT, turnId, "exec", { code: "return 5" }, "req-3"))).toMatchObject({ status: "completed", value: 5 });
  });

  it("the call registry's running() is empty once calls end, however they ended", async () => {
    const g = gate();
    const { service } = world([demoPlugin, g.plugin]);
    const turnId = await openTurn(service, { clientTools: [{ name: "ask" }] });
    expect(service.calls.running()).toEqual({});
    const running = service.callTool(TENANT, turnId, "exec", { code: "await hold({}); return 'opened'" });
    await g.reached;
    expect(service.calls.running()).toEqual({ [turnId]: 1 });
    expect(service.calls.idle).toBe(false);
    g.open("go");
    expect(cell(await within(running, "the released exec"))).toMatchObject({ status: "completed", value: "opened" });
    const parked = cell(await service.callTool(TENANT, turnId, "exec", { code: "return await ask({})" }));
    if (parked.status !== "waiting") throw new Error("expected waiting");
    await service.clientResult(TENANT, turnId, { callId: parked.pendingToolCalls![0]!.callId, value: 1 });
    await service.callTool(TENANT, turnId, "wait", { runId: parked.runId });
    await service.callTool(TENANT, turnId, "exec", { code: "throw new Error('boom')" });
    await service.callTool(TENANT, turnId, "no_such_tool", {});
    expect(service.calls.running()).toEqual({});
    expect(service.calls.idle).toBe(true);
  });

  it("a host call that outlasts the cell's deadline parks the run; its result, arriving while parked, is delivered at the wait", async () => {
    const g = gate();
    const { service, ports } = world([g.plugin]);
    const turnId = await openTurn(service, { agentId: "park" });
    const running = service.callTool(TENANT, turnId, "exec", { code: "return 'got ' + await hold({})" });
    await g.reached;
    ports.clock.advance(301);
    const parked = cell(await within(running, "the exec past its deadline"));
    if (parked.status !== "waiting") throw new Error(`expected waiting, got ${parked.status}`);
    expect(parked).toMatchObject({ reason: "pending_tools", pendingToolCalls: [{ tool: "hold" }] });
    // The host call still runs, untracked by the registry: the outer call ended.
    expect(service.calls.running()).toEqual({});
    g.open("late");
    await within(
      (async () => {
        while (ports.snapshots.stored.size === 0) await new Promise((r) => setTimeout(r, 5));
      })(),
      "the parked run's stored result",
    );
    expect(cell(await service.callTool(TENANT, turnId, "wait", { runId: parked.runId }))).toMatchObject({ status: "completed", value: "got late" });
    expect((await trajectoryOf(service, turnId)).calls[0]!.nested).toMatchObject([{ tool: "hold", status: "ok" }]);
  });

  it("deleting a turn cancels the host work its parked run still had running", async () => {
    const g = gate();
    const { service, ports } = world([g.plugin]);
    const turnId = await openTurn(service, { agentId: "park" });
    const running = service.callTool(TENANT, turnId, "exec", { code: "return await hold({})" });
    await g.reached;
    ports.clock.advance(301);
    expect(cell(await within(running, "the exec past its deadline")).status).toBe("waiting");
    expect(g.seen.aborted).toBe(false);
    await service.deleteTurn(TENANT, turnId);
    expect(g.seen.aborted).toBe(true);
    expect(ports.snapshots.count()).toBe(0);
  });

  it("a run the quota cannot hold is refused as snapshot_limit_exceeded, nothing parked; a client result it cannot hold is quota_exceeded and stays answerable", async () => {
    const { service, ports } = world();
    const turnId = await openTurn(service, { clientTools: [{ name: "ask" }] });
    const parked = cell(await service.callTool(TENANT, turnId, "exec", { code: "return await ask({})" }));
    if (parked.status !== "waiting") throw new Error("expected waiting");
    const callId = parked.pendingToolCalls![0]!.callId;

    ports.quota.maxStoredBytes = ports.quota.usage().bytes + 1_000;
    const refused = cell(await service.callTool(TENANT, turnId, "exec", { code: "await yield_control(); return 1" }));
    expect(refused).toMatchObject({ status: "failed", code: "snapshot_limit_exceeded", error: expect.stringContaining("session storage is full") });
    expect(ports.snapshots.count()).toBe(1);
    expect(ports.quota.usage().bytes).toBeLessThanOrEqual(ports.quota.maxStoredBytes);

    expect(await service.clientResult(TENANT, turnId, { callId, value: "x".repeat(2_000) })).toMatchObject({ ok: false, reason: "quota_exceeded" });
    expect(ports.turns.wasDelivered(turnId, callId)).toBe(false);
    ports.quota.maxStoredBytes = Number.POSITIVE_INFINITY;
    expect(await service.clientResult(TENANT, turnId, { callId, value: "fits now" })).toMatchObject({ ok: true });
    expect(cell(await service.callTool(TENANT, turnId, "wait", { runId: parked.runId }))).toMatchObject({ status: "completed", value: "fits now" });
  });

  it("a Tool Search tool_call of a client tool hands out one pending call without parking; its clientResult answers it once", async () => {
    const { service, ports } = world();
    const opened = await service.openTurn(TENANT, SESSION, { agentId: "searchtools", clientTools: [{ name: "ask" }] });
    if (!opened.ok) throw new Error(opened.message);
    expect(opened.body).toMatchObject({ codeModeEngaged: false, toolSearchEngaged: true, toolSearchMode: "tools" });
    const turnId = opened.body.turnId;
    const handed = cell(await service.callTool(TENANT, turnId, "tool_call", { id: "client:ask", args: { q: 1 } }));
    expect(handed).toMatchObject({ status: "waiting", pendingToolCalls: [{ tool: "ask", input: { q: 1 } }] });
    expect(handed).not.toHaveProperty("runId");
    expect(ports.snapshots.count()).toBe(0);
    expect(ports.toolCallClients.count(turnId)).toBe(1);
    const callId = (handed as { pendingToolCalls: Array<{ callId: string }> }).pendingToolCalls[0]!.callId;

    expect(await service.clientResult(TENANT, turnId, { callId, value: "Ada" })).toEqual({
      ok: true,
      body: { accepted: true, result: { status: "completed", value: "Ada" } },
    });
    expect(ports.toolCallClients.count(turnId)).toBe(0);
    expect(await service.clientResult(TENANT, turnId, { callId, value: "again" })).toMatchObject({ ok: false, reason: "conflict" });
    const t = await trajectoryOf(service, turnId);
    expect(t.calls).toMatchObject([{ tool: "tool_call", status: "waiting", nested: [{ invocationId: callId, tool: "ask", status: "ok" }] }]);
  });

  it("a new incarnation over the same storage records the call its predecessor left open as lost (session_reset)", async () => {
    const g = gate();
    const { service, ports } = world([g.plugin]);
    const turnId = await openTurn(service);
    const running = service.callTool(TENANT, turnId, "exec", { code: "await hold({}); return 1" }, "req-old");
    await g.reached;
    expect(ports.transcript.openCalls()).toMatchObject([{ turnId, tool: "exec" }]);

    const next = new TurnService([g.plugin], ports.wired);
    next.recover([]);
    expect(ports.transcript.openCalls()).toEqual([]);
    const t = await next.trajectory(TENANT, turnId);
    if (!t.ok) throw new Error(t.message);
    expect(t.body.calls).toMatchObject([{ tool: "exec", status: "lost", code: "session_reset" }]);
    expect(t.body.limitsHit).toMatchObject([{ limit: "session_reset", callId: t.body.calls[0]!.callId }]);
    // The new incarnation runs cells on the same turn.
    expect(cell(await next.callTool(TENANT, turnId, "exec", { code: "return 2" }))).toMatchObject({ status: "completed", value: 2 });

    // (The old instance is gone in production; here it is stopped so nothing is left running.)
    service.cancelRequest("req-old");
    expect(cell(await within(running, "the old instance's exec"))).toMatchObject({ code: "aborted" });
  });

  it("an approval-gated tool waits for the operator: listed, decided once, then the cell completes; a rule that denies fails the call closed", async () => {
    const { service, ports } = world();
    const turnId = await openTurn(service, { agentId: "approve" });
    const running = service.callTool(TENANT, turnId, "exec", { code: "return await notes_write({ key: 'k', text: 'v' })" });
    const [pending] = await ports.approvals.untilPending(1);
    const listed = await service.listApprovals(TENANT);
    expect(listed).toMatchObject({ ok: true, body: [{ approvalId: pending!.approvalId, turnId, tool: "notes_write" }] });
    expect(await service.listApprovals("tenant-b")).toEqual({ ok: true, body: [] });
    expect(await service.decideApproval("tenant-b", pending!.approvalId, { decision: "allow" })).toMatchObject({ ok: false, reason: "not_found" });
    expect(await service.decideApproval(TENANT, pending!.approvalId, { decision: "allow" })).toEqual({
      ok: true,
      body: { approvalId: pending!.approvalId, decision: "allow" },
    });
    expect(cell(await within(running, "the approved exec"))).toMatchObject({ status: "completed", value: { key: "k", bytes: 1 } });
    expect(await ports.kv.get("note:k")).toBe("v");
    expect(await service.decideApproval(TENANT, pending!.approvalId, { decision: "deny" })).toMatchObject({ ok: false, reason: "conflict" });
    expect(await service.listApprovals(TENANT)).toEqual({ ok: true, body: [] });

    ports.approvals.rule = (req) => (req.tool === "notes_write" ? { decision: "deny", reason: "not today" } : undefined);
    const denied = cell(await service.callTool(TENANT, turnId, "exec", { code: "return await notes_write({ key: 'k2', text: 'w' })" }));
    expect(denied).toMatchObject({ status: "failed" });
    expect(await ports.kv.get("note:k2")).toBeUndefined();
    expect(ports.approvals.asked.map((a) => a.tool)).toEqual(["notes_write", "notes_write"]);
    const t = await trajectoryOf(service, turnId);
    expect(t.calls[1]!.nested).toMatchObject([{ tool: "notes_write", status: "error" }]);
  });

  it("the alarm drops a parked run past its TTL and puts the expiry in the trajectory; the run cannot be resumed", async () => {
    const { service, ports } = world();
    const turnId = await openTurn(service);
    const parked = cell(await service.callTool(TENANT, turnId, "exec", { code: "await yield_control(); return 1" }));
    if (parked.status !== "waiting") throw new Error("expected waiting");
    ports.clock.advance(899_000);
    await ports.alarm.fire();
    expect(ports.snapshots.count()).toBe(1);
    ports.clock.advance(2_000);
    await ports.alarm.fire();
    expect(ports.snapshots.count()).toBe(0);
    expect((await trajectoryOf(service, turnId)).snapshots).toMatchObject([
      { event: "parked", runId: parked.runId },
      { event: "expired", runId: parked.runId },
    ]);
    expect(cell(await service.callTool(TENANT, turnId, "wait", { runId: parked.runId }))).toMatchObject({ status: "failed", error: RUN_UNAVAILABLE });
  });

  it("idle expiry at the alarm deletes an idle turn, then the idle session with its tool data", async () => {
    const { service, ports } = world([demoPlugin], { limits: { turnIdleSeconds: 60, sessionIdleSeconds: 600 } });
    const idle = await openTurn(service);
    const busy = await openTurn(service);
    expect(cell(await service.callTool(TENANT, busy, "exec", { code: "return await notes_write({ key: 'n', text: 'kept' })" }))).toMatchObject({
      status: "completed",
    });
    ports.clock.advance(40_000);
    await service.callTool(TENANT, busy, "exec", { code: "return 1" });
    ports.clock.advance(30_000);
    await ports.alarm.fire();
    expect(ports.turns.ids()).toEqual([busy]);
    expect(await service.trajectory(TENANT, idle)).toMatchObject({ ok: false, reason: "not_found" });
    expect(await ports.kv.get("note:n")).toBe("kept");
    expect(ports.alarm.at).toBeGreaterThan(ports.clock.now());

    ports.clock.advance(700_000);
    await ports.alarm.fire();
    expect(ports.sessionStorage.ready).toBe(false);
    expect(ports.sessionStorage.wipes).toBe(1);
    expect(ports.kv.values.size).toBe(0);
    expect(ports.alarm.at).toBeUndefined();
    expect(await service.deleteSession()).toMatchObject({ ok: false, reason: "not_found" });
  });

  it("deleting the session wipes everything it stored; the next turn starts a new session", async () => {
    const { service, ports } = world();
    const turnId = await openTurn(service);
    await service.callTool(TENANT, turnId, "exec", { code: "await notes_write({ key: 'a', text: 'b' }); await yield_control(); return 1" });
    expect(ports.snapshots.count()).toBe(1);
    expect(await service.deleteSession()).toEqual({ ok: true, body: { deleted: true } });
    expect(ports.sessionStorage.ready).toBe(false);
    expect(ports.snapshots.count()).toBe(0);
    expect(ports.kv.values.size).toBe(0);
    expect(ports.quota.usage()).toEqual({ turns: 0, bytes: 0 });
    expect(await service.listApprovals(TENANT)).toMatchObject({ ok: false, reason: "not_found" });
    expect(await service.callTool(TENANT, turnId, "exec", { code: "return 1" })).toMatchObject({ ok: false, reason: "not_found" });
    const next = await openTurn(service);
    expect(ports.turns.ids()).toEqual([next]);
    expect(cell(await service.callTool(TENANT, next, "exec", { code: "return await notes_read({ key: 'a' })" }))).toMatchObject({
      status: "completed",
      value: [],
    });
  });
});
