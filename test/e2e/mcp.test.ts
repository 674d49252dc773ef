import { evictDurableObject } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { api, sessionId, sessionStub } from "./helpers";
import { setSessionEnv } from "./session-controls";
import { linesSince, mark } from "../support/log-capture";

/**
 * MCP at the edge against the real reference server (server-everything over Streamable HTTP on
 * loopback), through HTTP → session Durable Object → QuickJS: the `MCP` namespace, the virtual
 * `.d.ts` files, resources and prompts, policy, Tool Search and direct exposure.
 */
const URL_ = inject("mcpEverythingUrl");
const everything = { everything: { url: URL_, headers: { "x-mcp-test": "header-value-never-logged" } } };

async function openTurn(body: Record<string, unknown>) {
  const session = sessionId();
  const r = await api("POST", `/v1/sessions/${session}/turns`, body);
  expect(r.status, JSON.stringify(r.json)).toBe(201);
  return { session, turnId: r.json.turnId as string, turn: r.json };
}

async function run(session: string, turnId: string, code: string) {
  const r = await api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/exec`, { code });
  expect(r.status).toBe(200);
  return r.json;
}

describe("MCP servers on a code-mode turn", () => {
  it('API.read("mcp/everything.d.ts") then a correct MCP.everything call, in one exec', async () => {
    const { session, turnId, turn } = await openTurn({ mcpServers: everything });
    expect(turn.mcpServers).toEqual([{ name: "everything", namespace: "everything", tools: expect.any(Number) }]);
    expect(turn.mcpServers[0].tools).toBeGreaterThan(5);
    // MCP schemas and descriptions never reach the model-visible surface; the exec description points at the API.
    const surface = JSON.stringify(turn.tools);
    expect(turn.tools.map((t: any) => t.name)).toEqual(["exec", "wait"]);
    expect(surface).toContain("MCP.everything");
    expect(turn.tools[0].description).toContain('API.read("mcp/<server>.d.ts")');
    expect(surface).not.toContain("get-sum");
    expect(surface).not.toContain("Echoes back");
    const r = await run(
      session,
      turnId,
      `
      const files = await API.list("mcp");
      const dts = await API.read("mcp/everything.d.ts");
      const echoed = await MCP.everything.echo({ message: "hello from the edge" });
      const sum = await MCP.everything.getSum({ a: 2, b: 40 });
      return { files: files.map((f) => f.path), declaresEcho: dts.includes("function echo(input: {"), echoed, sum };
    `,
    );
    expect(r.status, JSON.stringify(r)).toBe("completed");
    expect(r.value.files).toEqual(["mcp/everything.d.ts", "mcp/index.d.ts"]);
    expect(r.value.declaresEcho).toBe(true);
    expect(r.value.echoed).toEqual({ content: [{ type: "text", text: "Echo: hello from the edge" }] });
    expect(JSON.stringify(r.value.sum.content)).toContain("42");
    expect(r.telemetry.catalogSources.mcp).toBe(turn.mcpServers[0].tools);
    expect(r.telemetry.counters.call).toBe(2);
  });

  it("MCP entries are absent from bare globals, catalog.search() and catalog.all()", async () => {
    const { session, turnId } = await openTurn({ mcpServers: everything });
    const r = await run(
      session,
      turnId,
      `return {
        bare: typeof everything__echo, bareSum: typeof getSum,
        searched: (await catalog.search("echo a message back")).map((h) => h.toolName),
        all: catalog.all().map((h) => h.toolName),
        members: Object.keys(MCP.everything).filter((k) => ["echo", "$api", "resources", "prompts"].includes(k)).sort(),
      };`,
    );
    expect(r.value.bare).toBe("undefined");
    expect(r.value.bareSum).toBe("undefined");
    expect(r.value.searched.some((n: string) => n.startsWith("everything__"))).toBe(false);
    expect(r.value.all.some((n: string) => n.startsWith("everything__"))).toBe(false);
    expect(r.value.members).toEqual(["$api", "echo", "prompts", "resources"]);
  });

  it("results keep block annotations and structuredContent; isError resolves; top-level _meta never enters", async () => {
    const { session, turnId } = await openTurn({ mcpServers: everything });
    const r = await run(
      session,
      turnId,
      `
      const annotated = await MCP.everything.getAnnotatedMessage({ messageType: "error" });
      const structured = await MCP.everything.getStructuredContent({ location: "Chicago" });
      const bad = await MCP.everything.getSum({ a: "one" }).catch((e) => ({ thrown: e.message }));
      return { annotated, structured, bad };
    `,
    );
    expect(r.status, JSON.stringify(r)).toBe("completed");
    expect(r.value.annotated.content[0].annotations).toMatchObject({ priority: 1 });
    expect(r.value.structured.structuredContent).toBeDefined();
    expect(Object.keys(r.value.structured).sort()).toEqual(["content", "structuredContent"]);
    // Invalid input is caught by the executor against the tool's own schema before anything is sent.
    expect(r.value.bad.thrown).toMatch(/^invalid input for MCP\.everything\.getSum/);
  });

  it("deny covers a server's resources and prompts by their policy names; a server left nothing is not visible at all", async () => {
    const session = sessionId();
    const turn = await api("POST", `/v1/sessions/${session}/turns`, {
      mcpServers: everything,
      deny: ["everything__resources.read", "everything__prompts.get"],
    });
    const turnId = turn.json.turnId;
    const r = await api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/exec`, {
      code:
        "const out = []; for (const f of [() => MCP.everything.resources.read({ uri: 'demo://resource/static/document/architecture.md' }), () => MCP.everything.prompts.get({ name: 'simple-prompt' })]) { try { await f(); out.push('ran'); } catch (e) { out.push(e.message); } }\n" +
        "out.push(typeof (await MCP.everything.resources.list({})).resources); return out;",
    });
    expect(r.json.value).toEqual([
      "everything/resources/read is not an available MCP operation",
      "everything/prompts/get is not an available MCP operation",
      "object",
    ]);
    const none = await api("POST", `/v1/sessions/${session}/turns`, { mcpServers: everything, allow: ["echo"] });
    const v = await api("POST", `/v1/sessions/${session}/turns/${none.json.turnId}/tools/exec`, {
      code: "return [typeof MCP === 'undefined' ? 'none' : Object.keys(MCP), (await API.list('mcp'))]",
    });
    expect(v.json.status).toBe("completed");
    expect(JSON.stringify(v.json.value)).not.toContain("everything");
  });

  it("resources, prompts and $api return native MCP shapes", async () => {
    const { session, turnId } = await openTurn({ mcpServers: everything });
    const r = await run(
      session,
      turnId,
      `
      const resources = await MCP.everything.resources.list();
      const first = resources.resources[0];
      const read = await MCP.everything.resources.read({ uri: first.uri });
      const prompts = await MCP.everything.prompts.list();
      const simple = prompts.prompts.find((p) => !p.arguments || p.arguments.every((a) => !a.required));
      const got = await MCP.everything.prompts.get({ name: simple.name });
      const api = await MCP.everything.$api("echo", { schema: true });
      const all = await MCP.everything.$api();
      return { nResources: resources.resources.length, read, nPrompts: prompts.prompts.length, got, api, allHeader: all.header.slice(0, 200) };
    `,
    );
    expect(r.status, JSON.stringify(r)).toBe("completed");
    expect(r.value.nResources).toBeGreaterThan(0);
    expect(Array.isArray(r.value.read.contents)).toBe(true);
    expect(r.value.nPrompts).toBeGreaterThan(0);
    expect(Array.isArray(r.value.got.messages)).toBe(true);
    expect(r.value.api).toMatchObject({ server: "everything", tools: [{ name: "echo", mcpName: "echo", inputSchema: { type: "object" } }] });
    expect(r.value.api.header).toContain("function echo(input: {");
    expect(r.value.allHeader).toContain("declare namespace MCP.everything");
  });

  it("bad paths, unknown files and unknown tools are catchable errors", async () => {
    const { session, turnId } = await openTurn({ mcpServers: everything });
    const r = await run(
      session,
      turnId,
      `
      const out = [];
      for (const f of [
        () => API.read("mcp/../secrets"),
        () => API.read("/mcp/index.d.ts"),
        () => API.read("mcp/nope.d.ts"),
        () => API.list("mcp/./x"),
        () => MCP.everything.$api("noSuchTool"),
        () => MCP.everything.resources.read({}),
      ]) { try { await f(); out.push("ok"); } catch (e) { out.push(e.message); } }
      return out;
    `,
    );
    expect(r.value).toEqual([
      'API.read: "mcp/../secrets" has a "." or ".." segment; those are not allowed',
      'API.read: "/mcp/index.d.ts" is absolute; API paths are relative, like "mcp/index.d.ts"',
      'API.read: no file "mcp/nope.d.ts"; API.list() shows the files',
      'API.list: "mcp/./x" has a "." or ".." segment; those are not allowed',
      'MCP.everything has no tool "noSuchTool"; MCP.everything.$api() lists them all',
      "MCP.everything.resources.read needs { uri }",
    ]);
  });

  it("denied MCP tools are absent from the namespace and the .d.ts", async () => {
    const { session, turnId } = await openTurn({ mcpServers: everything, deny: ["everything__echo"] });
    const r = await run(
      session,
      turnId,
      `return { echo: typeof MCP.everything.echo, sum: typeof MCP.everything.getSum, dts: (await API.read("mcp/everything.d.ts")).includes("function echo(") }`,
    );
    expect(r.value).toEqual({ echo: "undefined", sum: "function", dts: false });
  });

  it("an unreachable server: the turn opens, the server is reported, its operations fail as catchable errors", async () => {
    const dead = { dead: { url: "http://127.0.0.1:9/mcp" } };
    const { session, turnId, turn } = await openTurn({ mcpServers: { ...everything, ...dead } });
    const reported = turn.mcpServers.find((s: any) => s.name === "dead");
    expect(reported).toMatchObject({ name: "dead", namespace: "dead", tools: 0, error: expect.stringContaining('MCP server "dead"') });
    const r = await run(session, turnId, `try { await MCP.dead.resources.list(); return "no error"; } catch (e) { return e.message; }`);
    expect(r.value).toContain('MCP server "dead"');
    expect((await run(session, turnId, `return (await MCP.everything.echo({ message: "still fine" })).content[0].text`)).value).toBe(
      "Echo: still fine",
    );
  });

  it("header values never reach results, the guest or the logs", async () => {
    const m = mark();
    const { session, turnId, turn } = await openTurn({ mcpServers: everything });
    const r = await run(
      session,
      turnId,
      `return [JSON.stringify(MCP), await API.read("mcp/everything.d.ts"), await API.read("mcp/index.d.ts")].join("\\n")`,
    );
    const seen = JSON.stringify([turn, r]) + linesSince(m).join("\n");
    expect(seen).not.toContain("header-value-never-logged");
    expect(seen).not.toContain(URL_);
  });
});

describe("MCP survives park and resume", () => {
  it("a cell that parks resumes with the same MCP namespace and files (stored with the turn, not refetched into the guest)", async () => {
    const { session, turnId } = await openTurn({ mcpServers: everything });
    const first = await run(
      session,
      turnId,
      `const before = (await API.list("mcp")).length; await yield_control("pause"); return [before, (await API.list("mcp")).length, (await MCP.everything.echo({ message: "after park" })).content[0].text];`,
    );
    expect(first.status).toBe("waiting");
    // A fresh object holds no parsed turn: the resume reads it back from SQLite.
    await evictDurableObject(sessionStub(session));
    const r = await api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/wait`, { runId: first.runId });
    expect(r.json).toMatchObject({ status: "completed", value: [2, 2, "Echo: after park"] });
  });
});

describe("MCP tools under Tool Search and direct exposure", () => {
  it("Tool Search finds and calls MCP tools by their mcp:<server>:<tool> id", async () => {
    const { session, turnId, turn } = await openTurn({ agentId: "searchtools", mcpServers: everything });
    expect(turn.tools.map((t: any) => t.name)).toEqual(["tool_search", "tool_describe", "tool_call"]);
    const post = (tool: string, input: unknown) => api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/${tool}`, input);
    const hits = (await post("tool_search", { query: "echo back the input message", limit: 3 })).json.value;
    const echo = hits.find((h: any) => h.id === "mcp:everything:echo");
    expect(echo).toMatchObject({ name: "everything__echo", source: "mcp" });
    const called = (await post("tool_call", { id: echo.id, args: { message: "via tool search" } })).json;
    expect(called).toMatchObject({ status: "completed", value: { content: [{ type: "text", text: "Echo: via tool search" }] } });
    expect(called.telemetry.calledTools).toEqual([{ tool: "everything__echo", id: "mcp:everything:echo", source: "mcp", calls: 1 }]);
  });

  it("a direct turn exposes MCP tools by their catalog name and calls them", async () => {
    const { session, turnId, turn } = await openTurn({ agentId: "off", mcpServers: everything, allow: ["everything__*"] });
    expect(turn.tools.map((t: any) => t.name)).toContain("everything__echo");
    const r = await api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/everything__echo`, { message: "direct" });
    expect(r.json).toEqual({ status: "completed", value: { content: [{ type: "text", text: "Echo: direct" }] } });
  });
});

describe("MCP server validation at the edge", () => {
  it.each([
    [{ a: { url: "ftp://x" } }, "mcpServers.a.url"],
    [{ a: { url: "https://user:pw@x.example/mcp" } }, "mcpServers.a.url"],
    [{ a: { url: "https://x.example/mcp", headers: { authorization: "env:GATEWAY_TOKENS" } } }, "mcpServers.a.headers"],
    [{ a: { url: "https://x.example/mcp", extra: 1 } }, "mcpServers.a.extra"],
    [{ a__b: { url: "https://x.example/mcp" } }, "mcpServers.a__b"],
    // ":" would make Tool Search ids (mcp:<server>:<tool>) ambiguous between servers.
    [{ "evil:a": { url: "https://x.example/mcp" } }, "mcpServers.evil:a"],
  ])("%j is refused with 400 at %s", async (mcpServers, path) => {
    const r = await api("POST", `/v1/sessions/${sessionId()}/turns`, { mcpServers });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ code: "invalid_request", path });
    expect(JSON.stringify(r.json)).not.toContain("pw@");
  });
});

describe("gateway-configured MCP servers (mcp.servers)", () => {
  it("attach to every turn; env:NAME header values are read from Worker secrets when used, a missing one is reported by name", async () => {
    const session = sessionId();
    await api("POST", `/v1/sessions/${session}/turns`, { disableTools: true });
    const config = { tools: { codeMode: true }, mcp: { servers: { everything: { url: URL_, headers: { "x-api-key": "env:MCP_TEST_SECRET" } } } } };
    const setEnv = (extra: Record<string, unknown>) => setSessionEnv(session, { CODEMODE_CONFIG: JSON.stringify(config), ...extra });
    setEnv({});
    const missing = await api("POST", `/v1/sessions/${session}/turns`, {});
    expect(missing.status).toBe(201);
    expect(missing.json.mcpServers).toEqual([
      {
        name: "everything",
        namespace: "everything",
        tools: 0,
        error: 'MCP server "everything": header "x-api-key" references the Worker secret MCP_TEST_SECRET, which is not set',
      },
    ]);
    setEnv({ MCP_TEST_SECRET: "s3cret-from-env" });
    const m = mark();
    const ok = await api("POST", `/v1/sessions/${session}/turns`, {});
    expect(ok.json.mcpServers[0].tools).toBeGreaterThan(5);
    const r = await api("POST", `/v1/sessions/${session}/turns/${ok.json.turnId}/tools/exec`, {
      code: 'return (await MCP.everything.echo({ message: "configured" })).content[0].text',
    });
    expect(r.json.value).toBe("Echo: configured");
    // A turn may not reuse the gateway's server name.
    const clash = await api("POST", `/v1/sessions/${session}/turns`, { mcpServers: { everything: { url: URL_ } } });
    expect(clash.status).toBe(400);
    expect(JSON.stringify([ok.json, r.json, clash.json]) + linesSince(m).join("\n")).not.toContain("s3cret-from-env");
    setSessionEnv(session, undefined);
  });
});
