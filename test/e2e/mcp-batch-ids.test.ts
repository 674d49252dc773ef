import { SELF } from "cloudflare:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import { afterEach, describe, expect, it } from "vitest";
import { api, TOKEN_A } from "./helpers";

// A JSON-RPC batch on /mcp whose requests repeat an id: the answer could not say which call each
// result belongs to (the transport keys results by id), so the whole batch is refused before
// anything in it runs: 400, one JSON-RPC error -32600 Invalid Request with id null.

const URL_MCP = "http://gateway/mcp";
const open: Client[] = [];

afterEach(async () => {
  for (const c of open.splice(0)) await c.close();
});

async function connect(): Promise<{ header: string; session: string; turnId: string }> {
  const transport = new StreamableHTTPClientTransport(new URL(URL_MCP), {
    fetch: (url, init) => SELF.fetch(url.toString(), init),
    requestInit: { headers: { authorization: `Bearer ${TOKEN_A}` } },
  });
  const client = new Client({ name: "batch-test", version: "1.0.0" }, { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
  await client.connect(transport);
  open.push(client);
  const [key, turnId] = transport.sessionId!.split(".");
  return { header: transport.sessionId!, session: `mcp-${key}`, turnId: turnId! };
}

async function post(body: unknown, sessionHeader?: string) {
  const res = await SELF.fetch(URL_MCP, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${TOKEN_A}`,
      ...(sessionHeader ? { "mcp-session-id": sessionHeader, "mcp-protocol-version": LATEST_PROTOCOL_VERSION } : {}),
    },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

const write = (id: unknown, key: string) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "exec", arguments: { code: `await notes_write({ key: '${key}', text: 'x' }); return '${key}'` } },
});

/** The notes the session holds (what ran), read through /v1 on the same turn. */
async function notes(session: string, turnId: string): Promise<string[]> {
  const r = await api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/exec`, {
    code: "return (await notes_read({ prefix: '' })).map((n) => n.key).sort()",
  });
  return r.json.value;
}

describe("POST /mcp: a JSON-RPC batch with duplicate request ids", () => {
  it("is refused whole before anything runs: 400, -32600 Invalid Request naming the id, id null", async () => {
    const { header, session, turnId } = await connect();
    const r = await post([write(1, "a"), write(2, "b"), write(1, "c")], header);
    expect(r.status).toBe(400);
    expect(r.json).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32600, message: "Invalid Request: the batch repeats request id 1; each request in a batch needs its own id" },
    });
    expect(await notes(session, turnId)).toEqual([]);
  });

  it("string ids too, and a repeat among requests of any method (tools/list)", async () => {
    const { header, session, turnId } = await connect();
    const list = { jsonrpc: "2.0", id: "x", method: "tools/list", params: {} };
    const r = await post([write("x", "a"), list], header);
    expect(r.status).toBe(400);
    expect(r.json.error).toEqual({
      code: -32600,
      message: 'Invalid Request: the batch repeats request id "x"; each request in a batch needs its own id',
    });
    expect(await notes(session, turnId)).toEqual([]);
  });

  it('distinct ids run as before: 1 and "1" are different ids, and notifications carry none', async () => {
    const { header, session, turnId } = await connect();
    const r = await post([write(1, "a"), write("1", "b"), { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 99 } }], header);
    expect(r.status).toBe(200);
    const ids = (r.json as any[]).map((m) => m.id);
    expect(ids).toHaveLength(2);
    expect(ids).toEqual(expect.arrayContaining([1, "1"]));
    for (const m of r.json as any[]) expect(m.result.structuredContent).toMatchObject({ status: "completed" });
    expect(await notes(session, turnId)).toEqual(["a", "b"]);
  });

  it("a batch without a session (initialize) repeating an id is refused the same way, and opens nothing", async () => {
    const init = (id: number) => ({
      jsonrpc: "2.0",
      id,
      method: "initialize",
      params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: "t", version: "1" } },
    });
    const r = await post([init(1), { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }]);
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe(-32600);
    expect(r.json.error.message).toContain("repeats request id 1");
  });
});
