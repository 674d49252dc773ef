/**
 * The MCP client inside workerd against the real reference server (server-everything over
 * Streamable HTTP on loopback, started by test/support/mcp-everything-server.mjs).
 */
import { afterEach, describe, expect, inject, it } from "vitest";
import { buildApiFiles, declareMcpServers, McpClient, readApiFile, resolveMcpTarget, type McpFetch, type McpTarget } from "../../../src/mcp";

const EVERYTHING_URL = inject("mcpEverythingUrl");
const T = { timeoutMs: 10_000 };

function target(url = EVERYTHING_URL, headers: Record<string, string> = {}, env: Record<string, unknown> = {}): McpTarget {
  const r = resolveMcpTarget("everything", { url, headers }, env, "gateway");
  if (!r.ok) throw new Error(r.message);
  return r.target;
}

const open: McpClient[] = [];
async function connect(t = target(), fetch?: McpFetch): Promise<McpClient> {
  const c = await McpClient.connect(t, { ...T, ...(fetch ? { fetch } : {}) });
  if (!c.ok) throw new Error(c.message);
  open.push(c.value);
  return c.value;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

describe("McpClient against server-everything", () => {
  it("lists every tool with its schemas, without _meta", async () => {
    const tools = await (await connect()).listTools(T);
    expect(tools.ok).toBe(true);
    const list = tools.ok ? tools.value.tools : [];
    expect(list.map((t) => t.name)).toEqual(expect.arrayContaining(["echo", "get-sum", "get-structured-content", "trigger-long-running-operation"]));
    const echo = list.find((t) => t.name === "echo")!;
    expect(echo.inputSchema).toMatchObject({ type: "object", properties: { message: { type: "string" } }, required: ["message"] });
    expect(echo.description).toBe("Echoes back the input string");
    expect(list.find((t) => t.name === "get-structured-content")!.outputSchema).toMatchObject({ type: "object" });
    for (const t of list)
      expect(Object.keys(t).every((k) => ["name", "title", "description", "inputSchema", "outputSchema", "annotations"].includes(k))).toBe(true);
  });

  it("its real tool list renders mcp/everything.d.ts in the seed's style", async () => {
    const tools = await (await connect()).listTools(T);
    const files = buildApiFiles(declareMcpServers([{ name: "everything", tools: tools.ok ? tools.value.tools : [] }]));
    const dts = readApiFile(files, "mcp/everything.d.ts");
    expect(dts.ok).toBe(true);
    const text = dts.ok ? dts.content : "";
    expect(text).toContain("declare namespace MCP.everything {");
    expect(text).toContain("  /**\n   * Echoes back the input string\n   * @param message Message to echo\n   */\n");
    expect(text).toContain("  function echo(input: {\n    message: string;\n  }): Promise<McpToolResult>;");
    expect(text).toContain('    location: "New York" | "Chicago" | "Los Angeles";');
    expect(text).toMatch(/@returns structuredContent: \{ temperature: number; conditions: string; humidity: number \} \(declared by the server\)/);
    expect(text).toContain("MCP tool name: get-structured-content");
  });

  it("calls echo and gets the content blocks as the server sent them", async () => {
    const r = await (await connect()).callTool("echo", { message: "hi from workerd" }, T);
    expect(r).toEqual({ ok: true, value: { content: [{ type: "text", text: "Echo: hi from workerd" }] } });
  });

  it("keeps block annotations", async () => {
    const r = await (await connect()).callTool("get-annotated-message", { messageType: "error" }, T);
    expect(r.ok && r.value.content[0]).toEqual({
      type: "text",
      text: "Error: Operation failed",
      annotations: { audience: ["user", "assistant"], priority: 1 },
    });
  });

  it("returns structuredContent and checks it against the declared output schema", async () => {
    const c = await connect();
    const listed = await c.listTools(T);
    const outputSchema = listed.ok ? listed.value.tools.find((t) => t.name === "get-structured-content")!.outputSchema : undefined;
    expect(outputSchema).toBeDefined();
    const r = await c.callTool("get-structured-content", { location: "Chicago" }, { ...T, outputSchema: outputSchema! });
    expect(r.ok).toBe(true);
    expect(r.ok && r.value.structuredContent).toEqual({
      temperature: expect.any(Number),
      conditions: expect.any(String),
      humidity: expect.any(Number),
    });
  });

  it("a result that breaks the declared output schema is a protocol error naming server and tool", async () => {
    const wrong = { type: "object", properties: { temperature: { type: "string" } }, required: ["temperature"] };
    const r = await (await connect()).callTool("get-structured-content", { location: "Chicago" }, { ...T, outputSchema: wrong });
    expect(r.ok).toBe(false);
    expect(!r.ok && r.code).toBe("mcp_protocol_error");
    expect(!r.ok && r.message).toMatch(/^MCP server "everything": tools\/call "get-structured-content" failed: structuredContent does not match/);
  });

  it("a declared output schema whose pattern can backtrack badly is refused before it runs (it would run in the host)", async () => {
    const c = await connect();
    for (const pattern of ["^(a+)+$", "^a*a*a*a*a*a*a*a*a*a*a*a*a*$"]) {
      const evil = { type: "object", properties: { conditions: { type: "string", pattern } } };
      const r = await c.callTool("get-structured-content", { location: "Chicago" }, { ...T, outputSchema: evil });
      expect(!r.ok && r.code).toBe("mcp_protocol_error");
      expect(!r.ok && r.message).toMatch(/declared output schema cannot be used .*backtrack/);
    }
  });

  it("a declared output schema without structuredContent is a protocol error", async () => {
    const r = await (await connect()).callTool("echo", { message: "x" }, { ...T, outputSchema: { type: "object" } });
    expect(!r.ok && r.code).toBe("mcp_protocol_error");
    expect(!r.ok && r.message).toContain("returned no structuredContent");
  });

  it("an unknown tool and invalid arguments are isError results (server-everything answers so), not failures", async () => {
    const c = await connect();
    const unknown = await c.callTool("no-such-tool", {}, T);
    expect(unknown.ok && unknown.value.isError).toBe(true);
    expect(unknown.ok && JSON.stringify(unknown.value.content)).toContain("no-such-tool not found");
    const invalid = await c.callTool("get-sum", { a: "one" }, T);
    expect(invalid.ok && invalid.value.isError).toBe(true);
  });

  it("lists and reads resources in their native shapes", async () => {
    const c = await connect();
    const listed = await c.listResources(undefined, T);
    expect(listed.ok).toBe(true);
    const resources = listed.ok ? (listed.value.resources as Array<{ uri: string; name: string }>) : [];
    expect(resources.length).toBeGreaterThan(0);
    expect(Object.keys(listed.ok ? listed.value : {})).toEqual(["resources"]);
    const read = await c.readResource(resources[0]!.uri, T);
    expect(read.ok && Object.keys(read.value)).toEqual(["contents"]);
    expect(read.ok && (read.value.contents[0] as { uri: string }).uri).toBe(resources[0]!.uri);
  });

  it("reading an unknown resource is a protocol error", async () => {
    const r = await (await connect()).readResource("demo://no/such/resource", T);
    expect(!r.ok && r.code).toBe("mcp_protocol_error");
    expect(!r.ok && r.message).toMatch(
      /^MCP server "everything": resources\/read "demo:\/\/no\/such\/resource" failed: MCP error -32602: .*Resource demo:\/\/no\/such\/resource not found$/,
    );
  });

  it("lists prompts and gets one with arguments", async () => {
    const c = await connect();
    const listed = await c.listPrompts(undefined, T);
    expect(listed.ok && (listed.value.prompts as Array<{ name: string }>).map((p) => p.name)).toContain("args-prompt");
    const got = await c.getPrompt("args-prompt", { city: "Lisbon" }, T);
    expect(got.ok).toBe(true);
    expect(got.ok && JSON.stringify(got.value.messages)).toContain("Lisbon");
    expect(Object.keys(got.ok ? got.value : {}).every((k) => k === "messages" || k === "description")).toBe(true);
    const unknown = await c.getPrompt("no-such-prompt", {}, T);
    expect(!unknown.ok && unknown.code).toBe("mcp_protocol_error");
  });

  it("an operation past its deadline answers mcp_timeout promptly", async () => {
    const c = await connect();
    const started = Date.now();
    const r = await c.callTool("trigger-long-running-operation", { duration: 5, steps: 5 }, { timeoutMs: 300 });
    expect(r).toEqual({
      ok: false,
      code: "mcp_timeout",
      message: 'MCP server "everything": tools/call "trigger-long-running-operation" timed out after 300 ms',
    });
    expect(Date.now() - started).toBeLessThan(3_000);
    // The connection stays usable after a timed-out request.
    expect((await c.callTool("echo", { message: "still here" }, T)).ok).toBe(true);
  });

  it("the caller's AbortSignal ends an operation with mcp_aborted", async () => {
    const c = await connect();
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const r = await c.callTool("trigger-long-running-operation", { duration: 5, steps: 5 }, { timeoutMs: 10_000, signal: controller.signal });
    expect(!r.ok && r.code).toBe("mcp_aborted");
    const already = await c.callTool("echo", { message: "x" }, { timeoutMs: 10_000, signal: controller.signal });
    expect(!already.ok && already.code).toBe("mcp_aborted");
  });

  it("an unreachable server is mcp_unreachable, naming the server and not the URL", async () => {
    const r = await McpClient.connect(target("http://127.0.0.1:1/mcp?key=secret-in-query"), T);
    expect(!r.ok && r.code).toBe("mcp_unreachable");
    expect(!r.ok && r.message).toMatch(/^MCP server "everything": connect failed: the server could not be reached/);
    expect(!r.ok && r.message).not.toContain("secret-in-query");
  });

  it("an HTTP error status is mcp_unreachable with the status", async () => {
    const r = await McpClient.connect(target(EVERYTHING_URL.replace(/\/mcp$/, "/not-mcp")), T);
    expect(r).toEqual({ ok: false, code: "mcp_unreachable", message: 'MCP server "everything": connect failed: the server answered HTTP 404' });
  });

  it("sends resolved env: secrets as headers; they never appear in results or messages", async () => {
    const seen: string[] = [];
    const spy: McpFetch = (input, init) => {
      seen.push(new Headers(init?.headers).get("x-api-key") ?? "(none)");
      return fetch(input, init);
    };
    const c = await connect(target(EVERYTHING_URL, { "x-api-key": "env:MCP_TEST_KEY" }, { MCP_TEST_KEY: "s3cret-value" }), spy);
    const r = await c.callTool("echo", { message: "hi" }, T);
    expect(r.ok).toBe(true);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((v) => v === "s3cret-value")).toBe(true);
    expect(JSON.stringify(r)).not.toContain("s3cret-value");
  });

  it("a closed client answers mcp_unreachable; close is safe twice", async () => {
    const c = await connect();
    await c.close();
    await c.close();
    const r = await c.listTools(T);
    expect(r).toEqual({ ok: false, code: "mcp_unreachable", message: 'MCP server "everything": tools/list failed: the connection is closed' });
  });
});
