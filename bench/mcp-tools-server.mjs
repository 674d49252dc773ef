#!/usr/bin/env node
/**
 * Bench-only MCP server with a generated catalog of 300 tools (section 7 of `npm run bench`,
 * bench/harness/measure-mcp.ts): a real MCP server, the SDK's `McpServer` behind its Streamable
 * HTTP server transport, stateless (a fresh server and transport per POST, as the SDK's stateless
 * example does), on 127.0.0.1. The tools are the kind a SaaS workspace server exposes: 15
 * services × 4 resources × 5 actions, each with a natural description and a zod input schema
 * (ids, filters, bodies, enums, pagination), so the JSON schemas a direct turn sends are of a
 * realistic size. Every tool answers with a small JSON text block.
 *
 *   node bench/mcp-tools-server.mjs [port]     port 0 (default): any free port
 *   GET /__timings                             → { ms: number[] } the wall time of each MCP request
 *                                                since the last GET (received → response ended), then
 *                                                forgotten: section 8 (bench/harness/measure-chat.ts)
 *                                                takes the server's own time out of the gateway's
 *
 * Prints `listening http://127.0.0.1:<port>/mcp` on stdout once it accepts connections.
 */
import http from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import * as z from "zod/v4";

const SERVICES = [
  ["crm", "the CRM", ["contact", "company", "deal", "note"]],
  ["billing", "the billing system", ["invoice", "customer", "subscription", "refund"]],
  ["tickets", "the support desk", ["ticket", "comment", "macro", "sla_policy"]],
  ["calendar", "the team calendar", ["event", "calendar", "attendee", "room"]],
  ["drive", "the shared drive", ["file", "folder", "permission", "revision"]],
  ["chat", "team chat", ["channel", "message", "reaction", "thread"]],
  ["projects", "the project tracker", ["task", "milestone", "project", "label"]],
  ["hr", "the HR system", ["employee", "time_off_request", "team", "review"]],
  ["inventory", "the inventory service", ["product", "warehouse", "stock_level", "supplier"]],
  ["analytics", "product analytics", ["dashboard", "report", "segment", "metric"]],
  ["marketing", "the marketing platform", ["campaign", "audience", "email_template", "landing_page"]],
  ["repo", "the source host", ["repository", "pull_request", "branch", "release"]],
  ["deploy", "the deployment service", ["environment", "deployment", "secret", "pipeline"]],
  ["monitoring", "the monitoring stack", ["alert", "incident", "monitor", "status_page"]],
  ["docs", "the knowledge base", ["article", "space", "attachment", "template"]],
];

const human = (s) => s.replace(/_/g, " ");

const ACTIONS = {
  list: (svc, res) => ({
    description: `List ${human(res)}s in ${svc}, newest first. Supports filtering by owner, status and a free-text query, and pagination with a cursor.`,
    input: {
      query: z
        .string()
        .max(200)
        .optional()
        .describe(`Free-text search over ${human(res)} names and descriptions`),
      owner_id: z.string().optional().describe("Only items owned by this user id"),
      status: z.enum(["active", "archived", "draft"]).optional().describe("Only items in this status"),
      limit: z.number().int().min(1).max(100).default(25).describe("Page size"),
      cursor: z.string().optional().describe("Cursor from the previous page's next_cursor"),
    },
  }),
  get: (svc, res) => ({
    description: `Get one ${human(res)} from ${svc} by id, with its fields, owner and timestamps.`,
    input: {
      id: z.string().describe(`The ${human(res)} id`),
      include: z
        .array(z.enum(["owner", "history", "links"]))
        .optional()
        .describe("Related data to embed in the answer"),
    },
  }),
  create: (svc, res) => ({
    description: `Create a ${human(res)} in ${svc}. Returns the new ${human(res)} with its id. Fails if a ${human(res)} with the same name already exists.`,
    input: {
      name: z
        .string()
        .min(1)
        .max(200)
        .describe(`Name of the ${human(res)}`),
      description: z.string().max(5000).optional().describe("Longer description, markdown allowed"),
      owner_id: z.string().optional().describe("User id of the owner (default: the caller)"),
      tags: z.array(z.string()).max(20).optional().describe("Free-form tags"),
      metadata: z.record(z.string(), z.string()).optional().describe("Custom key/value fields"),
    },
  }),
  update: (svc, res) => ({
    description: `Update fields of an existing ${human(res)} in ${svc}. Only the fields given change; returns the updated ${human(res)}.`,
    input: {
      id: z.string().describe(`The ${human(res)} id`),
      name: z.string().min(1).max(200).optional().describe("New name"),
      description: z.string().max(5000).optional().describe("New description"),
      status: z.enum(["active", "archived", "draft"]).optional().describe("New status"),
      tags: z.array(z.string()).max(20).optional().describe("Replaces the tags"),
    },
  }),
  delete: (svc, res) => ({
    description: `Delete a ${human(res)} from ${svc}. Soft delete: it can be restored for 30 days unless permanent is true.`,
    input: {
      id: z.string().describe(`The ${human(res)} id`),
      permanent: z.boolean().default(false).describe("Skip the 30-day restore window"),
    },
  }),
};

/** The 300 tool definitions: name, description, zod input shape. Built once. */
const TOOLS = SERVICES.flatMap(([service, label, resources]) =>
  resources.flatMap((res) => Object.entries(ACTIONS).map(([action, make]) => ({ name: `${service}_${res}_${action}`, ...make(label, res) }))),
);

function mcpServer() {
  const server = new McpServer({ name: "bench-workspace", version: "1.0.0" });
  for (const tool of TOOLS) {
    server.registerTool(tool.name, { description: tool.description, inputSchema: tool.input }, async (args) => ({
      content: [{ type: "text", text: JSON.stringify({ tool: tool.name, ok: true, args }) }],
    }));
  }
  return server;
}

/** Wall time of each MCP request (received → response ended) since the last GET /__timings. */
let timings = [];

const httpServer = http.createServer(async (req, res) => {
  if (req.method === "GET" && req.url === "/__timings") {
    const body = JSON.stringify({ ms: timings });
    timings = [];
    res.writeHead(200, { "content-type": "application/json" }).end(body);
    return;
  }
  const received = performance.now();
  res.on("finish", () => timings.push(performance.now() - received));
  if (req.method !== "POST" || !req.url?.startsWith("/mcp")) {
    res
      .writeHead(405, { "content-type": "application/json", allow: "POST" })
      .end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message: "Method not allowed." }, id: null }));
    return;
  }
  const server = mcpServer();
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  res.on("close", () => {
    void transport.close();
    void server.close();
  });
  try {
    await server.connect(transport);
    await transport.handleRequest(req, res);
  } catch (error) {
    if (!res.headersSent) res.writeHead(500).end(String(error));
  }
});

httpServer.listen(Number(process.argv[2] ?? 0), "127.0.0.1", () => {
  console.log(`listening http://127.0.0.1:${httpServer.address().port}/mcp`);
});
process.stdin.on("end", () => process.exit(0));
process.stdin.resume();
