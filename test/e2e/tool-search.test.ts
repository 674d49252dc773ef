import { describe, expect, it } from "vitest";
import { api, sessionId, sessionProbe } from "./helpers";
import { setSessionEnv, setVmFault } from "./session-controls";
import { linesSince, mark, recordsSince } from "../support/log-capture";

/**
 * Tool Search (seed 004) through HTTP → session Durable Object → QuickJS: the compact surface
 * for turns where code mode is off, in both modes, with the same catalog, executor and limits.
 */

async function openTurn(body: Record<string, unknown>) {
  const session = sessionId();
  const r = await api("POST", `/v1/sessions/${session}/turns`, body);
  expect(r.status, JSON.stringify(r.json)).toBe(201);
  return { session, turnId: r.json.turnId as string, turn: r.json };
}

async function call(session: string, turnId: string, tool: string, input: unknown) {
  const r = await api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/${tool}`, input);
  return r;
}

const DEMO = ["shipping_list", "shipping_get", "notes_write", "notes_read", "echo"];

describe("Tool Search surfaces", () => {
  it('mode "code" (the default) sends one tool_search_code tool and no catalog schema; the turn reports it', async () => {
    const { turn } = await openTurn({ agentId: "search" });
    expect(turn).toMatchObject({ codeModeEngaged: false, toolSearchEngaged: true, toolSearchMode: "code" });
    expect(turn.tools.map((t: any) => t.name)).toEqual(["tool_search_code"]);
    const sent = JSON.stringify(turn.tools);
    for (const name of DEMO) expect(sent).not.toContain(name);
    expect(turn.tools[0].parameters).toEqual({
      type: "object",
      properties: { code: { type: "string", description: expect.any(String) } },
      required: ["code"],
      additionalProperties: false,
    });
    expect(turn.tools[0].description).toContain("openclaw.tools.search");
    expect(turn.telemetry).toMatchObject({
      catalogSize: 5,
      catalogSources: { openclaw: 5, mcp: 0, client: 0 },
      controlTools: ["tool_search_code"],
      toolSearch: { mode: "code" },
      surface: { kind: "tool_search_code", tools: 1, bytes: new TextEncoder().encode(sent).length },
      calledTools: [],
    });
  });

  it('mode "tools" sends tool_search, tool_describe and tool_call with flat schemas', async () => {
    const { turn } = await openTurn({ agentId: "searchtools" });
    expect(turn).toMatchObject({ codeModeEngaged: false, toolSearchEngaged: true, toolSearchMode: "tools" });
    expect(turn.tools.map((t: any) => t.name)).toEqual(["tool_search", "tool_describe", "tool_call"]);
    expect(JSON.stringify(turn.tools)).not.toMatch(/oneOf|anyOf|shipping_list/);
    expect(turn.tools[0].parameters.properties.limit.maximum).toBe(3);
  });

  it("client tools join the searchable catalog but not the surface; direct-only tools would stay beside the controls", async () => {
    const { session, turnId, turn } = await openTurn({
      agentId: "search",
      clientTools: [{ name: "ask_user", description: "Ask the human user a question" }],
    });
    expect(turn.tools.map((t: any) => t.name)).toEqual(["tool_search_code"]);
    expect(turn.telemetry.catalogSources).toEqual({ openclaw: 5, mcp: 0, client: 1 });
    // Calling it hands it to the caller: test/e2e/tool-search-client-tools.test.ts.
    const r = await call(session, turnId, "tool_search_code", { code: 'return (await openclaw.tools.search("ask the user a question"))[0];' });
    expect(r.json.value).toEqual({ id: "client:ask_user", name: "ask_user", description: "Ask the human user a question", source: "client" });
  });

  it("hidden catalog tools are not callable by name on a Tool Search turn, nor are code-mode controls", async () => {
    const { session, turnId } = await openTurn({ agentId: "search" });
    for (const tool of ["shipping_list", "exec", "wait", "tool_search", "tool_call"])
      expect((await call(session, turnId, tool, {})).status, tool).toBe(404);
  });

  it("code mode engaged means no Tool Search tools, even with Tool Search configured", async () => {
    const { turn } = await openTurn({ agentId: "mixed", model: "openai/gpt-5.6" });
    expect(turn).toMatchObject({ codeModeEngaged: true, toolSearchEngaged: false });
    expect(turn.toolSearchMode).toBeUndefined();
    expect(turn.tools.map((t: any) => t.name)).toEqual(["exec", "wait"]);
    expect(turn.telemetry).toEqual({
      catalogSize: 5,
      catalogSources: { openclaw: 5, mcp: 0, client: 0 },
      counters: { search: 0, describe: 0, call: 0 },
      counterScope: expect.any(String),
      controlTools: ["exec", "wait"],
    });
  });
});

describe("tool_search_code runs its body in the QuickJS sandbox with openclaw.tools", () => {
  it("search → describe → call reaches the tool through the executor; counters and called tools are reported and persisted", async () => {
    const { session, turnId } = await openTurn({ agentId: "search" });
    const r = await call(session, turnId, "tool_search_code", {
      code: `
        const hits = await openclaw.tools.search("get one shipment by id", { limit: 3 });
        const tool = await openclaw.tools.describe(hits[0].id);
        console.log("using", tool.name);
        return { hits: hits.map((h) => h.id), schema: tool.inputSchema, got: await openclaw.tools.call(tool.id, { id: "SH-1002" }) };
      `,
    });
    expect(r.status).toBe(200);
    expect(r.json.status).toBe("completed");
    expect(r.json.value.hits[0]).toBe("plugin:demo:shipping_get");
    expect(r.json.value.hits.length).toBeLessThanOrEqual(3);
    expect(r.json.value.schema).toMatchObject({ type: "object", required: ["id"] });
    expect(r.json.value.got).toMatchObject({ id: "SH-1002" });
    expect(r.json.output).toEqual([{ type: "text", text: "using shipping_get" }]);
    expect(r.json.telemetry).toMatchObject({
      counters: { search: 1, describe: 1, call: 1 },
      controlTools: ["tool_search_code"],
      calledTools: [{ tool: "shipping_get", id: "plugin:demo:shipping_get", source: "openclaw", calls: 1 }],
    });
    // Persisted with the turn: a second call adds to the same counters.
    const again = await call(session, turnId, "tool_search_code", {
      code: 'return (await openclaw.tools.call("shipping_get", { id: "SH-1001" })).id',
    });
    expect(again.json).toMatchObject({ status: "completed", value: "SH-1001" });
    expect(again.json.telemetry.counters).toEqual({ search: 1, describe: 1, call: 2 });
    expect(again.json.telemetry.calledTools).toEqual([{ tool: "shipping_get", id: "plugin:demo:shipping_get", source: "openclaw", calls: 2 }]);
    const deleted = await api("DELETE", `/v1/sessions/${session}/turns/${turnId}`);
    expect(deleted.json.telemetry.counters).toEqual({ search: 1, describe: 1, call: 2 });
  });

  it("the guest sees only console and openclaw.tools: no tool globals, catalog, MCP, API, timers or output helpers", async () => {
    const { session, turnId } = await openTurn({ agentId: "search" });
    const names = [
      "shipping_list",
      "catalog",
      "MCP",
      "API",
      "namespaces",
      "setTimeout",
      "clearTimeout",
      "text",
      "json",
      "yield_control",
      "exec",
      "wait",
      "__codemode",
      "__cm_host",
    ];
    const r = await call(session, turnId, "tool_search_code", {
      code: `return { missing: ${JSON.stringify(names)}.filter((n) => typeof globalThis[n] === "undefined"), tools: Object.keys(openclaw.tools).sort(), console: typeof console.warn }`,
    });
    expect(r.json.value).toEqual({ missing: names, tools: ["call", "describe", "search"], console: "function" });
  });

  it("failures are catchable in the body and named: unknown ids, invalid input, a failing tool", async () => {
    const { session, turnId } = await openTurn({ agentId: "search" });
    const r = await call(session, turnId, "tool_search_code", {
      code: `
        const out = [];
        for (const f of [
          () => openclaw.tools.describe("plugin:demo:nope"),
          () => openclaw.tools.call("opaque-id-guess", {}),
          () => openclaw.tools.call("plugin:demo:shipping_get", { id: 7 }),
          () => openclaw.tools.call("plugin:demo:shipping_get", { id: "SH-404" }),
          () => openclaw.tools.search("x", { limit: "many" }),
        ]) { try { await f(); out.push("no error"); } catch (e) { out.push(e.message); } }
        return out;
      `,
    });
    expect(r.json.status).toBe("completed");
    const [describe, guess, invalid, failing, limit] = r.json.value;
    expect(describe).toBe('"plugin:demo:nope" is not a tool of this run; use an id from search results');
    expect(guess).toBe('"opaque-id-guess" is not a tool of this run; use an id from search results');
    expect(invalid).toContain("invalid input for shipping_get");
    expect(failing).toContain("SH-404");
    expect(limit).toBe("openclaw.tools.search limit must be a number");
  });

  it("invalid tool_search_code input is invalid_input, and the turn keeps working", async () => {
    const { session, turnId } = await openTurn({ agentId: "search" });
    for (const [input, message] of [
      [{}, "tool_search_code needs non-empty code (a JavaScript function body)"],
      [{ code: "return 1", language: "typescript" }, 'unknown tool_search_code field "language"; tool_search_code takes code'],
      [[], "tool_search_code input must be an object: { code }"],
    ] as const) {
      const r = await call(session, turnId, "tool_search_code", input);
      expect(r.status).toBe(200);
      expect(r.json).toMatchObject({ status: "failed", code: "invalid_input", error: message });
    }
    const syntax = await call(session, turnId, "tool_search_code", { code: "return (" });
    expect(syntax.json).toMatchObject({ status: "failed", code: "invalid_input" });
    expect((await call(session, turnId, "tool_search_code", { code: "return 40 + 2" })).json).toMatchObject({ status: "completed", value: 42 });
  });

  it("a body still waiting on a host tool at codeTimeoutMs fails with timeout and does not park (only client calls park it)", async () => {
    const { session, turnId } = await openTurn({ agentId: "searchfast" });
    const r = await call(session, turnId, "tool_search_code", { code: 'return await openclaw.tools.call("echo", { value: 1, delayMs: 5000 })' });
    expect(r.json).toMatchObject({
      status: "failed",
      code: "timeout",
      error: "tool_search_code did not finish within codeTimeoutMs (400); tool calls still running were cancelled",
    });
    expect(r.json.runId).toBeUndefined();
    const stored = await sessionProbe(session).parkedRunsOfTurn(turnId);
    expect(stored).toBe(0);
  });

  it("hostile bodies get exec's containment: CPU, memory, output, pending-call caps; the session stays healthy", async () => {
    const { session, turnId } = await openTurn({ agentId: "searchfast" });
    const cases: Array<[string, Record<string, unknown>]> = [
      ["for (;;) {}", { code: "timeout", error: expect.stringContaining("tool_search_code used up its CPU budget for codeTimeoutMs 400") }],
      ['new Array(1e9).join("x")', { code: "timeout" }],
      [
        'const a = []; for (;;) a.push("x".repeat(1e5) + a.length);',
        { error: expect.stringContaining("tool_search_code exceeded memoryLimitBytes") },
      ],
      [
        "await Promise.all(Array.from({ length: 40 }, () => openclaw.tools.call('echo', { value: 1 })))",
        { error: expect.stringContaining("too many pending tool calls: 40 requested, maxPendingToolCalls is 16") },
      ],
      ['for (let i = 0; i < 100000; i++) console.log("spam " + i); return 1', {}],
      ['return "x".repeat(1e6)', {}],
      ['return await import("node:fs")', { code: "invalid_input" }],
      ["Object.prototype.toJSON = () => { for (;;) {} }; return {}", { code: "timeout" }],
    ];
    for (const [code, expected] of cases) {
      const r = await call(session, turnId, "tool_search_code", { code });
      expect(r.status, code).toBe(200);
      if (code.startsWith("return") || code.startsWith("for (let i")) {
        // Values and output past maxOutputBytes are truncated with the seed's marker, never unbounded.
        expect(JSON.stringify(r.json).length, code).toBeLessThan(4096);
        continue;
      }
      expect(r.json, code).toMatchObject({ status: "failed", ...expected });
    }
    expect((await call(session, turnId, "tool_search_code", { code: "return 1" })).json).toMatchObject({ status: "completed", value: 1 });
  });
});

describe('Tool Search mode "tools": tool_search, tool_describe, tool_call', () => {
  it("search (default and clamped limits) → describe → call, each counted", async () => {
    const { session, turnId } = await openTurn({ agentId: "searchtools" });
    const search = await call(session, turnId, "tool_search", { query: "shipment" });
    expect(search.status).toBe(200);
    expect(search.json.status).toBe("completed");
    expect(search.json.value).toHaveLength(2); // searchDefaultLimit 2
    expect(search.json.value[0]).toEqual({
      id: expect.stringMatching(/^plugin:demo:shipping_/),
      name: expect.any(String),
      description: expect.any(String),
      source: "openclaw",
    });
    const clamped = await call(session, turnId, "tool_search", { query: "note shipment echo", limit: 50 });
    expect(clamped.json.value.length).toBeLessThanOrEqual(3); // maxSearchLimit 3
    const describe = await call(session, turnId, "tool_describe", { id: "plugin:demo:notes_write" });
    expect(describe.json.value).toMatchObject({ id: "plugin:demo:notes_write", name: "notes_write", inputSchema: { type: "object" } });
    const write = await call(session, turnId, "tool_call", { id: "plugin:demo:notes_write", args: { key: "k", text: "hello" } });
    expect(write.json.status).toBe("completed");
    const read = await call(session, turnId, "tool_call", { id: "notes_read", args: { key: "k" } });
    expect(JSON.stringify(read.json.value)).toContain("hello");
    expect(read.json.telemetry).toMatchObject({
      counters: { search: 2, describe: 1, call: 2 },
      controlTools: ["tool_search", "tool_describe", "tool_call"],
      calledTools: [
        { tool: "notes_write", id: "plugin:demo:notes_write", source: "openclaw", calls: 1 },
        { tool: "notes_read", id: "plugin:demo:notes_read", source: "openclaw", calls: 1 },
      ],
    });
  });

  it("bad input and unknown ids fail as data with clear messages", async () => {
    const { session, turnId } = await openTurn({ agentId: "searchtools" });
    const cases: Array<[string, unknown, string]> = [
      ["tool_search", {}, "tool_search query must be a string"],
      ["tool_search", { query: "x".repeat(2000) }, "tool_search query is longer than 1024 characters; describe the tool in a few words"],
      ["tool_search", { query: "x", limit: "3" }, "tool_search limit must be a number"],
      ["tool_search", { query: "x", extra: 1 }, 'unknown tool_search field "extra"; tool_search takes query, limit'],
      ["tool_describe", { id: "" }, "tool_describe id must be a tool id from tool_search"],
      ["tool_call", { id: "echo", args: [1] }, "tool_call args must be an object (the tool's input)"],
    ];
    for (const [tool, input, message] of cases) {
      const r = await call(session, turnId, tool, input);
      expect(r.json, `${tool} ${JSON.stringify(input)}`).toMatchObject({ status: "failed", code: "invalid_input", error: message });
    }
    const unknown = await call(session, turnId, "tool_call", { id: "plugin:demo:launch_missiles" });
    expect(unknown.json).toMatchObject({
      status: "failed",
      error: '"plugin:demo:launch_missiles" is not a tool of this run; use an id from search results',
    });
  });

  it("a denied tool is not found by search, not describable, not callable", async () => {
    const { session, turnId } = await openTurn({ agentId: "searchtools", deny: ["notes_write"] });
    const search = await call(session, turnId, "tool_search", { query: "save a text note", limit: 3 });
    expect(search.json.value.map((h: any) => h.name)).not.toContain("notes_write");
    expect((await call(session, turnId, "tool_describe", { id: "notes_write" })).json.status).toBe("failed");
    expect((await call(session, turnId, "tool_call", { id: "plugin:demo:notes_write", args: { key: "a", text: "b" } })).json.status).toBe("failed");
  });
});

describe("fallback and fail-closed", () => {
  it('mode "code" falls back to "tools" when the sandbox cannot start, before compaction, and says so', async () => {
    const session = sessionId();
    // The object's pool reports a broken engine (what a failed wasm instantiation looks like).
    await api("POST", `/v1/sessions/${session}/turns`, { disableTools: true });
    setVmFault("no_sandbox");
    const r = await api("POST", `/v1/sessions/${session}/turns`, { agentId: "search" });
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject({ codeModeEngaged: false, toolSearchEngaged: true, toolSearchMode: "tools" });
    expect(r.json.tools.map((t: any) => t.name)).toEqual(["tool_search", "tool_describe", "tool_call"]);
    expect(r.json.telemetry.toolSearch).toEqual({ mode: "tools", fallbackFrom: "code" });
    // Code mode never falls back: its turn still gets exec + wait.
    const cm = await api("POST", `/v1/sessions/${session}/turns`, {});
    expect(cm.json.tools.map((t: any) => t.name)).toEqual(["exec", "wait"]);
  });
});

describe("activation × Tool Search × agent overrides (one config, every surface)", () => {
  it.each([
    // [agentId, model, codeModeEngaged, toolSearchMode, tools]
    ["mixed", "openai/gpt-5.6", true, undefined, ["exec", "wait"]], // preferred model: code mode
    ["mixed", "novita/moonshotai/kimi-k3", false, "code", ["tool_search_code"]], // capable model: Tool Search
    ["mixed", "ollama/llama3", false, "code", ["tool_search_code"]], // agent model override false: Tool Search
    ["mixed", undefined, false, "code", ["tool_search_code"]], // no model: "auto" stays off
    ["search", "openai/gpt-5.6", false, "code", ["tool_search_code"]], // code mode off for the agent
    ["searchtools", "openai/gpt-5.6", false, "tools", ["tool_search", "tool_describe", "tool_call"]],
    ["searchoff", "openai/gpt-5.6", false, undefined, DEMO], // both off: direct tools
    ["off", undefined, false, undefined, DEMO], // global toolSearch unset: direct tools
    [undefined, undefined, true, undefined, ["exec", "wait"]], // global code mode on
    [undefined, "openai/gpt-5.5", false, undefined, DEMO], // per-model false, no Tool Search globally
  ] as const)("agent %s, model %s → codeModeEngaged %s, Tool Search %s", async (agentId, model, engaged, mode, tools) => {
    const { turn } = await openTurn({ ...(agentId ? { agentId } : {}), ...(model ? { model } : {}) });
    expect(turn.codeModeEngaged).toBe(engaged);
    expect(turn.toolSearchEngaged).toBe(mode !== undefined);
    expect(turn.toolSearchMode).toBe(mode);
    expect(turn.tools.map((t: any) => t.name)).toEqual(tools);
  });

  it("runs that intentionally have no tools get neither surface", async () => {
    for (const body of [
      { agentId: "search", disableTools: true },
      { agentId: "searchtools", allow: [] },
    ]) {
      const { turn } = await openTurn(body);
      expect(turn).toMatchObject({ codeModeEngaged: false, toolSearchEngaged: false, tools: [] });
      expect(turn.telemetry.surface).toEqual({ kind: "none", tools: 0, bytes: 2 });
    }
  });

  // Seed 004: the comparison of direct and Tool Search turns.
  it("direct turns count and record their calls like Tool Search does", async () => {
    const { session, turnId, turn } = await openTurn({ agentId: "searchoff" });
    expect(turn.telemetry).toMatchObject({ controlTools: [], surface: { kind: "direct", tools: 5 } });
    const r = await call(session, turnId, "shipping_get", { id: "SH-1001" });
    expect(r.json.status).toBe("completed");
    const deleted = await api("DELETE", `/v1/sessions/${session}/turns/${turnId}`);
    expect(deleted.json.telemetry).toMatchObject({
      counters: { search: 0, describe: 0, call: 1 },
      calledTools: [{ tool: "shipping_get", id: "plugin:demo:shipping_get", source: "openclaw", calls: 1 }],
    });
  });

  it("each tool_search_code call writes one cell record (no code, no values)", async () => {
    const { session, turnId } = await openTurn({ agentId: "search" });
    const m = mark();
    await call(session, turnId, "tool_search_code", {
      code: 'const secret = "s3cr3t-value"; return (await openclaw.tools.search("shipment")).length',
    });
    const cells = recordsSince(m).filter((r) => r.kind === "cell");
    expect(cells).toHaveLength(1);
    expect(cells[0]).toMatchObject({ tool: "tool_search_code", outcome: "completed", bridge: { search: 1, describe: 0, call: 0 } });
    expect(linesSince(m).join("\n")).not.toContain("s3cr3t-value");
  });
});

describe("CODEMODE_DEBUG logs the model-facing surface through the structured log", () => {
  it("code-mode and payload=full-redacted: tool names, activation, and a redacted snapshot; unknown flags reported, not fatal", async () => {
    const session = sessionId();
    await api("POST", `/v1/sessions/${session}/turns`, { disableTools: true });
    setSessionEnv(session, { CODEMODE_DEBUG: "code-mode,payload=full-redacted,no-such-flag" });
    const m = mark();
    const secret = "sk-proj-abcdefghijklmnopqrstuvwxyz012345";
    const r = await api("POST", `/v1/sessions/${session}/turns`, {
      agentId: "search",
      clientTools: [{ name: "call_api", description: `Call the API with key ${secret}` }],
    });
    expect(r.status).toBe(201);
    const records = recordsSince(m);
    const debug = records.filter((x) => x.kind === "debug");
    expect(debug.map((x) => x.event)).toEqual(["activation", "model_payload"]);
    expect(debug[0]).toMatchObject({
      surface: "tool_search_code",
      toolSearchMode: "code",
      codeModeEngaged: false,
      toolNames: ["tool_search_code"],
      turnId: r.json.turnId,
    });
    expect(JSON.parse(debug[1]!.payload)).toEqual({ tools: r.json.tools });
    // Code mode's surface logs exec and wait; the secret in the client tool's description appears in no record.
    const cm = await api("POST", `/v1/sessions/${session}/turns`, {
      clientTools: [{ name: "call_api", description: `Call the API with key ${secret}` }],
    });
    const cmDebug = recordsSince(m).filter((x) => x.kind === "debug" && x.turnId === cm.json.turnId);
    expect(cmDebug[1]!.toolNames).toEqual(["exec", "wait"]);
    // A direct surface sends the client's description, so its snapshot holds the masked secret.
    const direct = await api("POST", `/v1/sessions/${session}/turns`, {
      agentId: "searchoff",
      clientTools: [{ name: "call_api", description: `Call the API with key ${secret}` }],
    });
    const directPayload = recordsSince(m).find((x) => x.kind === "debug" && x.event === "model_payload" && x.turnId === direct.json.turnId)!.payload;
    expect(directPayload).toContain("Call the API with key ***");
    expect(JSON.stringify(recordsSince(m))).not.toContain(secret);
    expect(records.some((x) => x.kind === "host_error" && x.where === "config.debug_flags" && x.error.message.includes('"no-such-flag"'))).toBe(true);
  });

  it("without CODEMODE_DEBUG no debug record is written", async () => {
    const m = mark();
    await openTurn({ agentId: "search" });
    expect(recordsSince(m).filter((x) => x.kind === "debug")).toEqual([]);
  });
});
