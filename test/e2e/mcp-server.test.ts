import { SELF } from "cloudflare:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { LATEST_PROTOCOL_VERSION, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import { afterEach, describe, expect, it } from "vitest";
import type { McpRequestContext } from "../../src/http";
import { handleMcpRequest } from "../../src/mcp-server";
import { api, sessionId, TOKEN_A, TOKEN_B } from "./helpers";

// Code mode as an MCP server: the SDK's own client, its fetch forwarded to the gateway in workerd.

const URL_MCP = new URL("http://gateway/mcp");
const UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";
const open: Client[] = [];

async function connect(token: string | null = TOKEN_A): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(URL_MCP, {
    fetch: (url, init) => SELF.fetch(url.toString(), init),
    requestInit: token ? { headers: { authorization: `Bearer ${token}` } } : {},
  });
  const client = new Client({ name: "codemode-test", version: "1.0.0" }, { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
  await client.connect(transport);
  open.push(client);
  return { client, transport };
}

/** `mcp-session-id` → the codemode session and turn it names (`<key>.<turnId>`, session `mcp-<key>`). */
function codemodeIds(transport: StreamableHTTPClientTransport): { session: string; turnId: string } {
  const [key, turnId] = transport.sessionId!.split(".");
  return { session: `mcp-${key}`, turnId: turnId! };
}

async function call(client: Client, name: string, args: Record<string, unknown>) {
  const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const s = r.structuredContent as any;
  // The text block is the JSON of the same object.
  expect(r.content).toHaveLength(1);
  expect(JSON.parse((r.content[0] as { text: string }).text)).toEqual(s);
  return { result: r, s };
}

/** A raw MCP POST, for what the SDK client would never send. */
async function post(body: unknown, headers: Record<string, string> = {}, token: string | null = TOKEN_A) {
  const res = await SELF.fetch(URL_MCP.toString(), {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...headers,
    },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined, headers: res.headers };
}

const listTools = { jsonrpc: "2.0", id: 7, method: "tools/list", params: {} };
const sessionHeaders = (id: string) => ({ "mcp-session-id": id, "mcp-protocol-version": LATEST_PROTOCOL_VERSION });

afterEach(async () => {
  for (const c of open.splice(0)) await c.close();
});

describe("POST /mcp: code mode over MCP", () => {
  it("initialize mints a session id naming a codemode session and its turn", async () => {
    const { client, transport } = await connect();
    expect(transport.sessionId).toMatch(new RegExp(`^${UUID}\\.${UUID}$`));
    expect(client.getServerVersion()?.name).toBe("codemode-edge");
    expect(client.getServerCapabilities()?.tools).toBeDefined();
    // The turn is a real turn of session mcp-<key> under this tenant: /v1 reaches it too.
    const { session, turnId } = codemodeIds(transport);
    const r = await api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/exec`, { code: "return 'via v1'" });
    expect(r.json).toMatchObject({ status: "completed", value: "via v1" });
  });

  it("tools/list is exactly exec and wait, as the turn surface describes them", async () => {
    const { client } = await connect();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["exec", "wait"]);
    // A /v1 turn opened with the same defaults answers the surface the model would be sent.
    const opened = await api("POST", `/v1/sessions/${sessionId()}/turns`, {});
    expect(opened.status).toBe(201);
    const surface = opened.json.tools as { name: string; description: string; parameters: unknown }[];
    expect(tools.map((t) => ({ name: t.name, description: t.description, parameters: t.inputSchema }))).toEqual(surface);
    // The quick index of the caller's catalog (the demo plugin) is in exec's description.
    expect(tools[0]!.description).toContain("shipping_list");
  });

  it("exec runs a cell: the CodeModeResult as text, as structuredContent, not an error", async () => {
    const { client } = await connect();
    const { result, s } = await call(client, "exec", { code: "return 1 + 2" });
    expect(s).toMatchObject({ status: "completed", value: 3 });
    expect(result.isError).toBe(false);
  });

  it("a JSON-RPC batch (MCP 2025-03-26 and older) answers every call; each tools/call counts against the rate limit (test/ratelimit)", async () => {
    const { transport } = await connect();
    const exec = (id: number) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "exec", arguments: { code: `return ${id}` } } });
    const r = await post([exec(1), listTools, exec(2)], sessionHeaders(transport.sessionId!));
    expect(r.status).toBe(200);
    const byId = new Map((r.json as any[]).map((m) => [m.id, m]));
    expect(byId.get(1).result.structuredContent).toMatchObject({ status: "completed", value: 1 });
    expect(byId.get(2).result.structuredContent).toMatchObject({ status: "completed", value: 2 });
    expect(byId.get(7).result.tools.map((t: any) => t.name)).toEqual(["exec", "wait"]);
  });

  it("exec runs the caller's catalog tools in its session", async () => {
    const { client } = await connect();
    const { s } = await call(client, "exec", { code: "const s = await shipping_list({}); return s.length > 0;" });
    expect(s).toMatchObject({ status: "completed", value: true });
  });

  it("a failing cell is a result with isError and the failure's code", async () => {
    const { client } = await connect();
    const thrown = await call(client, "exec", { code: "throw new Error('boom')" });
    expect(thrown.result.isError).toBe(true);
    expect(thrown.s.status).toBe("failed");
    expect(thrown.s.error).toContain("boom");
    // exec's own input checks: a cell without code fails with invalid_input (a result, not a JSON-RPC error).
    const noCode = await call(client, "exec", { language: "javascript" });
    expect(noCode.result.isError).toBe(true);
    expect(noCode.s).toMatchObject({ status: "failed", code: "invalid_input" });
  });

  it("a cell parked on yield_control() answers waiting; wait with its runId resumes it", async () => {
    const { client } = await connect();
    const parked = await call(client, "exec", { code: "const n = 20; await yield_control(); return n + 22;" });
    expect(parked.s).toMatchObject({ status: "waiting", reason: "yield" });
    expect(parked.result.isError).toBe(false);
    const done = await call(client, "wait", { runId: parked.s.runId });
    expect(done.s).toMatchObject({ status: "completed", value: 42 });
    // Settled: a second wait finds nothing, as over HTTP.
    const again = await call(client, "wait", { runId: parked.s.runId });
    expect(again.s).toMatchObject({ status: "failed", error: "code mode run is unavailable or expired." });
    expect(again.result.isError).toBe(true);
  });

  it("two MCP sessions are two codemode sessions: tool data and parked runs stay apart", async () => {
    const a = await connect();
    const b = await connect();
    expect(a.transport.sessionId).not.toBe(b.transport.sessionId);
    await call(a.client, "exec", { code: "await notes_write({ key: 'k', text: 'only in a' }); return 1;" });
    const inA = await call(a.client, "exec", { code: "return await notes_read({ key: 'k' });" });
    const inB = await call(b.client, "exec", { code: "return await notes_read({ key: 'k' });" });
    expect(JSON.stringify(inA.s.value)).toContain("only in a");
    expect(JSON.stringify(inB.s.value)).not.toContain("only in a");
    const parked = await call(a.client, "exec", { code: "await yield_control(); return 'a';" });
    const stolen = await call(b.client, "wait", { runId: parked.s.runId });
    expect(stolen.s).toMatchObject({ status: "failed", error: "code mode run belongs to a different session." });
    expect((await call(a.client, "wait", { runId: parked.s.runId })).s).toMatchObject({ status: "completed", value: "a" });
  });

  it("DELETE ends the session: its codemode session is deleted and the id is unknown after", async () => {
    const { client, transport } = await connect();
    await call(client, "exec", { code: "await notes_write({ key: 'k', text: 'x' }); return 1;" });
    const id = transport.sessionId!;
    const { session } = codemodeIds(transport);
    await transport.terminateSession();
    expect(transport.sessionId).toBeUndefined();
    const after = await post(listTools, sessionHeaders(id));
    expect(after.status).toBe(404);
    expect(after.json.error).toMatchObject({ code: -32001, message: "Session not found" });
    // Everything the session stored is gone: /v1 finds nothing to delete.
    expect((await api("DELETE", `/v1/sessions/${session}`)).status).toBe(404);
  });

  it("another tenant's session id is unknown to it (404), and still works for its owner", async () => {
    const { transport } = await connect(TOKEN_A);
    const id = transport.sessionId!;
    const asB = await post(listTools, sessionHeaders(id), TOKEN_B);
    expect(asB.status).toBe(404);
    expect(asB.json.error.code).toBe(-32001);
    const asA = await post(listTools, sessionHeaders(id), TOKEN_A);
    expect(asA.status).toBe(200);
    expect(asA.headers.get("x-request-id")).toMatch(new RegExp(`^${UUID}$`));
    expect(asA.json.result.tools.map((t: { name: string }) => t.name)).toEqual(["exec", "wait"]);
  });

  it("unknown and malformed session ids get the transport's 404", async () => {
    const unknown = `${crypto.randomUUID()}.${crypto.randomUUID()}`;
    for (const id of [unknown, "not-a-session", `${crypto.randomUUID()}`]) {
      const r = await post(listTools, sessionHeaders(id));
      expect(r.status, id).toBe(404);
      expect(r.json).toMatchObject({ jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null });
    }
  });

  it("no token or a wrong token is 401 in the API's error shape, before any session is made", async () => {
    const init = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: "t", version: "1" } },
    };
    const none = await post(init, {}, null);
    expect(none.status).toBe(401);
    expect(none.json).toEqual({ error: { code: "unauthorized", message: "missing bearer token" } });
    expect(none.headers.get("mcp-session-id")).toBeNull();
    const wrong = await post(init, {}, "not-a-real-token");
    expect(wrong.status).toBe(401);
    expect(wrong.json.error.code).toBe("unauthorized");
    // The SDK client surfaces it as an HTTP error.
    const err = await connect(null).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StreamableHTTPError);
    expect((err as StreamableHTTPError).code).toBe(401);
  });

  it("malformed JSON-RPC is refused with the transport's errors; unknown tools are invalid params", async () => {
    const notJson = await post("{not json");
    expect(notJson.status).toBe(400);
    expect(notJson.json.error.code).toBe(-32700);
    const notRpc = await post({ hello: "world" });
    expect(notRpc.status).toBe(400);
    expect(notRpc.json.error.code).toBe(-32700);
    // Not an initialize and no session id: the session was never initialized.
    const early = await post(listTools);
    expect(early.status).toBe(400);
    expect(early.json.error.message).toContain("Server not initialized");
    const { client, transport } = await connect();
    await expect(client.callTool({ name: "shipping_list", arguments: {} })).rejects.toThrow(/Unknown tool: shipping_list/);
    const bad = await post({ jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: "nope" } }, sessionHeaders(transport.sessionId!));
    expect(bad.status).toBe(200);
    expect(bad.json).toMatchObject({ id: 9, error: { code: -32602 } });
  });

  it("a tools/call or tools/list whose params are malformed is invalid params (-32602) naming the field in one sentence, not an internal error", async () => {
    const { client, transport } = await connect();
    const headers = sessionHeaders(transport.sessionId!);
    const cases: Array<[unknown, string]> = [
      [{ name: "exec", arguments: "nope" }, "tools/call params.arguments must be an object, not a string"],
      [{ name: "exec", arguments: [1] }, "tools/call params.arguments must be an object, not an array"],
      [{ name: "exec", arguments: null }, "tools/call params.arguments must be an object, not null"],
      [{ name: 7, arguments: {} }, "tools/call params.name must be a string (the tool's name)"],
    ];
    for (const [params, message] of cases) {
      const r = await post({ jsonrpc: "2.0", id: 21, method: "tools/call", params }, headers);
      expect(r.status).toBe(200);
      expect(r.json).toEqual({ jsonrpc: "2.0", id: 21, error: { code: -32602, message: `MCP error -32602: ${message}` } });
    }
    // Params that are not an object are not a JSON-RPC request at all: the transport's parse error, as for other malformed messages.
    const notParams = await post({ jsonrpc: "2.0", id: 25, method: "tools/call", params: "exec" }, headers);
    expect(notParams.status).toBe(400);
    expect(notParams.json.error.code).toBe(-32700);
    // A field the SDK's schema checks beyond those: its first issue, on one line.
    const task = await post({ jsonrpc: "2.0", id: 22, method: "tools/call", params: { name: "exec", arguments: {}, task: { ttl: "x" } } }, headers);
    expect(task.json.error.code).toBe(-32602);
    expect(task.json.error.message).toMatch(/^MCP error -32602: tools\/call params\.task\.ttl: [^\n]+$/);
    // tools/list the same way (its cursor is a string).
    const list = await post({ jsonrpc: "2.0", id: 26, method: "tools/list", params: { cursor: 5 } }, headers);
    expect(list.json.error.code).toBe(-32602);
    expect(list.json.error.message).toMatch(/^MCP error -32602: tools\/list params\.cursor: [^\n]+$/);
    // No params at all, in a batch beside a good call: each answered on its own.
    const batch = await post(
      [
        { jsonrpc: "2.0", id: 23, method: "tools/call" },
        { jsonrpc: "2.0", id: 24, method: "tools/call", params: { name: "exec", arguments: { code: "return 2 + 2" } } },
      ],
      headers,
    );
    const byId = new Map((batch.json as Array<{ id: number }>).map((m) => [m.id, m]));
    expect(byId.get(23)).toMatchObject({
      error: { code: -32602, message: "MCP error -32602: tools/call params must be an object with the tool's name and arguments" },
    });
    expect(JSON.parse((byId.get(24) as any).result.content[0].text)).toMatchObject({ status: "completed", value: 4 });
    expect((await call(client, "exec", { code: "return 1 + 1" })).s).toMatchObject({ status: "completed", value: 2 });
  });

  it("arguments nested past the JSON depth bound are invalid params naming the field; the session keeps working", async () => {
    const { client, transport } = await connect();
    const deep = JSON.parse("[".repeat(5000) + "]".repeat(5000));
    for (const name of ["exec", "wait"]) {
      const r = await post(
        { jsonrpc: "2.0", id: 11, method: "tools/call", params: { name, arguments: { code: "return 1", runId: "cm_x", x: deep } } },
        sessionHeaders(transport.sessionId!),
      );
      expect(r.status).toBe(200);
      expect(r.json).toMatchObject({
        id: 11,
        error: { code: -32602, message: "MCP error -32602: arguments.x is nested deeper than 256 levels", data: { code: "invalid_request" } },
      });
    }
    // Raw text: JSON.stringify would send 1e400 as null.
    const big = await post(
      '{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"exec","arguments":{"code":"return 1","n":[1,2,1e400]}}}',
      sessionHeaders(transport.sessionId!),
    );
    expect(big.json.error.message).toBe("MCP error -32602: arguments.n[2] is a number outside the range JSON values can carry (finite doubles only)");
    expect((await call(client, "exec", { code: "return 1 + 1" })).s).toMatchObject({ status: "completed", value: 2 });
  });

  it("GET offers no SSE stream (405); other methods are 405 too", async () => {
    const { transport } = await connect();
    for (const method of ["GET", "PUT"]) {
      const res = await SELF.fetch(URL_MCP.toString(), {
        method,
        headers: { authorization: `Bearer ${TOKEN_A}`, accept: "text/event-stream", ...sessionHeaders(transport.sessionId!) },
      });
      expect(res.status, method).toBe(405);
      expect(res.headers.get("allow")).toBe("POST, DELETE");
      await res.body?.cancel();
    }
  });
});

const unlimited = async () => ({ allowed: true }) as const;

describe("handleMcpRequest: a default turn without code mode", () => {
  it("refuses initialize (409, named reason) and deletes the session it opened", async () => {
    const deleted: string[] = [];
    const opened: string[] = [];
    // The session namespace seam, answering as a config with code mode off would.
    const sessions = {
      idFromName: (name: string) => name,
      get: (name: string) => ({
        openTurn: async (_tenant: string, session: string) => {
          opened.push(`${name}|${session}`);
          return { ok: true, body: { turnId: crypto.randomUUID(), codeModeEngaged: false, tools: [], telemetry: {} } };
        },
        deleteSession: async () => {
          deleted.push(name);
          return { ok: true, body: { deleted: true } };
        },
      }),
    } as unknown as McpRequestContext["sessions"];
    const transport = new StreamableHTTPClientTransport(URL_MCP, {
      fetch: (url, init) => handleMcpRequest(new Request(url, init), { tenant: "tenant-x", requestId: "r1", sessions, chargeToolCall: unlimited }),
    });
    const client = new Client({ name: "t", version: "1" }, { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
    const err = await client.connect(transport).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StreamableHTTPError);
    expect((err as StreamableHTTPError).code).toBe(409);
    expect(String((err as Error).message)).toContain("code_mode_not_engaged");
    expect(transport.sessionId).toBeUndefined();
    expect(opened).toHaveLength(1);
    expect(opened[0]).toMatch(new RegExp(`^tenant-x:mcp-${UUID}\\|mcp-${UUID}$`));
    expect(deleted).toEqual([opened[0]!.split("|")[0]]);
  });

  it("a session object that throws while the turn opens is a 500 internal error, its text not echoed", async () => {
    const sessions = {
      idFromName: (name: string) => name,
      get: () => ({
        openTurn: async () => {
          throw new Error("storage exploded: secret detail");
        },
      }),
    } as unknown as McpRequestContext["sessions"];
    const init = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: "t", version: "1" } },
    };
    const res = await handleMcpRequest(
      new Request(URL_MCP, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify(init),
      }),
      { tenant: "tenant-x", requestId: "r2", sessions, chargeToolCall: unlimited },
    );
    expect(res.status).toBe(500);
    expect(res.headers.get("mcp-session-id")).toBeNull();
    const text = await res.text();
    expect(JSON.parse(text).error).toMatchObject({ code: -32603, message: "internal error", data: { code: "internal_error" } });
    expect(text).not.toContain("secret detail");
  });
});
