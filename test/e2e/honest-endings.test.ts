import { abortAllDurableObjects, SELF } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { readEvents, type ChatEvent } from "../../src/agent";
import { MAX_TOKEN_COUNT } from "../../src/limits";
import { api, exec, expectHealthy, openTurn, sessionId, sessionProbe, sessionStub, sleep } from "./helpers";
import { chat, parseSse, requests, script, toolResults } from "./chat-helpers";
import { decide, pendingApprovals, startWait } from "./approval-helpers";

// Honest endings and records (issue 20), through HTTP → session object → VM with the fake provider:
// a turn deleted under its /chat call ends `aborted`, calls answered without running are on record,
// and usage a provider sends with the wrong type counts 0.

const MODEL = "fakeoai/gpt-fake";
const user = (marker: string, text = "go") => [{ role: "user", content: `${marker} ${text}` }];
const trajectory = (session: string, turnId: string) => api("GET", `/v1/sessions/${session}/turns/${turnId}/trajectory`);

/** A /chat call left running (a JSON answer only comes at the end), so a test can act mid-loop. */
async function startChat(session: string, body: unknown, sse: boolean): Promise<{ status: number; text: string }> {
  const res = await SELF.fetch(`http://gateway/v1/sessions/${session}/chat`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer test-token-a", ...(sse ? { accept: "text/event-stream" } : {}) },
    body: JSON.stringify(body),
  });
  return { status: res.status, text: await res.text() };
}

/** The single turn of a session, once /chat opened it (bounded polling). */
async function openedTurn(session: string): Promise<string> {
  for (let i = 0; i < 400; i++) {
    // No table yet: the session has stored nothing.
    const probe = sessionProbe(session);
    const opened = (await probe.storageRows("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'chat_turns'")).length > 0;
    const ids = opened ? await probe.storageRows<{ turn_id: string }>("SELECT turn_id FROM chat_turns") : [];
    if (ids.length > 0) return ids[0]!.turn_id;
    await sleep(10);
  }
  throw new Error("no /chat turn opened");
}

/** Until the turn's trajectory shows an outer call started (the cell is on its way). */
async function untilOuterCall(session: string, turnId: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    const t = await trajectory(session, turnId);
    if (t.status === 200 && t.json.calls.length > 0) return;
    await sleep(10);
  }
  throw new Error("no outer call started");
}

/** The /chat answer as one final outcome, whichever mode: `{ kind: "done" | "error", body }`. */
function outcome(sse: boolean, status: number, text: string) {
  if (!sse) {
    const json = JSON.parse(text);
    return { kind: status === 200 ? "done" : "error", body: json, events: [] as string[] };
  }
  const events = parseSse(text);
  const last = events.at(-1)!;
  return { kind: last.event, body: last.event === "done" ? last.data.answer : last.data, events: events.map((e) => e.event) };
}

describe.each([
  ["JSON", false],
  ["SSE", true],
])("deleting a turn or its session under /chat ends it aborted (%s)", (_mode, sse) => {
  const SLOW_CELL = { code: "await echo({ value: 1, delayMs: 8000 }); return 'ran'" };

  it("the turn deleted while /chat runs a cell: error aborted with stopReason aborted, no further model call", async () => {
    const session = sessionId();
    const s = await script([{ toolCalls: [{ id: "c1", name: "exec", input: SLOW_CELL }] }, { text: "all done" }]);
    const pending = startChat(session, { model: MODEL, messages: user(s.marker) }, sse);
    const turnId = await openedTurn(session);
    await untilOuterCall(session, turnId);
    expect((await api("DELETE", `/v1/sessions/${session}/turns/${turnId}`)).status).toBe(200);
    const done = await pending;
    const r = outcome(sse, done.status, done.text);
    expect(r.kind).toBe("error");
    expect(r.body).toMatchObject({ error: { code: "aborted" }, turnId, meta: { stopReason: "aborted" } });
    expect(r.events).not.toContain("done");
    // Nothing ran after the deletion: the model was not asked again, and the turn stays gone.
    expect(await requests(s.id)).toHaveLength(1);
    expect((await trajectory(session, turnId)).status).toBe(404);
    await expectHealthy(session, await openTurn(session));
  });

  it("the session deleted while /chat runs a cell: error aborted, nothing re-created", async () => {
    const session = sessionId();
    const s = await script([{ toolCalls: [{ id: "c1", name: "exec", input: SLOW_CELL }] }, { text: "all done" }]);
    const pending = startChat(session, { model: MODEL, messages: user(s.marker) }, sse);
    const turnId = await openedTurn(session);
    await untilOuterCall(session, turnId);
    expect((await api("DELETE", `/v1/sessions/${session}`)).status).toBe(200);
    const done = await pending;
    const r = outcome(sse, done.status, done.text);
    expect(r.kind).toBe("error");
    expect(r.body).toMatchObject({ error: { code: "aborted" }, turnId, meta: { stopReason: "aborted" } });
    expect(await requests(s.id)).toHaveLength(1);
    expect((await api("GET", `/v1/sessions/${session}/approvals`)).status).toBe(404);
  });

  it("the turn deleted while a cell of /chat waits for an operator approval: error aborted, the gated tool never ran", async () => {
    const session = sessionId();
    const code = "await notes_write({ key: 'k', text: 'v' }); return 'written'";
    const s = await script([{ toolCalls: [{ id: "c1", name: "exec", input: { code } }] }, { text: "all done" }]);
    const pending = startChat(session, { model: MODEL, agentId: "approve", messages: user(s.marker) }, sse);
    const [approval] = await pendingApprovals(session);
    expect(approval).toMatchObject({ tool: "notes_write" });
    expect((await api("DELETE", `/v1/sessions/${session}/turns/${approval!.turnId}`)).status).toBe(200);
    const done = await pending;
    const r = outcome(sse, done.status, done.text);
    expect(r.kind).toBe("error");
    expect(r.body).toMatchObject({ error: { code: "aborted" }, turnId: approval!.turnId, meta: { stopReason: "aborted" } });
    expect(await requests(s.id)).toHaveLength(1);
    // The note was never written.
    const probe = await openTurn(session);
    const read = await api("POST", `/v1/sessions/${session}/turns/${probe}/tools/exec`, { code: "return await notes_read({ key: 'k' })" });
    expect(read.json).toMatchObject({ status: "completed", value: [] });
  });

  it("the session deleted while a cell of /chat waits for an operator approval: error aborted", async () => {
    const session = sessionId();
    const code = "await notes_write({ key: 'k', text: 'v' }); return 'written'";
    const s = await script([{ toolCalls: [{ id: "c1", name: "exec", input: { code } }] }, { text: "all done" }]);
    const pending = startChat(session, { model: MODEL, agentId: "approve", messages: user(s.marker) }, sse);
    const [approval] = await pendingApprovals(session);
    expect((await api("DELETE", `/v1/sessions/${session}`)).status).toBe(200);
    const done = await pending;
    const r = outcome(sse, done.status, done.text);
    expect(r.kind).toBe("error");
    expect(r.body).toMatchObject({ error: { code: "aborted" }, turnId: approval!.turnId, meta: { stopReason: "aborted" } });
    expect(await requests(s.id)).toHaveLength(1);
  });
});

describe("calls answered without running are on record in the trajectory as in toolSummary", () => {
  it("arguments that are not JSON: a not_run call (invalid_arguments) beside the one toolSummary counts", async () => {
    const session = sessionId();
    const s = await script([{ toolCalls: [{ id: "bad", name: "exec", input: "{not json" }] }, { text: "sorry" }]);
    const r = await chat(session, { model: MODEL, messages: user(s.marker) });
    expect(r.json).toMatchObject({ status: "completed", meta: { toolSummary: { calls: 1, tools: ["exec"], failures: 1 } } });
    const t = await trajectory(session, r.json.turnId);
    expect(t.json.calls).toEqual([
      expect.objectContaining({ callId: "bad", tool: "exec", via: "chat", status: "not_run", code: "invalid_arguments", durationMs: 0 }),
    ]);
    expect(t.json.calls).toHaveLength(t.json.meta.toolSummary.calls);
  });

  it("the transcript bound: the round's later calls are on record as not_run (transcript_limit), each counted once", async () => {
    const session = sessionId();
    // One round of 30 cells, each storing a 64 KB result after 960 KB of messages: the bound falls inside the round.
    const calls = Array.from({ length: 30 }, (_, i) => ({ id: `r${i}`, name: "exec", input: { code: "return 'v'.repeat(64000)" } }));
    const s = await script([{ toolCalls: calls }, { text: "never asked" }]);
    const filler = Array.from({ length: 4 }, (_, i) => ({ role: "user", content: (i === 0 ? s.marker : "") + "u".repeat(240_000) }));
    const r = await chat(session, { model: MODEL, messages: filler, maxAssistantTurns: 5 });
    expect(r.json).toMatchObject({ status: "completed", meta: { stopReason: "transcript_limit", toolSummary: { calls: 30 } } });
    const t = await trajectory(session, r.json.turnId);
    expect(t.json.calls.map((c: any) => c.callId)).toEqual(calls.map((c) => c.id));
    const ran = t.json.calls.filter((c: any) => c.status === "completed");
    const notRun = t.json.calls.filter((c: any) => c.status === "not_run");
    expect(ran.length).toBeGreaterThan(10);
    expect(ran.length + notRun.length).toBe(30);
    expect(notRun.every((c: any) => c.code === "transcript_limit")).toBe(true);
    expect(r.json.meta.toolSummary.failures).toBe(notRun.length);
  });

  it("a /chat call cancelled while a cell runs: the cell ends aborted, the round's next call is not_run (cancelled), the turn stops aborted", async () => {
    const session = sessionId();
    const s = await script([
      {
        toolCalls: [
          { id: "slow", name: "exec", input: { code: "await echo({ value: 1, delayMs: 8000 }); return 'ran'" } },
          { id: "next", name: "exec", input: { code: "await notes_write({ key: 'next', text: 'x' }); return 'ran'" } },
        ],
      },
      { text: "continued" },
    ]);
    const stub = sessionStub(session) as any;
    const stream: ReadableStream<Uint8Array> = await stub.chat(
      "tenant-a",
      session,
      { model: MODEL, messages: user(s.marker), maxAssistantTurns: 4 },
      "req-cancel",
    );
    const events: ChatEvent[] = [];
    const reading = (async () => {
      for await (const e of readEvents(stream)) events.push(e);
    })();
    const turnId = await openedTurn(session);
    await untilOuterCall(session, turnId);
    await stub.cancelRequest("req-cancel");
    await reading;
    expect(events.at(-1)).toMatchObject({ type: "error", error: { code: "aborted" }, turnId, meta: { stopReason: "aborted" } });
    expect(events.map((e) => e.type)).not.toContain("done");
    const t = await trajectory(session, turnId);
    expect(t.json).toMatchObject({ status: "stopped", meta: { stopReason: "aborted", toolSummary: { calls: 2, failures: 2 } } });
    expect(t.json.calls).toEqual([
      expect.objectContaining({ callId: "slow", status: "failed", code: "aborted" }),
      expect.objectContaining({ callId: "next", status: "not_run", code: "cancelled" }),
    ]);
    expect(await requests(s.id)).toHaveLength(1);
    // The second cell never ran; the turn continues with both answers, nothing to repair.
    expect(await exec(session, await openTurn(session), "return await notes_read({ key: 'next' })")).toMatchObject({ value: [] });
    const again = await chat(session, { turnId });
    expect(again.json).toMatchObject({ status: "completed", message: { content: "continued" }, meta: { toolSummary: { calls: 2 } } });
    expect(toolResults((await requests(s.id))[1]!).map((r) => r.id)).toEqual(["slow", "next"]);
  });

  it("a reset mid-round: the continuation answers the calls that never started and puts them on record (not_run, turn_stopped)", async () => {
    const session = sessionId();
    const s = await script([
      {
        toolCalls: [
          { id: "cut", name: "exec", input: { code: "await echo({ value: 1, delayMs: 8000 }); return 'ran'" } },
          { id: "never", name: "exec", input: { code: "return 'ran'" } },
        ],
      },
      { text: "after the reset" },
    ]);
    const pending = chat(session, { model: MODEL, messages: user(s.marker) });
    const turnId = await openedTurn(session);
    await untilOuterCall(session, turnId);
    await abortAllDurableObjects();
    await pending;
    const again = await chat(session, { turnId });
    expect(again.json).toMatchObject({ status: "completed", meta: { toolSummary: { calls: 2, failures: 2 } } });
    const t = await trajectory(session, turnId);
    expect(t.json.calls).toEqual([
      expect.objectContaining({ callId: "cut", status: "lost", code: "session_reset" }),
      expect.objectContaining({ callId: "never", status: "not_run", code: "turn_stopped" }),
    ]);
  });
});

describe("a wait refused by policy resumed nothing, and its record says so", () => {
  it("a denied wait: no resumed or dropped snapshot event, the run stays parked and a later allowed wait resumes it", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "approvewait" });
    const parked = await exec(session, turnId, "let n = 1; await yield_control(); return n + 1");
    expect(parked.status).toBe("waiting");
    const refused = startWait(session, turnId, parked.runId);
    const [p] = await pendingApprovals(session);
    expect(p).toMatchObject({ tool: "wait" });
    await decide(session, p!.approvalId, "deny", "not now");
    expect((await refused).json).toMatchObject({ status: "failed", error: expect.stringContaining("resumed nothing; the run stays parked") });
    let t = await trajectory(session, turnId);
    expect(t.json.snapshots.map((e: any) => e.event)).toEqual(["parked"]);
    expect(t.json.calls[1]).toMatchObject({ tool: "wait", status: "failed", decision: "denied", runId: parked.runId });

    const allowed = startWait(session, turnId, parked.runId);
    const [q] = await pendingApprovals(session);
    await decide(session, q!.approvalId, "allow");
    expect((await allowed).json).toMatchObject({ status: "completed", value: 2 });
    t = await trajectory(session, turnId);
    expect(t.json.snapshots.map((e: any) => e.event)).toEqual(["parked", "resumed", "settled"]);
  });
});

describe("token counts a provider sends with the wrong type count 0, and the turn completes", () => {
  const ZERO = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
  type Case = [string, { openai: string; anthropicStart: string; anthropicDelta: string }, Record<string, number>];
  const cases: Case[] = [
    [
      "numbers as strings",
      {
        openai: '{"prompt_tokens":"12","completion_tokens":"3","total_tokens":"15"}',
        anthropicStart: '{"input_tokens":"12"}',
        anthropicDelta: '{"output_tokens":"3"}',
      },
      ZERO,
    ],
    [
      "negative, NaN-ish and missing counts",
      {
        openai: '{"prompt_tokens":-5,"completion_tokens":"NaN","total_tokens":null,"prompt_tokens_details":{"cached_tokens":-1}}',
        anthropicStart: '{"input_tokens":null,"cache_read_input_tokens":"NaN","cache_creation_input_tokens":-4}',
        anthropicDelta: '{"output_tokens":1.5}',
      },
      ZERO,
    ],
    [
      "objects and arrays where counts go, usage parts of the wrong shape",
      {
        openai: '{"prompt_tokens":{"n":1},"completion_tokens":[1],"prompt_tokens_details":"lots","completion_tokens_details":[]}',
        anthropicStart: '{"input_tokens":{"n":1},"service_tier":7,"cache_read_input_tokens":[2]}',
        anthropicDelta: '{"output_tokens":{},"output_tokens_details":"x","iterations":[{"type":"bogus"}]}',
      },
      ZERO,
    ],
    ["usage that is not an object", { openai: '"lots"', anthropicStart: '"lots"', anthropicDelta: "[1,2]" }, ZERO],
    [
      "huge counts (past double range, past 2^53−1) are clamped; good counts beside bad ones are kept",
      {
        openai: '{"prompt_tokens":1e400,"completion_tokens":99999999999999999999999}',
        anthropicStart: '{"input_tokens":1e400,"cache_read_input_tokens":7}',
        anthropicDelta: '{"output_tokens":99999999999999999999999,"cache_read_input_tokens":"7"}',
      },
      { inputTokens: MAX_TOKEN_COUNT, outputTokens: MAX_TOKEN_COUNT },
    ],
  ];

  describe.each(["fakeoai/gpt-fake", "fakeant/claude-fake"])("%s, streamed", (model) => {
    it.each(cases)("%s", async (_name, rawUsage, usage) => {
      const session = sessionId();
      const s = await script([{ text: "fine", rawUsage }]);
      const r = await chat(session, { model, messages: user(s.marker) });
      expect(r.status, r.text).toBe(200);
      expect(r.json).toMatchObject({ status: "completed", message: { content: "fine" }, meta: { stopReason: "final", usage } });
      const t = await trajectory(session, r.json.turnId);
      expect(t.json.meta.usage).toEqual(r.json.meta.usage);
      expect(t.json.modelCalls).toEqual([expect.objectContaining({ usage: r.json.meta.usage })]);
      expect(Number.isFinite(r.json.meta.costUsd)).toBe(true);
      expect(r.json.meta.costUsd).toBeGreaterThanOrEqual(0);
    });
  });
});

describe("$api(…, { schema: true }) always answers the declared McpApiHeader shape, bounded in its own terms", () => {
  const HOSTILE = inject("mcpHostileUrl");

  async function hugeTurn(agentId?: string) {
    const session = sessionId();
    const opened = await api("POST", `/v1/sessions/${session}/turns`, {
      ...(agentId ? { agentId } : {}),
      mcpServers: { hostile: { url: `${HOSTILE}/hugeschema/200/mcp` } },
    });
    expect(opened.status, JSON.stringify(opened.json).slice(0, 300)).toBe(201);
    expect(opened.json.mcpServers).toEqual([expect.objectContaining({ name: "hostile", tools: 2 })]);
    return { session, turnId: opened.json.turnId as string };
  }

  /**
   * The header as the cell sees it, summarized in the cell (the whole may be as large as the
   * cell's own result bound): its keys, tools (a schema only when small or a marker), the end of
   * its header text, `omitted`, and its UTF-8 JSON size.
   */
  async function header(session: string, turnId: string, call: string, server = "hostile") {
    const code = `
      const h = await ${call};
      const text = JSON.stringify(h);
      let bytes = 0;
      for (const ch of text) { const c = ch.codePointAt(0); bytes += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4; }
      const small = (s) => (s === undefined ? undefined : JSON.stringify(s).length <= 200 ? s : "large");
      return {
        keys: Object.keys(h).sort(),
        server: h.server,
        headerHead: h.header.slice(0, 200),
        headerTail: h.header.slice(-120),
        tools: h.tools.map((t) => ({ name: t.name, mcpName: t.mcpName, inputSchema: small(t.inputSchema) })),
        omitted: h.omitted,
        bytes,
      };`;
    const r = await exec(session, turnId, code);
    expect(r.status, JSON.stringify(r).slice(0, 300)).toBe("completed");
    const h = r.value;
    expect(h.keys).not.toContain("truncated");
    expect(h.keys).not.toContain("prefix");
    expect(h).toMatchObject({ server, headerHead: expect.any(String) });
    expect(h.keys).toEqual(expect.arrayContaining(["server", "header", "tools"]));
    return { h, bytes: h.bytes as number };
  }

  it("one tool whose schema is over maxOutputBytes: the schema is replaced by { omitted: true, bytes }, the header kept", async () => {
    const { session, turnId } = await hugeTurn();
    const { h, bytes } = await header(session, turnId, 'MCP.hostile.$api("huge", { schema: true })');
    expect(bytes).toBeLessThanOrEqual(65_536);
    expect(h.tools).toEqual([{ name: "huge", mcpName: "huge", inputSchema: { omitted: true, bytes: expect.any(Number) } }]);
    expect(h.tools[0].inputSchema.bytes).toBeGreaterThan(200_000);
    expect(h.omitted).toEqual({ schemas: 1 });
    expect(h.headerTail).toContain("function huge(");
    // A small tool's schema still comes whole, and without the option nothing is omitted.
    const small = await header(session, turnId, 'MCP.hostile.$api("small", { schema: true })');
    expect(small.h.tools[0].inputSchema).toEqual({ type: "object", properties: { q: { type: "string" } } });
    expect(small.h.keys).not.toContain("omitted");
  });

  it("the whole namespace with schemas: only the schema that does not fit is left out", async () => {
    const { session, turnId } = await hugeTurn();
    const { h, bytes } = await header(session, turnId, "MCP.hostile.$api(undefined, { schema: true })");
    expect(bytes).toBeLessThanOrEqual(65_536);
    expect(h.tools.map((t: any) => t.name)).toEqual(["small", "huge"]);
    expect(h.tools[0].inputSchema).toEqual({ type: "object", properties: { q: { type: "string" } } });
    expect(h.tools[1].inputSchema).toMatchObject({ omitted: true });
    expect(h.omitted).toEqual({ schemas: 1 });
  });

  it("a maxOutputBytes too small for the header itself (2048): the header text is cut with a note, still the shape", async () => {
    const session = sessionId();
    const opened = await api("POST", `/v1/sessions/${session}/turns`, {
      agentId: "tight",
      mcpServers: { hostile: { url: `${HOSTILE}/hugeschema/200/mcp` }, wide: { url: `${HOSTILE}/wide/100/mcp` } },
    });
    expect(opened.status, JSON.stringify(opened.json).slice(0, 300)).toBe(201);
    const turnId = opened.json.turnId as string;
    const huge = await header(session, turnId, 'MCP.hostile.$api("huge", { schema: true })');
    expect(huge.bytes).toBeLessThanOrEqual(2048);
    expect(huge.h.omitted).toMatchObject({ schemas: 1 });
    expect(huge.h.tools).toEqual([{ name: "huge", mcpName: "huge", inputSchema: { omitted: true, bytes: expect.any(Number) } }]);
    for (const call of ["MCP.wide.$api()", "MCP.wide.$api(undefined, { schema: true })"]) {
      const { h, bytes } = await header(session, turnId, call, "wide");
      expect(bytes).toBeLessThanOrEqual(2048);
      expect(h.omitted).toMatchObject({ headerChars: expect.any(Number) });
      expect(h.headerHead.startsWith("declare namespace MCP.wide {")).toBe(true);
      expect(h.headerTail).toMatch(/\/\/ …\[\d+ more characters: the header is over maxOutputBytes\]\n$/);
      // The tool list stays whole while the header text can give way (13 short names).
      expect(h.tools.length + (h.omitted.tools ?? 0)).toBe(13);
      expect(h.tools[0]).toMatchObject({ name: "wide0", mcpName: "wide_0" });
    }
  });
});
