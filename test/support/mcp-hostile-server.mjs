// Vitest globalSetup (runs in Node, before the `gateway` project's workerd tests): a hostile MCP
// server over Streamable HTTP (JSON answers, or server-sent events where named) on a free loopback
// port, the peer of the MCP bound tests (test/e2e/mcp-bounds.test.ts). Tests read its root URL with
// `inject("mcpHostileUrl")`; the path picks what `tools/list` answers (ideas from a hostile tester's
// script):
//
//   /deep/mcp                   tools "fine" and "deep", whose inputSchema nests 3000 levels
//   /wide/<kb>/mcp              one page of tools of about <kb> KB of JSON in all
//   /paged/<pages>/<kb>/mcp     <pages> pages of about <kb> KB each
//   /hugeschema/<kb>/mcp        tools "small" and "huge", whose inputSchema is about <kb> KB
//   anything else               tools "big" and "bigsse" only
//
// Whatever the path, `tools/call` "big" answers `{ mb }` MB of text as JSON, "bigsse" the same as one
// server-sent event, "badjson" a body that is not JSON; `resources/read` answers `{ mb }` MB of text
// for a uri ending in "?mb=<n>".
import http from "node:http";

function deepSchema(levels) {
  // Built as text: the point is a listing nested deeper than any recursive copy survives.
  return (
    '{"type":"object","properties":{"d":' + '{"type":"object","properties":{"a":'.repeat(levels) + '{"type":"string"}' + "}}".repeat(levels) + "}}"
  );
}

/** Tools of 8 KB each (larger past 200 tools, so a listing stays under the 1000-tool cap). */
function sizedTools(kb, prefix) {
  const toolKb = Math.max(8, Math.ceil(kb / 200));
  return Array.from({ length: Math.max(1, Math.round(kb / toolKb)) }, (_, i) => ({
    name: `${prefix}_${i}`,
    description: "padding ".repeat((toolKb * 1024) / 8),
    inputSchema: { type: "object" },
  }));
}

/** A small tool, and one whose input schema has ~<kb> KB of properties (each ~128 bytes of JSON). */
function hugeSchemaTools(kb) {
  const properties = {};
  for (let i = 0; i < Math.round((kb * 1024) / 128); i++) properties[`p${i}`] = { type: "string", description: "d".repeat(96) };
  return [
    { name: "small", description: "A small tool.", inputSchema: { type: "object", properties: { q: { type: "string" } } } },
    { name: "huge", description: "A tool with a huge schema.", inputSchema: { type: "object", properties } },
  ];
}

const SMALL_TOOLS = [
  { name: "big", inputSchema: { type: "object", properties: { mb: { type: "number" } } } },
  { name: "bigsse", inputSchema: { type: "object", properties: { mb: { type: "number" } } } },
  { name: "badjson", inputSchema: { type: "object" } },
];

/** Writes `mb` MB of "A" between `head` and `tail`, waiting for the socket to drain; stops when the client goes. */
async function stream(res, head, mb, tail) {
  res.write(head);
  const chunk = "A".repeat(1 << 20);
  for (let i = 0; i < mb; i++) {
    if (res.destroyed) return;
    if (!res.write(chunk)) await new Promise((resolve) => (res.once("drain", resolve), res.once("close", resolve)));
  }
  if (!res.destroyed) res.end(tail);
}

function listTools(path, id, cursor, reply) {
  const parts = path.split("/").filter(Boolean);
  if (parts[0] === "deep")
    return reply(`{"tools":[{"name":"fine","inputSchema":{"type":"object"}},{"name":"deep","inputSchema":${deepSchema(3000)}}]}`);
  if (parts[0] === "wide") return reply(JSON.stringify({ tools: sizedTools(Number(parts[1]), "wide") }));
  if (parts[0] === "hugeschema") return reply(JSON.stringify({ tools: hugeSchemaTools(Number(parts[1])) }));
  if (parts[0] === "paged") {
    const page = Number(cursor ?? 0);
    const next = page + 1 < Number(parts[1]) ? { nextCursor: String(page + 1) } : {};
    return reply(JSON.stringify({ tools: sizedTools(Number(parts[2]), `p${page}`), ...next }));
  }
  return reply(JSON.stringify({ tools: SMALL_TOOLS }));
}

async function handle(req, res) {
  if (req.method === "DELETE") return res.writeHead(200).end();
  if (req.method !== "POST") return res.writeHead(405).end();
  let body = "";
  for await (const chunk of req) body += chunk;
  let msg;
  try {
    msg = JSON.parse(body);
  } catch {
    return res.writeHead(400).end();
  }
  if (msg.id === undefined) return res.writeHead(202).end();
  const id = JSON.stringify(msg.id);
  const json = { "content-type": "application/json", "mcp-session-id": "hostile-session" };
  const reply = (resultText) => res.writeHead(200, json).end(`{"jsonrpc":"2.0","id":${id},"result":${resultText}}`);
  const mb = Number(msg.params?.arguments?.mb ?? 0);
  switch (msg.method) {
    case "initialize":
      return reply(
        JSON.stringify({
          protocolVersion: msg.params.protocolVersion,
          capabilities: { tools: {}, resources: {} },
          serverInfo: { name: "hostile", version: "1" },
        }),
      );
    case "tools/list":
      return listTools(new URL(req.url, "http://x").pathname, id, msg.params?.cursor, reply);
    case "tools/call":
      if (msg.params.name === "big") {
        res.writeHead(200, json);
        return stream(res, `{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"`, mb, '"}]}}');
      }
      if (msg.params.name === "bigsse") {
        res.writeHead(200, { "content-type": "text/event-stream", "mcp-session-id": "hostile-session" });
        return stream(res, `event: message\ndata: {"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"`, mb, '"}]}}\n\n');
      }
      if (msg.params.name === "badjson") return res.writeHead(200, json).end("{not json");
      return reply('{"content":[{"type":"text","text":"ok"}]}');
    case "resources/read": {
      const size = Number(/[?&]mb=(\d+)/.exec(msg.params.uri)?.[1] ?? 0);
      res.writeHead(200, json);
      return stream(res, `{"jsonrpc":"2.0","id":${id},"result":{"contents":[{"uri":${JSON.stringify(msg.params.uri)},"text":"`, size, '"}]}}');
    }
    default:
      return res.writeHead(200, json).end(`{"jsonrpc":"2.0","id":${id},"error":{"code":-32601,"message":"no"}}`);
  }
}

export default async function setup(project) {
  const server = http.createServer((req, res) => {
    handle(req, res).catch(() => res.destroy());
  });
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  project.provide("mcpHostileUrl", `http://127.0.0.1:${server.address().port}`);
  return async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
}
