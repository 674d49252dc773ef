import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { OpenTurnAnswer, SessionFailure, SessionReply, TrustedResult, TurnSurface } from "../session";
import { GatewayError, statusOf } from "../errors";
import { callSessionTool, jsonValueProblem, rateLimitedMessage, type McpRequestContext, type SessionStub } from "../http";
import { MAX_BODY_BYTES } from "../limits";
import { logRecord } from "../observability";
import { VERSION } from "../version";
import { checkBatchIds } from "./batch-ids";
import { callProblem, checkedRequests } from "./checked-requests";
import { callToolResult } from "./call-tool-result";
import { formatMcpSessionId, mcpCodemodeSessionId, parseMcpSessionId, type McpSessionRef } from "./mcp-session-id";
import { loadMcpServerSdk, type McpServerSdk } from "./mcp-server-sdk";

/** What one `/mcp` request runs with: the authenticated tenant and the session objects. */

const SERVER_INFO = { name: "codemode-edge", version: VERSION };

/** JSON-RPC 2.0's own error codes (the SDK's `ErrorCode` has them too; answers built before it loads use these). */
const INVALID_REQUEST = -32600;
const INTERNAL_ERROR = -32603;

/**
 * `POST /mcp` (and `DELETE`, `GET`): code mode as an MCP server over Streamable HTTP, with the
 * SDK's web-standard transport. The Worker keeps nothing between requests, so each request gets
 * a fresh transport and server:
 * - `initialize` (no `mcp-session-id`): a stateful transport mints the key, a turn is opened in
 *   the new codemode session `mcp-<key>` with the config's default agent and model, and the
 *   session id answered is `<key>.<turnId>`. A default turn without code mode is refused (409).
 * - anything else: the session id is checked against the session object (unknown, expired or
 *   another tenant's: the transport's 404), then a stateless transport handles the messages
 *   for that turn. `DELETE` deletes the codemode session.
 * - `GET` is 405: the server never sends unprompted messages, so it offers no SSE stream.
 * Answers are JSON (`enableJsonResponse`), never SSE: a tool call answers when its cell does.
 */
export async function handleMcpRequest(req: Request, ctx: McpRequestContext): Promise<Response> {
  if (req.method !== "POST" && req.method !== "DELETE") return methodNotAllowed();
  // Before anything runs (a turn opened, a call charged or started): a batch repeating an id is refused whole.
  const batch = await checkBatchIds(req);
  if (!batch.ok) return batch.response;
  const sdk = await loadMcpServerSdk();
  const header = req.headers.get("mcp-session-id");
  return header === null ? initialize(sdk, req, ctx, batch.parsedBody) : inSession(sdk, req, header, ctx, batch.parsedBody);
}

function stubFor(ctx: McpRequestContext, ref: Pick<McpSessionRef, "sessionId">): SessionStub {
  // The same object naming as /v1: tenant + session id, so another tenant's id names another object.
  return ctx.sessions.get(ctx.sessions.idFromName(`${ctx.tenant}:${ref.sessionId}`));
}

async function initialize(sdk: McpServerSdk, req: Request, ctx: McpRequestContext, parsedBody: unknown): Promise<Response> {
  let refused: Response | undefined;
  const transport = new sdk.WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: () => crypto.randomUUID(),
    enableJsonResponse: true,
    maxRequestBodySize: MAX_BODY_BYTES,
    // Runs once the transport has accepted a well-formed initialize, before the server answers it.
    onsessioninitialized: async (key) => {
      // A throw here would become the transport's "400 Parse error" carrying the error's text.
      const opened = await openSessionTurn(ctx, key).catch((error: unknown) => {
        logRecord("host_error", { where: "mcp.initialize", error, requestId: ctx.requestId, tenant: ctx.tenant });
        return { ok: false as const, response: gatewayError("internal_error", "internal error") };
      });
      if (!opened.ok) {
        refused = opened.response;
        throw new Error("initialize refused");
      }
      // Read when the answer is built: the client gets the id that names the turn too.
      transport.sessionId = formatMcpSessionId(key, opened.turnId);
    },
  });
  const server = createServer(sdk, undefined);
  await server.connect(transport);
  try {
    const response = await transport.handleRequest(req, { parsedBody });
    return refused ?? response;
  } finally {
    await server.close();
  }
}

/** The turn behind a new MCP session; code mode must be engaged for it, or nothing is kept. */
async function openSessionTurn(ctx: McpRequestContext, key: string): Promise<{ ok: true; turnId: string } | { ok: false; response: Response }> {
  const sessionId = mcpCodemodeSessionId(key);
  const stub = stubFor(ctx, { sessionId });
  // RPC results are typed as their serialized form; the reply is the plain union.
  const opened = (await stub.openTurn(ctx.tenant, sessionId, {})) as SessionReply<OpenTurnAnswer>;
  if (!opened.ok) return { ok: false, response: gatewayError(opened.reason, opened.message) };
  if (!opened.body.codeModeEngaged) {
    await stub.deleteSession();
    const message =
      "code mode is not engaged for this gateway's default agent and model (tools.codeMode in CODEMODE_CONFIG); /mcp serves only code mode";
    return { ok: false, response: jsonRpcError(409, INVALID_REQUEST, message, { code: "code_mode_not_engaged" }) };
  }
  return { ok: true, turnId: opened.body.turnId };
}

async function inSession(sdk: McpServerSdk, req: Request, header: string, ctx: McpRequestContext, parsedBody: unknown): Promise<Response> {
  const ref = parseMcpSessionId(header);
  if (!ref) return sessionNotFound();
  const stub = stubFor(ctx, ref);
  const surface = (await stub.describeTurn(ctx.tenant, ref.turnId)) as SessionReply<TurnSurface>;
  if (!surface.ok) return surface.reason === "not_found" ? sessionNotFound() : gatewayError(surface.reason, surface.message);
  const transport = new sdk.WebStandardStreamableHTTPServerTransport({
    // Stateless for the SDK: the session was checked above, against the session object.
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
    maxRequestBodySize: MAX_BODY_BYTES,
    // DELETE: the codemode session was made for this MCP session alone; all of it goes.
    onsessionclosed: async () => {
      const deleted = await stub.deleteSession();
      if (!deleted.ok && deleted.reason !== "not_found") throw new GatewayError("internal_error", deleted.message);
    },
  });
  const server = createServer(sdk, { ctx, ref, surface: surface.body, signal: req.signal });
  await server.connect(transport);
  try {
    return await transport.handleRequest(req, { parsedBody });
  } finally {
    await server.close();
  }
}

type SessionScope = { ctx: McpRequestContext; ref: McpSessionRef; surface: TurnSurface; signal: AbortSignal };

/** One request's server: `tools/list` and `tools/call` for the session's turn (none before initialize). */
function createServer(sdk: McpServerSdk, scope: SessionScope | undefined): Server {
  const { Server, CfWorkerJsonSchemaValidator, ListToolsRequestSchema, CallToolRequestSchema, McpError, ErrorCode } = sdk;
  // Ajv compiles validators with `new Function`, which workerd forbids: the SDK validates with @cfworker/json-schema.
  const server = new Server(SERVER_INFO, { capabilities: { tools: { listChanged: false } }, jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
  if (!scope) return server;
  const tools: Tool[] = scope.surface.tools.map((t) => ({
    name: t.name,
    description: t.description,
    inputSchema: t.parameters as Tool["inputSchema"],
  }));
  server.setRequestHandler(checkedRequests(sdk, ListToolsRequestSchema, "tools/list"), () => ({ tools }));
  let calls = 0;
  server.setRequestHandler(checkedRequests(sdk, CallToolRequestSchema, "tools/call", callProblem), async (request) => {
    // Numbered as they arrive (handlers start in message order), before anything is awaited.
    const n = ++calls;
    const { name, arguments: input } = request.params;
    if (!tools.some((t) => t.name === name)) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
    if (n > 1) {
      // Refused alone, as data in the batch's answer: the other calls keep their results.
      const verdict = await scope.ctx.chargeToolCall();
      if (!verdict.allowed) {
        const data = { code: "rate_limited", retryAfterSeconds: verdict.retryAfterSeconds };
        throw new McpError(ErrorCode.InvalidRequest, rateLimitedMessage(verdict.retryAfterSeconds), data);
      }
    }
    // As on /v1 (parseJsonBody): refused here, before the RPC to the session object would overflow its stack on it.
    const problem = jsonValueProblem(input ?? {}, "arguments");
    if (problem) throw new McpError(ErrorCode.InvalidParams, problem.message, { code: "invalid_request", path: problem.path });
    const { ctx, ref } = scope;
    let reply: SessionReply<TrustedResult>;
    try {
      reply = await callSessionTool({
        stub: () => stubFor(ctx, ref),
        tenant: ctx.tenant,
        turnId: ref.turnId,
        toolName: name,
        input: input ?? {},
        requestId: `${ctx.requestId}:${n}`,
        signal: scope.signal,
      });
    } catch (error) {
      if (error instanceof GatewayError) throw new McpError(ErrorCode.InternalError, error.message, { code: error.code });
      throw error;
    }
    if (!reply.ok) {
      // The turn went away under this session (deleted, expired): the session is over.
      if (reply.reason === "not_found") throw new McpError(ErrorCode.InvalidRequest, `Session not found: ${reply.message}`);
      throw new McpError(ErrorCode.InternalError, reply.message, { code: reply.reason });
    }
    const { result, untrusted } = reply.body;
    return callToolResult(result, untrusted);
  });
  return server;
}

/** The transport's own answer for an unknown session id, so clients see the standard 404. */
function sessionNotFound(): Response {
  return jsonRpcError(404, -32001, "Session not found");
}

function methodNotAllowed(): Response {
  const response = jsonRpcError(405, -32000, "Method not allowed.");
  response.headers.set("Allow", "POST, DELETE");
  return response;
}

/** A session reply's failure, with the status /v1 gives the same reason. */
function gatewayError(reason: SessionFailure | "internal_error", message: string): Response {
  return jsonRpcError(statusOf(reason), INTERNAL_ERROR, message, { code: reason });
}

function jsonRpcError(status: number, code: number, message: string, data?: unknown): Response {
  const error = { code, message, ...(data !== undefined ? { data } : {}) };
  return new Response(JSON.stringify({ jsonrpc: "2.0", error, id: null }), { status, headers: { "content-type": "application/json" } });
}
