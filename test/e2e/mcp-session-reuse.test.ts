import { describe, expect, inject, it } from "vitest";
import { api, sessionId, sessionProbe, TOKEN_B } from "./helpers";
import { setClock } from "./session-controls";
import { manualClock } from "../../src/runtime";
import { MCP_TOOL_LIST_TTL_MS } from "../../src/mcp";

/**
 * MCP sessions and listings reused (issue 22), through HTTP → session Durable Object → QuickJS
 * cell → MCP client → a server over loopback. The counting server (test/support/
 * mcp-hostile-server.mjs, `/counted/<tag>/mcp`) holds real sessions and counts `initialize`,
 * `tools/list`, `tools/call` and requests on sessions it ended; the reference server
 * (server-everything) cannot count, so the session object's own handshake count stands for it.
 */
const HOSTILE = inject("mcpHostileUrl");
const EVERYTHING = inject("mcpEverythingUrl");

let tags = 0;
function countedServer(): { url: string; tag: string } {
  const tag = `reuse${Date.now().toString(36)}${(tags++).toString(36)}`;
  return { url: `${HOSTILE}/counted/${tag}/mcp`, tag };
}

type Counts = { initialize: number; "tools/list": number; "tools/call": number; notFound: number; delete: number; calls: string[] };
async function counts(tag: string): Promise<Counts> {
  return (await fetch(`${HOSTILE}/counts/${tag}`)).json() as Promise<Counts>;
}

async function open(session: string, mcpServers: Record<string, unknown>, token?: string) {
  const r = await api("POST", `/v1/sessions/${session}/turns`, { mcpServers }, token);
  expect(r.status, JSON.stringify(r.json).slice(0, 500)).toBe(201);
  return r.json as { turnId: string; mcpServers: Array<{ name: string; tools: number; error?: string }>; tools: unknown[] };
}

async function run(session: string, turnId: string, code: string, token?: string) {
  const r = await api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/exec`, { code }, token);
  expect(r.status, JSON.stringify(r.json).slice(0, 500)).toBe(200);
  expect(r.json.status, JSON.stringify(r.json).slice(0, 500)).toBe("completed");
  return r.json.value;
}

/** The names `API.read("mcp/<server>.d.ts")` declares: what the turn's stored listing holds. */
async function declared(session: string, turnId: string, server: string, token?: string): Promise<string> {
  return run(session, turnId, `return API.read("mcp/${server}.d.ts")`, token);
}

describe("one MCP session per server per session object", () => {
  it("N calls from cells, over two turns, cost one initialize; the turn opening's session serves the cells", async () => {
    const { url, tag } = countedServer();
    const session = sessionId();
    const first = await open(session, { c: { url } });
    for (let i = 0; i < 3; i++)
      expect(await run(session, first.turnId, `return (await MCP.c.echo({ message: "m${i}" })).content[0].text`)).toBe(`echo: m${i}`);
    const second = await open(session, { c: { url } });
    expect(
      await run(
        session,
        second.turnId,
        `const a = await MCP.c.echo({ message: "x" }); const b = await MCP.c.echo({ message: "y" }); return [a, b].map((r) => r.content[0].text)`,
      ),
    ).toEqual(["echo: x", "echo: y"]);
    const c = await counts(tag);
    expect(c.initialize).toBe(1);
    expect(c["tools/call"]).toBe(5);
    expect(c.notFound).toBe(0);
  });

  it("calls to the reference server from many cells reuse one handshake in the session object", async () => {
    const session = sessionId();
    const turn = await open(session, { everything: { url: EVERYTHING } });
    for (let i = 0; i < 4; i++) {
      expect(await run(session, turn.turnId, `return (await MCP.everything.echo({ message: "e${i}" })).content[0].text`)).toBe(`Echo: e${i}`);
    }
    expect(await sessionProbe(session).mcpPool()).toEqual({ connects: 1, size: 1 });
  });

  it("a server that ends the session is reconnected transparently: the refused call is re-sent once on a new session and succeeds", async () => {
    const { url, tag } = countedServer();
    const session = sessionId();
    const turn = await open(session, { c: { url } });
    expect(await run(session, turn.turnId, `return (await MCP.c.echo({ message: "before" })).content[0].text`)).toBe("echo: before");
    await fetch(`${HOSTILE}/forget/${tag}`, { method: "POST" });
    expect(await run(session, turn.turnId, `return (await MCP.c.echo({ message: "after" })).content[0].text`)).toBe("echo: after");
    const c = await counts(tag);
    expect(c.notFound).toBe(1); // the call on the ended session, refused unprocessed
    expect(c.initialize).toBe(2);
    expect(c.calls).toEqual(["echo", "echo"]); // each call processed once
  });

  it("tenants with different headers on the same URL get separate sessions and listings", async () => {
    const { url, tag } = countedServer();
    const a = await open(sessionId(), { c: { url, headers: { authorization: "Bearer alpha" } } });
    const sessionB = sessionId();
    const b = await open(sessionB, { c: { url, headers: { authorization: "Bearer beta" } } }, TOKEN_B);
    expect(a.mcpServers[0]!.error).toBeUndefined();
    const names = await declared(sessionB, b.turnId, "c", TOKEN_B);
    expect(names).toContain("who_Bearerbeta");
    expect(names).not.toContain("alpha");
    const c = await counts(tag);
    expect(c["tools/list"]).toBe(2);
    expect(c.initialize).toBe(2);
  });
});

describe("tool listings cached per server identity", () => {
  it("a listing is reused across turns and session objects: the second and third turns cost no tools/list", async () => {
    const { url, tag } = countedServer();
    const session = sessionId();
    const first = await open(session, { c: { url } });
    const second = await open(session, { c: { url } });
    const other = await open(sessionId(), { c: { url } });
    for (const t of [first, second, other]) expect(t.mcpServers[0]).toMatchObject({ name: "c", tools: 5 });
    expect((await counts(tag))["tools/list"]).toBe(1);
    expect(await declared(session, second.turnId, "c")).toContain("echo");
  });

  it("notifications/tools/list_changed drops the listing: the next turn lists again and sees the new tool", async () => {
    const { url, tag } = countedServer();
    const session = sessionId();
    const first = await open(session, { c: { url } });
    expect(await run(session, first.turnId, `return (await MCP.c.changer({})).content[0].text`)).toBe("changed");
    const second = await open(session, { c: { url } });
    expect(second.mcpServers[0]!.tools).toBe(6);
    expect(await declared(session, second.turnId, "c")).toContain("added_1");
    expect((await counts(tag))["tools/list"]).toBe(2);
  });

  it("a flood of list_changed notifications costs one re-listing and leaves the session usable", async () => {
    const { url, tag } = countedServer();
    const session = sessionId();
    const first = await open(session, { c: { url } });
    expect(await run(session, first.turnId, `return (await MCP.c.flood({})).content[0].text`)).toBe("flooded");
    expect(await run(session, first.turnId, `return (await MCP.c.echo({ message: "still" })).content[0].text`)).toBe("echo: still");
    await open(session, { c: { url } });
    await open(session, { c: { url } });
    const c = await counts(tag);
    expect(c["tools/list"]).toBe(2);
    expect(c.initialize).toBe(1);
  });

  it("a tool call the server answers as unknown re-checks the listing on the next turn", async () => {
    const { url, tag } = countedServer();
    const session = sessionId();
    const first = await open(session, { c: { url } });
    const r = await run(session, first.turnId, `return await MCP.c.vanish({})`);
    expect(r.isError).toBe(true);
    await open(session, { c: { url } });
    expect((await counts(tag))["tools/list"]).toBe(2);
  });

  it("a listing past its TTL (by the session object's clock) is listed again; within it, not", async () => {
    const { url, tag } = countedServer();
    const session = sessionId();
    await api("POST", `/v1/sessions/${session}/turns`, {}); // create the object
    const clock = manualClock(Date.now());
    setClock(clock);
    await open(session, { c: { url } });
    clock.advance(MCP_TOOL_LIST_TTL_MS - 1);
    await open(session, { c: { url } });
    expect((await counts(tag))["tools/list"]).toBe(1);
    clock.advance(1);
    await open(session, { c: { url } });
    expect((await counts(tag))["tools/list"]).toBe(2);
  });
});
