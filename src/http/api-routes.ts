import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import type { RouteConfig } from "@hono/zod-openapi";
import { statusOf, type ErrorCode } from "../errors";
import { VERSION } from "../version";
import { MAX_BODY_BYTES } from "../limits";
import {
  ApprovalDecisionBody,
  ApprovalIdParam,
  ChatBody,
  ClientResultBody,
  OpenTurnBody,
  SessionIdParam,
  ToolNameParam,
  TurnIdParam,
} from "./request-schemas";
import {
  ApprovalDecisionAnswer,
  ChatAnswer,
  ChatEvent,
  ClientResultAnswer,
  CodeModeResult,
  DeleteSessionAnswer,
  DeleteTurnAnswer,
  ErrorBody,
  ExecInput,
  FacadeBody,
  Health,
  OpenTurnAnswer,
  PendingApproval,
  ToolResult,
  Trajectory,
  TurnDescription,
  WaitInput,
} from "./response-schemas";

/**
 * Every route of the gateway as an OpenAPI 3.1 operation, from the same zod schemas the routes
 * validate with (request-schemas.ts). The router registers the handlers (app.ts); this module only
 * describes them, and test/e2e/openapi-document.test.ts checks that every route the router serves
 * is here and that real answers match.
 */

const BEARER = [{ bearerAuth: [] }];

function json(schema: z.ZodType, description: string) {
  return { description, content: { "application/json": { schema } } };
}

/** The error answers of a route, one per status (several codes may share one). */
function errors(...codes: ErrorCode[]) {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) byStatus.set(statusOf(code), [...(byStatus.get(statusOf(code)) ?? []), code]);
  return Object.fromEntries([...byStatus].map(([status, list]) => [status, json(ErrorBody, `error: ${list.join(", ")}`)]));
}

/** What every `/v1` route may answer besides its own: authentication, rate limit, configuration, resets. */
const V1_ERRORS: ErrorCode[] = ["unauthorized", "rate_limited", "invalid_config", "internal_error", "session_reset"];
/** …and a route with a body: a bad or oversized body. */
const BODY_ERRORS: ErrorCode[] = [...V1_ERRORS, "invalid_request", "payload_too_large"];

const session = z.object({ sessionId: SessionIdParam });
const turn = z.object({ sessionId: SessionIdParam, turnId: TurnIdParam });

function body(schema: z.ZodType, required = true) {
  return { required, content: { "application/json": { schema } } };
}

export const API_ROUTES: RouteConfig[] = [
  createRoute({
    method: "get",
    path: "/healthz",
    tags: ["operations"],
    summary: "Liveness and configuration check (no token)",
    responses: { 200: json(Health, "the gateway runs and its configuration is valid"), ...errors("invalid_config") },
  }),
  createRoute({
    method: "post",
    path: "/v1/sessions/{sessionId}/turns",
    tags: ["turns"],
    summary: "Open a turn: the model-facing tools (code mode, Tool Search or direct) for this request",
    security: BEARER,
    request: { params: session, body: body(OpenTurnBody, false) },
    responses: { 201: json(OpenTurnAnswer, "the turn is open"), ...errors(...BODY_ERRORS, "quota_exceeded", "surface_rejected") },
  }),
  createRoute({
    method: "post",
    path: "/v1/sessions/{sessionId}/turns/{turnId}/tools/{toolName}",
    tags: ["turns"],
    summary: "Call a model-visible tool of the turn (`exec`, `wait`, Tool Search's, or a direct tool)",
    description: "`exec` and `wait` answer a CodeModeResult: a cell that failed is a `failed` result with status 200, never an HTTP error.",
    security: BEARER,
    request: {
      params: turn.extend({ toolName: ToolNameParam }),
      body: {
        required: false,
        content: {
          "application/json": {
            schema: z.union([ExecInput, WaitInput, z.record(z.string(), z.unknown())]).openapi({ description: "The tool's input." }),
          },
        },
      },
    },
    responses: { 200: json(ToolResult, "the tool's result"), ...errors(...BODY_ERRORS, "not_found", "conflict", "quota_exceeded") },
  }),
  createRoute({
    method: "post",
    path: "/v1/sessions/{sessionId}/turns/{turnId}/client-results",
    tags: ["turns"],
    summary: "Deliver a client tool's result (the next `wait` hands it to the cell)",
    security: BEARER,
    request: { params: turn, body: body(ClientResultBody) },
    responses: { 202: json(ClientResultAnswer, "the result was taken"), ...errors(...BODY_ERRORS, "not_found", "conflict", "quota_exceeded") },
  }),
  createRoute({
    method: "delete",
    path: "/v1/sessions/{sessionId}/turns/{turnId}",
    tags: ["turns"],
    summary: "End a turn: cancel its work, drop its parked snapshots",
    security: BEARER,
    request: { params: turn },
    responses: { 200: json(DeleteTurnAnswer, "the turn is gone"), ...errors(...V1_ERRORS, "invalid_request", "not_found") },
  }),
  createRoute({
    method: "get",
    path: "/v1/sessions/{sessionId}/turns/{turnId}",
    tags: ["turns"],
    summary: "An open turn's model-visible tools (to take up a turn opened earlier)",
    security: BEARER,
    request: { params: turn },
    responses: { 200: json(TurnDescription, "the turn's tools"), ...errors(...V1_ERRORS, "invalid_request", "not_found") },
  }),
  createRoute({
    method: "get",
    path: "/v1/sessions/{sessionId}/turns/{turnId}/trajectory",
    tags: ["turns"],
    summary: "The turn's trajectory: outer calls with their nested calls, model calls, snapshots, limits hit",
    security: BEARER,
    request: { params: turn },
    responses: { 200: json(Trajectory, "the trajectory"), ...errors(...V1_ERRORS, "invalid_request", "not_found") },
  }),
  createRoute({
    method: "get",
    path: "/v1/sessions/{sessionId}/approvals",
    tags: ["approvals"],
    summary: "Pending operator approvals of the session",
    security: BEARER,
    request: { params: session },
    responses: { 200: json(z.array(PendingApproval), "pending approvals, oldest first"), ...errors(...V1_ERRORS, "invalid_request", "not_found") },
  }),
  createRoute({
    method: "post",
    path: "/v1/sessions/{sessionId}/approvals/{approvalId}",
    tags: ["approvals"],
    summary: "Decide one approval",
    security: BEARER,
    request: { params: session.extend({ approvalId: ApprovalIdParam }), body: body(ApprovalDecisionBody) },
    responses: { 200: json(ApprovalDecisionAnswer, "decided"), ...errors(...BODY_ERRORS, "not_found", "conflict") },
  }),
  createRoute({
    method: "post",
    path: "/v1/sessions/{sessionId}/chat",
    tags: ["chat"],
    summary: "Run the agent loop: JSON (the final answer) or server-sent events with `Accept: text/event-stream`",
    description:
      "A request refused before the loop starts is an HTTP error in both modes. With SSE, a failure after the stream started is an `error` event; without, the answer is the error's status with `{ error, turnId?, meta? }` (a provider 429 keeps its `Retry-After`).",
    security: BEARER,
    request: { params: session, body: body(ChatBody) },
    responses: {
      200: {
        description: "the turn's answer (JSON), or its events (SSE: one `ChatEvent` per server-sent event, `event: <type>` and `data: <JSON>`)",
        content: { "application/json": { schema: ChatAnswer }, "text/event-stream": { schema: ChatEvent } },
      },
      ...errors(
        ...BODY_ERRORS,
        "not_found",
        "conflict",
        "quota_exceeded",
        "provider_error",
        "provider_rate_limited",
        "provider_timeout",
        "provider_unavailable",
        "aborted",
      ),
    },
  }),
  createRoute({
    method: "delete",
    path: "/v1/sessions/{sessionId}",
    tags: ["sessions"],
    summary: "Delete everything the session stored",
    security: BEARER,
    request: { params: session },
    responses: { 200: json(DeleteSessionAnswer, "the session is gone"), ...errors(...V1_ERRORS, "invalid_request", "not_found") },
  }),
];

const JSON_RPC = z
  .looseObject({ jsonrpc: z.literal("2.0") })
  .openapi("JsonRpcMessage", { description: "A JSON-RPC message or batch (MCP Streamable HTTP)." });

/** Code mode as an MCP server (`/mcp`, Streamable HTTP): `exec` and `wait` as MCP tools. */
export const MCP_ROUTES: RouteConfig[] = [
  createRoute({
    method: "post",
    path: "/mcp",
    tags: ["mcp"],
    summary: "MCP Streamable HTTP: JSON-RPC requests (`initialize`, `tools/list`, `tools/call` of `exec` and `wait`)",
    security: BEARER,
    request: { body: body(z.union([JSON_RPC, z.array(JSON_RPC)])) },
    responses: {
      200: json(z.union([JSON_RPC, z.array(JSON_RPC)]), "the JSON-RPC answer"),
      202: { description: "a notification was taken" },
      ...errors(...V1_ERRORS),
    },
  }),
  createRoute({
    method: "get",
    path: "/mcp",
    tags: ["mcp"],
    summary: "No server-sent stream is offered: always 405",
    security: BEARER,
    responses: { 405: json(JSON_RPC, "method not allowed (JSON-RPC error)"), ...errors(...V1_ERRORS) },
  }),
  createRoute({
    method: "delete",
    path: "/mcp",
    tags: ["mcp"],
    summary: "End the MCP session named by `mcp-session-id`",
    security: BEARER,
    responses: { 200: { description: "the MCP session ended" }, ...errors(...V1_ERRORS) },
  }),
];

/** The OpenAI- and Anthropic-compatible facades (docs/facades.md), keyed by method and path. */
const FACADE_ROUTES: Record<string, RouteConfig> = {
  "POST /v1/chat/completions": createRoute({
    method: "post",
    path: "/v1/chat/completions",
    tags: ["facades"],
    summary: "OpenAI Chat Completions over code mode (stream or not)",
    security: BEARER,
    request: { body: body(FacadeBody) },
    responses: {
      200: {
        description: "an OpenAI chat completion, or its chunks as server-sent events with `stream: true`",
        content: { "application/json": { schema: FacadeBody }, "text/event-stream": { schema: z.string() } },
      },
      "4XX": json(FacadeBody, "an OpenAI-format error"),
      "5XX": json(FacadeBody, "an OpenAI-format error"),
    },
  }),
  "POST /v1/messages": createRoute({
    method: "post",
    path: "/v1/messages",
    tags: ["facades"],
    summary: "Anthropic Messages over code mode (the token as `x-api-key` or bearer)",
    security: [{ bearerAuth: [] }, { apiKey: [] }],
    request: { body: body(FacadeBody) },
    responses: {
      200: {
        description: "an Anthropic message, or its events with `stream: true`",
        content: { "application/json": { schema: FacadeBody }, "text/event-stream": { schema: z.string() } },
      },
      "4XX": json(FacadeBody, "an Anthropic-format error"),
      "5XX": json(FacadeBody, "an Anthropic-format error"),
    },
  }),
  "GET /v1/models": createRoute({
    method: "get",
    path: "/v1/models",
    tags: ["facades"],
    summary: "The configured models, in OpenAI's list format",
    security: BEARER,
    responses: {
      200: json(FacadeBody, '`{ object: "list", data: [...] }`'),
      "4XX": json(FacadeBody, "an OpenAI-format error"),
      "5XX": json(FacadeBody, "an OpenAI-format error"),
    },
  }),
};

/** The document and the reference page (no token: the document holds no secrets). */
const DOC_ROUTES: RouteConfig[] = [
  createRoute({
    method: "get",
    path: "/openapi.json",
    tags: ["operations"],
    summary: "This OpenAPI 3.1 document",
    responses: { 200: json(z.looseObject({ openapi: z.string() }), "the document") },
  }),
  createRoute({
    method: "get",
    path: "/docs",
    tags: ["operations"],
    summary: "The API reference page (renders /openapi.json)",
    responses: { 200: { description: "HTML", content: { "text/html": { schema: z.string() } } } },
  }),
  createRoute({
    method: "get",
    path: "/docs/init.js",
    tags: ["operations"],
    summary: "The API reference page's own script",
    responses: { 200: { description: "JavaScript", content: { "text/javascript": { schema: z.string() } } } },
  }),
];

/**
 * Registers the description of every route the app serves: the core routes, `/mcp` when mounted,
 * and the facades the gateway mounts (by method and path; a facade route this module does not
 * describe fails here, so a new one cannot go undocumented).
 */
export function documentApi(app: OpenAPIHono<never>, mounted: { mcp: boolean; facades: ReadonlyArray<{ method: string; path: string }> }): void {
  const registry = app.openAPIRegistry;
  registry.registerComponent("securitySchemes", "bearerAuth", { type: "http", scheme: "bearer", description: "A gateway token (GATEWAY_TOKENS)." });
  registry.registerComponent("securitySchemes", "apiKey", {
    type: "apiKey",
    in: "header",
    name: "x-api-key",
    description: "The gateway token, as Anthropic clients send it.",
  });
  // Named on its own: the tool route's answer inlines it, and clients look it up by name.
  registry.register("CodeModeResult", CodeModeResult);
  const routes = [...DOC_ROUTES, ...API_ROUTES, ...(mounted.mcp ? MCP_ROUTES : [])];
  for (const f of mounted.facades) {
    const route = FACADE_ROUTES[`${f.method} ${f.path}`];
    if (!route) throw new Error(`facade route ${f.method} ${f.path} has no OpenAPI description (src/http/api-routes.ts)`);
    routes.push(route);
  }
  for (const route of routes) registry.registerPath(route);
}

/** The document's head: what the gateway is, and that `/v1` and `/mcp` take a bearer token. */
export const DOCUMENT_INFO = {
  openapi: "3.1.0",
  info: {
    title: "codemode-edge",
    version: VERSION,
    description: `Code mode for LLM agents on Cloudflare Workers. Every \`/v1\` and \`/mcp\` request needs \`Authorization: Bearer <token>\`; bodies over ${MAX_BODY_BYTES} bytes are refused with 413. Errors are \`{ "error": { "code", "message", "path"? } }\`.`,
  },
};
