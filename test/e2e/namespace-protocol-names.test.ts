import { describe, expect, inject, it } from "vitest";
import { api, sessionId } from "./helpers";

/**
 * MCP tools and servers named like protocol or Object.prototype members (`then`, `toJSON`,
 * `constructor`, `__proto__`, `hasOwnProperty`, `valueOf`, `toString` …) against a hostile MCP
 * server (test/support/mcp-hostile-server.mjs, `/names/<tag>/mcp`, which records every request),
 * through HTTP → session Durable Object → QuickJS: awaiting, serializing or printing a namespace
 * never calls the server, and each renamed member is callable under the name its declaration shows.
 */
const HOSTILE = inject("mcpHostileUrl");

let tags = 0;
function namesServer(): { tag: string; url: string } {
  const tag = `t${Date.now().toString(36)}${(tags++).toString(36)}`;
  return { tag, url: `${HOSTILE}/names/${tag}/mcp` };
}

/** What the hostile server recorded for `tag`: `[{ method, tool? }]`. */
async function recorded(tag: string): Promise<Array<{ method: string; tool?: string }>> {
  const res = await fetch(`${HOSTILE}/calls/${tag}`);
  return (await res.json()) as Array<{ method: string; tool?: string }>;
}

const toolCalls = async (tag: string) => (await recorded(tag)).filter((r) => r.method === "tools/call").map((r) => r.tool);

async function openTurn(mcpServers: Record<string, unknown>) {
  const session = sessionId();
  const r = await api("POST", `/v1/sessions/${session}/turns`, { mcpServers });
  expect(r.status, JSON.stringify(r.json)).toBe(201);
  return { session, turnId: r.json.turnId as string, turn: r.json };
}

async function run(session: string, turnId: string, code: string) {
  const r = await api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/exec`, { code });
  expect(r.status).toBe(200);
  expect(r.json.status, JSON.stringify(r.json)).toBe("completed");
  return r.json.value;
}

describe("MCP tools named like protocol members", () => {
  it("await, JSON.stringify, String and console.log of MCP.<server> never call the server", async () => {
    const { tag, url } = namesServer();
    const { session, turnId, turn } = await openTurn({ hostile: { url } });
    expect(turn.mcpServers).toEqual([{ name: "hostile", namespace: "hostile", tools: 10 }]);
    const value = await run(
      session,
      turnId,
      `
      const ns = MCP.hostile;
      const awaited = await ns;
      const resolved = await Promise.resolve(ns);
      const json = JSON.stringify(ns);
      const whole = JSON.stringify({ MCP });
      let str;
      try { str = String(ns); } catch (e) { str = e.constructor.name; }
      let concat;
      try { concat = "" + ns; } catch (e) { concat = e.constructor.name; }
      console.log(ns);
      return {
        awaitedIsNamespace: awaited === ns,
        resolvedIsNamespace: resolved === ns,
        json, whole, str, concat,
        own: Object.keys(ns).sort(),
        hasThen: "then" in ns, hasToJSON: "toJSON" in ns,
      };
    `,
    );
    expect(value).toMatchObject({ awaitedIsNamespace: true, resolvedIsNamespace: true, hasThen: false, hasToJSON: false });
    expect(JSON.parse(value.json)).toEqual({ resources: {}, prompts: {} });
    expect(JSON.parse(value.whole)).toEqual({ MCP: { hostile: { resources: {}, prompts: {} } } });
    // A null-prototype namespace with no toString/valueOf of its own cannot become a string; no call either.
    expect(value.str).toBe("TypeError");
    expect(value.concat).toBe("TypeError");
    expect(value.own).toEqual(
      [
        "$api",
        "_constructor",
        "_hasOwnProperty",
        "_isPrototypeOf",
        "_then",
        "_toJSON",
        "_toLocaleString",
        "_toString",
        "_valueOf",
        "echo",
        "prompts",
        "proto",
        "resources",
      ].sort(),
    );
    expect(await toolCalls(tag)).toEqual([]);
  });

  it("each renamed tool is callable under the name mcp/<server>.d.ts and $api show, and reaches the server's own name", async () => {
    const { tag, url } = namesServer();
    const { session, turnId } = await openTurn({ hostile: { url } });
    const value = await run(
      session,
      turnId,
      `
      const dts = await API.read("mcp/hostile.d.ts");
      const header = await MCP.hostile.$api();
      const one = await MCP.hostile.$api("then");
      const results = [];
      for (const name of ["_then", "_toJSON", "_constructor", "proto", "_hasOwnProperty", "_valueOf", "_toString"]) {
        results.push((await MCP.hostile[name]({})).content[0].text);
      }
      return { dts, names: header.tools.map((t) => [t.name, t.mcpName]), one: one.tools, results };
    `,
    );
    for (const name of ["_then", "_toJSON", "_constructor", "proto", "_hasOwnProperty", "_valueOf", "_toString", "echo"]) {
      expect(value.dts).toContain(`function ${name}(`);
    }
    expect(value.dts).not.toMatch(/function (then|toJSON|constructor|__proto__|hasOwnProperty|valueOf|toString)\(/);
    expect(value.dts).toContain("MCP tool name: then");
    expect(value.names).toEqual([
      ["_then", "then"],
      ["_toJSON", "toJSON"],
      ["_constructor", "constructor"],
      ["proto", "__proto__"],
      ["_hasOwnProperty", "hasOwnProperty"],
      ["_valueOf", "valueOf"],
      ["_toString", "toString"],
      ["_toLocaleString", "toLocaleString"],
      ["_isPrototypeOf", "isPrototypeOf"],
      ["echo", "echo"],
    ]);
    // $api finds a tool by its MCP name too, and answers with the name to call.
    expect(value.one).toEqual([{ name: "_then", mcpName: "then" }]);
    expect(value.results).toHaveLength(7);
    expect(await toolCalls(tag)).toEqual(["then", "toJSON", "constructor", "__proto__", "hasOwnProperty", "valueOf", "toString"]);
  });
});

describe("MCP servers named like protocol members", () => {
  it("servers named then, toJSON and constructor become MCP._then, MCP._toJSON, MCP._constructor; awaiting MCP changes nothing", async () => {
    const a = namesServer();
    const b = namesServer();
    const c = namesServer();
    const { session, turnId, turn } = await openTurn({ then: { url: a.url }, toJSON: { url: b.url }, constructor: { url: c.url } });
    expect(turn.mcpServers.map((s: any) => [s.name, s.namespace])).toEqual([
      ["then", "_then"],
      ["toJSON", "_toJSON"],
      ["constructor", "_constructor"],
    ]);
    const value = await run(
      session,
      turnId,
      `
      const awaited = await MCP;
      const json = JSON.stringify(MCP);
      const files = (await API.list("mcp")).map((f) => f.path);
      const echoed = (await MCP._then.echo({})).content[0].text;
      return { same: awaited === MCP, json, servers: Object.keys(MCP).sort(), files, echoed };
    `,
    );
    expect(value.same).toBe(true);
    expect(Object.keys(JSON.parse(value.json)).sort()).toEqual(["_constructor", "_then", "_toJSON"]);
    expect(value.servers).toEqual(["_constructor", "_then", "_toJSON"]);
    expect(value.files).toEqual(["mcp/_constructor.d.ts", "mcp/_then.d.ts", "mcp/_toJSON.d.ts", "mcp/index.d.ts"]);
    expect(await toolCalls(a.tag)).toEqual(["echo"]);
    expect(await toolCalls(b.tag)).toEqual([]);
    expect(await toolCalls(c.tag)).toEqual([]);
  });
});
