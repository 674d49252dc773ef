import { describe, expect, inject, it } from "vitest";
import { api, sessionId, sessionProbe } from "./helpers";
import { MAX_JSON_DEPTH, MAX_MCP_RESPONSE_BYTES, MAX_MCP_TOOLS_BYTES, MAX_TURN_ROW_BYTES } from "../../src/limits";

/**
 * What a hostile MCP server (test/support/mcp-hostile-server.mjs) cannot do to a turn, through
 * HTTP → session Durable Object → MCP client → the server over loopback HTTP. Regressions of a
 * hostile tester's findings: a tool list nested 3000 levels deep (stack overflow storing the turn)
 * or of 13.7 MB (SQLITE_TOOBIG) made opening the turn a 500, and left storage behind.
 */
const HOSTILE = inject("mcpHostileUrl");
const EVERYTHING = inject("mcpEverythingUrl");

async function open(session: string, body: Record<string, unknown>) {
  return api("POST", `/v1/sessions/${session}/turns`, body);
}

function reported(turn: any, name: string) {
  return turn.mcpServers.find((s: any) => s.name === name);
}

describe("an MCP tool list the turn cannot store is reported, never a 500", () => {
  it("a tool nested deeper than MAX_JSON_DEPTH: the server is attached without tools, the reason names the tool", async () => {
    const session = sessionId();
    const r = await open(session, { mcpServers: { deep: { url: `${HOSTILE}/deep/mcp` }, everything: { url: EVERYTHING } } });
    expect(r.status, JSON.stringify(r.json).slice(0, 500)).toBe(201);
    expect(reported(r.json, "deep")).toEqual({
      name: "deep",
      namespace: "deep",
      tools: 0,
      error: `MCP server "deep": tools/list lists tool "deep", nested deeper than ${MAX_JSON_DEPTH} levels; refused`,
    });
    expect(reported(r.json, "everything").tools).toBeGreaterThan(5);
    const exec = await api("POST", `/v1/sessions/${session}/turns/${r.json.turnId}/tools/exec`, {
      code: `return (await MCP.everything.echo({ message: "fine" })).content[0].text`,
    });
    expect(exec.json.value).toBe("Echo: fine");
  });

  it("one tools/list answer past the response bound (14 MB): reported with the bound", async () => {
    const r = await open(sessionId(), { mcpServers: { wide: { url: `${HOSTILE}/wide/14000/mcp` } } });
    expect(r.status, JSON.stringify(r.json).slice(0, 500)).toBe(201);
    expect(reported(r.json, "wide")).toMatchObject({
      tools: 0,
      error: `MCP server "wide": tools/list failed: the answer is larger than ${MAX_MCP_RESPONSE_BYTES} bytes, the bound on one MCP answer`,
    });
  });

  it("pages each under the response bound, 14 MB in all: refused past MAX_MCP_TOOLS_BYTES, without reading every page", async () => {
    const r = await open(sessionId(), { mcpServers: { paged: { url: `${HOSTILE}/paged/20/700/mcp` } } });
    expect(r.status, JSON.stringify(r.json).slice(0, 500)).toBe(201);
    expect(reported(r.json, "paged")).toEqual({
      name: "paged",
      namespace: "paged",
      tools: 0,
      error: `MCP server "paged": tools/list lists more than ${MAX_MCP_TOOLS_BYTES} bytes of tools (names, descriptions, schemas); refused (the limit keeps one turn's stored catalog bounded)`,
    });
  });

  it("servers share the per-turn budget in config order: the one that would pass it is reported, the first keeps its tools", async () => {
    const r = await open(sessionId(), { mcpServers: { a: { url: `${HOSTILE}/wide/700/mcp` }, b: { url: `${HOSTILE}/wide/700/mcp` } } });
    expect(r.status, JSON.stringify(r.json).slice(0, 500)).toBe(201);
    expect(reported(r.json, "a").tools).toBeGreaterThan(50);
    expect(reported(r.json, "a").error).toBeUndefined();
    expect(reported(r.json, "b")).toMatchObject({
      tools: 0,
      error: expect.stringMatching(
        new RegExp(
          `^MCP server "b": tools/list refused: its tools \\(\\d+ bytes of JSON\\) would bring this turn's MCP tools to \\d+ bytes, over the bound of ${MAX_MCP_TOOLS_BYTES} per turn$`,
        ),
      ),
    });
  });

  it("a turn whose tools together pass MAX_TURN_ROW_BYTES is refused with 400 before anything is stored", async () => {
    const session = sessionId();
    // ~880 KB of client tools (under the 1 MiB body bound) plus ~900 KB of MCP tools (under their own bound).
    const clientTools = Array.from({ length: 220 }, (_, i) => ({ name: `client_${i}`, description: "d".repeat(4000) }));
    const r = await open(session, { clientTools, mcpServers: { wide: { url: `${HOSTILE}/wide/900/mcp` } } });
    expect(r.status, JSON.stringify(r.json).slice(0, 500)).toBe(400);
    expect(r.json.error.code).toBe("invalid_request");
    expect(r.json.error.message).toMatch(
      new RegExp(`^this turn would store \\d+ bytes .*over the bound of ${MAX_TURN_ROW_BYTES} bytes for one turn`),
    );
    // Nothing was stored: the session is still unknown.
    expect((await api("DELETE", `/v1/sessions/${session}`)).status).toBe(404);
  });
});

describe("a failed turn write leaves nothing behind", () => {
  it("when the first turn's write fails, the session stores nothing (DELETE answers 404) and the next turn opens", async () => {
    const session = sessionId();
    // The session's storage refuses its next turn row (test/support/session-probe.ts).
    await sessionProbe(session).failNextStatement("INSERT INTO turns", "string or blob too big: SQLITE_TOOBIG");
    const failed = await open(session, {});
    expect(failed.status).toBe(500);
    expect(failed.json.error).toMatchObject({ code: "internal_error", message: expect.stringMatching(/nothing was stored/) });
    expect((await api("DELETE", `/v1/sessions/${session}`)).status).toBe(404);
    expect((await open(session, {})).status).toBe(201);
    expect((await api("DELETE", `/v1/sessions/${session}`)).status).toBe(200);
  });
});

describe("an MCP answer is read up to MAX_MCP_RESPONSE_BYTES, then the operation fails naming the bound", () => {
  async function hostileTurn() {
    const session = sessionId();
    const r = await open(session, { mcpServers: { hostile: { url: `${HOSTILE}/small/mcp` } } });
    expect(r.status, JSON.stringify(r.json).slice(0, 500)).toBe(201);
    const run = async (code: string) => (await api("POST", `/v1/sessions/${session}/turns/${r.json.turnId}/tools/exec`, { code })).json;
    return { run };
  }
  const tooLarge = (what: string) =>
    `MCP server "hostile": ${what} failed: the answer is larger than ${MAX_MCP_RESPONSE_BYTES} bytes, the bound on one MCP answer`;

  it.each([
    ["tools/call as JSON (64 MB)", "MCP.hostile.big({ mb: 64 })", 'tools/call "big"'],
    ["tools/call as a server-sent event (64 MB)", "MCP.hostile.bigsse({ mb: 64 })", 'tools/call "bigsse"'],
    ["resources/read (64 MB)", 'MCP.hostile.resources.read({ uri: "file:///x?mb=64" })', 'resources/read "file:///x?mb=64"'],
  ])("%s: a catchable error naming the bound, promptly", async (_, call, what) => {
    const { run } = await hostileTurn();
    const started = Date.now();
    const r = await run(`try { await ${call}; return "no error"; } catch (e) { return e.message; }`);
    expect(r.status, JSON.stringify(r).slice(0, 500)).toBe("completed");
    expect(r.value).toBe(tooLarge(what));
    // Not the 60 s call deadline: the server-sent stream's overflow ends the call too.
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it("an answer that is not JSON is named so; the runtime's own text never reaches the guest", async () => {
    const { run } = await hostileTurn();
    const r = await run(`try { await MCP.hostile.badjson({}); return "no error"; } catch (e) { return e.message; }`);
    expect(r.value).toBe('MCP server "hostile": tools/call "badjson" failed: the answer is not valid JSON');
  });
});
