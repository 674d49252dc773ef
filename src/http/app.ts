import { Hono, type Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { SessionReply, SessionRpc } from "../session";
import {
  CORS_DEFAULTS,
  loadGatewayConfig,
  RATE_LIMIT_DEFAULTS,
  resolveActivation,
  type CodemodeConfig,
  type ConfigResult,
  type GatewayConfig,
} from "../config";
import { cors } from "./cors";
import { authenticate, loadGatewayTokens } from "./auth";
import { GatewayError, sessionResetMessage, type ErrorCode } from "../errors";
import { httpStatus } from "./http-status";
import { parseJsonBody, readBodyText } from "./json-body";
import { callSessionTool } from "./session-call";
import { chargeTenant, tenantRateLimit, type TenantCharge } from "./rate-limit";
import { loadValidators } from "./request-validators";
import { chatResponse, wantsSse } from "./chat-response";
import type { HealthAnswer } from "./health";
import { VERSION } from "../version";
import { APPROVAL_ID, SESSION_ID, SESSION_ID_RULE, TOOL_NAME, TURN_ID } from "./request-patterns";
import { DOCS_HEADERS, DOCS_HTML, DOCS_INIT_JS, DOCS_INIT_PATH } from "./docs-page";
import { MAX_BODY_BYTES } from "../limits";
import { logRecord, requestLog, type RequestLogVars } from "../observability";

/** The Worker's bindings. */
export type GatewayEnv = {
  SESSIONS: DurableObjectNamespace<SessionRpc & Rpc.DurableObjectBranded>;
  GATEWAY_TOKENS?: string;
  CODEMODE_CONFIG?: string;
  /** Per-tenant request limit (`[[ratelimits]]` in wrangler.toml); absent = unlimited. */
  RATE_LIMITER?: RateLimit;
};

type Vars = { Variables: RequestLogVars };

/** The layered configuration of one request (the app's config module under the env's `CODEMODE_CONFIG`). */
type LoadConfig = (env: GatewayEnv) => ConfigResult;

/** The rate limit settings of the config; an invalid config is refused before they are read. */
function rateLimitSettings(config: ConfigResult) {
  return config.ok ? config.config.operations.rateLimit : RATE_LIMIT_DEFAULTS;
}

/** `gateway.cors`; an invalid config allows no origin (every route then answers its invalid_config error). */
function corsSettings(config: ConfigResult) {
  return config.ok ? config.config.operations.cors : CORS_DEFAULTS;
}

async function readJson(c: Context): Promise<unknown> {
  return parseJsonBody(await readBodyText(() => c.req.text()));
}

/**
 * Configuration the gateway cannot run with: an invalid `CODEMODE_CONFIG` or an invalid
 * `GATEWAY_TOKENS` secret. Reported on `/healthz` and on every `/v1` request, naming the rule.
 */
function configurationError(env: GatewayEnv, load: LoadConfig): GatewayError | undefined {
  const config = load(env);
  if (!config.ok) return new GatewayError("invalid_config", `invalid CODEMODE_CONFIG: ${config.error.message}`, config.error.path);
  const tokens = loadGatewayTokens(env.GATEWAY_TOKENS);
  if (!tokens.ok) return new GatewayError("invalid_config", `invalid GATEWAY_TOKENS: ${tokens.message}`, "GATEWAY_TOKENS");
  return undefined;
}

/** `mcp.allowPrivateAddresses` (a bad config is refused before any route runs). */
function privateMcpAllowed(config: ConfigResult): boolean {
  return config.ok && config.config.mcpAllowPrivateAddresses;
}

function sessionStub(c: Context<{ Bindings: GatewayEnv } & Vars>) {
  const sessionId = c.req.param("sessionId") ?? "";
  if (!SESSION_ID.test(sessionId)) throw new GatewayError("invalid_request", `sessionId must be ${SESSION_ID_RULE}`, "sessionId");
  // One object per tenant + session: another tenant's session is a different object.
  const id = c.env.SESSIONS.idFromName(`${c.get("tenant")}:${sessionId}`);
  return { stub: c.env.SESSIONS.get(id), sessionId };
}

function param(c: Context, name: string, pattern: RegExp): string {
  const v = c.req.param(name) ?? "";
  if (!pattern.test(v)) throw new GatewayError("not_found", `unknown ${name === "turnId" ? "turn" : "tool"}`);
  return v;
}

/** The one place a session reply becomes HTTP: the success status is the route's, a failure's comes from its reason. */
function reply(c: Context<{ Bindings: GatewayEnv } & Vars>, r: SessionReply<unknown>, success: 200 | 201 | 202 = 200): Response {
  if (r.ok) return c.json(r.body as object, success);
  c.set("errorCode", r.reason);
  return c.json({ error: { code: r.reason, message: r.message } }, httpStatus(r.reason));
}

/** What the `/mcp` handler gets from the edge (auth, rate limit and the session namespace are the edge's). */
export type McpRequestContext = {
  tenant: string;
  /** The HTTP request's id; each tool call gets `<requestId>:<n>` (its cancellation handle). */
  requestId: string;
  sessions: GatewayEnv["SESSIONS"];
  /**
   * One more unit of the tenant's rate limit, for each `tools/call` of a JSON-RPC batch after
   * the first (the HTTP request paid for one): without it a batch of 100 calls cost one unit.
   */
  chargeToolCall: TenantCharge;
};

/** Code mode as an MCP server, mounted at `/mcp` by the gateway (src/mcp-server) — the edge does not import it. */
export type McpHandler = (req: Request, ctx: McpRequestContext) => Promise<Response>;

/** What a facade route (`/v1/chat/completions`, `/v1/messages`, `/v1/models`) gets from the edge. */
export type FacadeRequestContext = {
  tenant: string;
  requestId: string;
  sessions: GatewayEnv["SESSIONS"];
  config: GatewayConfig;
  /** The Worker's bindings, read-only (which provider secrets are set: `GET /v1/models`). */
  env: Readonly<Record<string, unknown>>;
  waitUntil(promise: Promise<unknown>): void;
};

/**
 * The OpenAI- and Anthropic-compatible routes, mounted by the gateway (src/facades) — the edge does
 * not import them. `errorBody`: an error on one of their paths in that format's envelope (undefined elsewhere).
 */
export type Facades = {
  routes: Array<{ method: "GET" | "POST"; path: string; handle(req: Request, ctx: FacadeRequestContext): Promise<Response> }>;
  errorBody(path: string, code: ErrorCode, message: string, param?: string): object | undefined;
};

export function createApp(
  options: { sseHeartbeatMs?: number; mcp?: McpHandler; facades?: Facades; config?: CodemodeConfig } = {},
): Hono<{ Bindings: GatewayEnv } & Vars> {
  const load: LoadConfig = (env) => loadGatewayConfig(env, options.config);
  const app = new Hono<{ Bindings: GatewayEnv } & Vars>();
  // The handlers below are described by src/http/api-routes.ts (the request schemas are the ones they validate with);
  // the description is built on the first /openapi.json, the schemas on the first body checked (request-validators.ts).
  const mounted = { mcp: options.mcp !== undefined, facades: options.facades?.routes ?? [] };
  let document: Promise<object> | undefined;
  // First: every request, refused ones included, gets an id and one `request` record.
  app.use("*", requestLog());
  // Next: browser preflights are answered before authentication; allowed origins' answers get their headers.
  app.use(
    "*",
    cors((env: GatewayEnv) => corsSettings(load(env))),
  );

  app.get("/healthz", (c) => {
    const error = configurationError(c.env, load);
    if (error) throw error;
    const config = load(c.env);
    // Effective activation for a turn that names no agent or model (what /mcp and a bare turn get); no secrets.
    const activation = config.ok ? resolveActivation(config.config, {}) : undefined;
    const codeMode = activation && { enabled: activation.enabled, engagedForDefault: activation.engaged, source: activation.source };
    return c.json({ ok: true, runtime: "quickjs-wasi", version: VERSION, codeMode } satisfies HealthAnswer);
  });

  // The OpenAPI document and its reference page: public (no secrets in them; /v1 and /mcp say they take a bearer token).
  app.get("/openapi.json", async (c) => {
    document ??= import("./openapi-document").then((m) => m.openApiDocument(mounted));
    try {
      return c.json(await document);
    } catch (error) {
      document = undefined; // built again on the next request, as before it was cached
      throw error;
    }
  });
  app.get("/docs", (c) => c.body(DOCS_HTML, 200, { ...DOCS_HEADERS, "Content-Type": "text/html; charset=utf-8" }));
  app.get(DOCS_INIT_PATH, (c) => c.body(DOCS_INIT_JS, 200, { ...DOCS_HEADERS, "Content-Type": "text/javascript; charset=utf-8" }));

  // /v1 and /mcp: the same bearer tokens and per-tenant rate limit.
  for (const path of ["/v1/*", "/mcp"]) {
    app.use(path, async (c, next) => {
      const error = configurationError(c.env, load);
      if (error) throw error;
      // The Anthropic clients send their key as x-api-key (the same gateway tokens).
      const apiKey = c.req.path === "/v1/messages" ? c.req.header("x-api-key") : undefined;
      const credential = c.req.header("authorization") ?? (apiKey !== undefined ? `Bearer ${apiKey}` : undefined);
      c.set("tenant", authenticate(credential, c.env.GATEWAY_TOKENS));
      await next();
    });
    app.use(
      path,
      tenantRateLimit((env: GatewayEnv) => rateLimitSettings(load(env))),
    );
  }
  app.use(
    "/v1/*",
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: () => {
        throw new GatewayError("payload_too_large", `request body exceeds ${MAX_BODY_BYTES} bytes`);
      },
    }),
  );

  app.post("/v1/sessions/:sessionId/turns", async (c) => {
    const v = await loadValidators();
    const body = v.validateOpenTurn(await readJson(c));
    v.refusePrivateMcpServers(body.mcpServers, privateMcpAllowed(load(c.env)));
    const { stub, sessionId } = sessionStub(c);
    return reply(c, await stub.openTurn(c.get("tenant"), sessionId, body), 201);
  });

  app.post("/v1/sessions/:sessionId/turns/:turnId/tools/:toolName", async (c) => {
    const input = await readJson(c);
    sessionStub(c); // a malformed session id is refused (400) before the turn and tool are checked
    const turnId = param(c, "turnId", TURN_ID);
    const toolName = param(c, "toolName", TOOL_NAME);
    const call = { tenant: c.get("tenant"), turnId, toolName, input: input ?? {}, requestId: c.get("requestId"), signal: c.req.raw.signal };
    const r = await callSessionTool({ ...call, stub: () => sessionStub(c).stub });
    // The route answers the result as it is; only a caller handing it to a model wraps it (/mcp, /chat).
    return reply(c, r.ok ? { ok: true, body: r.body.result } : r);
  });

  app.post("/v1/sessions/:sessionId/turns/:turnId/client-results", async (c) => {
    const body = (await loadValidators()).validateClientResult(await readJson(c));
    const { stub } = sessionStub(c);
    return reply(c, await stub.clientResult(c.get("tenant"), param(c, "turnId", TURN_ID), body), 202);
  });

  app.delete("/v1/sessions/:sessionId/turns/:turnId", async (c) => {
    const { stub } = sessionStub(c);
    return reply(c, await stub.deleteTurn(c.get("tenant"), param(c, "turnId", TURN_ID)));
  });

  app.get("/v1/sessions/:sessionId/turns/:turnId", async (c) => {
    const { stub } = sessionStub(c);
    return reply(c, await stub.describeTurn(c.get("tenant"), param(c, "turnId", TURN_ID)));
  });

  app.get("/v1/sessions/:sessionId/turns/:turnId/trajectory", async (c) => {
    const { stub } = sessionStub(c);
    return reply(c, await stub.trajectory(c.get("tenant"), param(c, "turnId", TURN_ID)));
  });

  // Operator approvals: what is pending in the session, and one decision per approval.
  app.get("/v1/sessions/:sessionId/approvals", async (c) => {
    const { stub } = sessionStub(c);
    return reply(c, await stub.listApprovals(c.get("tenant")));
  });

  app.post("/v1/sessions/:sessionId/approvals/:approvalId", async (c) => {
    const body = (await loadValidators()).validateApprovalDecision(await readJson(c));
    const { stub } = sessionStub(c);
    const approvalId = c.req.param("approvalId") ?? "";
    if (!APPROVAL_ID.test(approvalId)) throw new GatewayError("not_found", "unknown approval");
    return reply(c, await stub.decideApproval(c.get("tenant"), approvalId, body));
  });

  // The agent loop: JSON (the final answer) or SSE (every event) with Accept: text/event-stream.
  app.post("/v1/sessions/:sessionId/chat", async (c) => {
    const v = await loadValidators();
    const body = v.validateChat(await readJson(c));
    v.refusePrivateMcpServers(body.mcpServers, privateMcpAllowed(load(c.env)));
    const { stub, sessionId } = sessionStub(c);
    const requestId = c.get("requestId");
    const tenant = c.get("tenant");
    // A client that disconnects cancels the turn's active work (model call, running cell). The
    // request is ending as this runs: waitUntil keeps the cancel from being dropped with it.
    const onAbort = () => {
      const cancelling = stub
        .cancelRequest(requestId)
        .catch((error: unknown) => logRecord("host_error", { where: "chat.cancel", error, requestId, tenant }));
      try {
        c.executionCtx.waitUntil(cancelling);
      } catch {
        // No execution context (an embedding calling the app directly): the call is already under way.
      }
    };
    c.req.raw.signal.addEventListener("abort", onAbort);
    let stream: ReadableStream<Uint8Array>;
    try {
      stream = await stub.chat(tenant, sessionId, wantsSse(c.req.header("accept")) ? body : { ...body, answerOnly: true }, requestId);
    } catch (error) {
      // The session object was reset (or overloaded) before the loop started: nothing ran.
      logRecord("host_error", { where: "chat.rpc", error, requestId, tenant });
      throw new GatewayError("session_reset", `${sessionResetMessage("before this call started")}; retry shortly`);
    }
    return chatResponse(c, stream, { onError: (code) => c.set("errorCode", code), onCancel: onAbort, heartbeatMs: options.sseHeartbeatMs });
  });

  // Everything the session stored (turns, parked runs, tool data, alarm); another tenant's or an unknown session: 404.
  app.delete("/v1/sessions/:sessionId", async (c) => {
    const { stub } = sessionStub(c);
    return reply(c, await stub.deleteSession());
  });

  // Code mode as an MCP server (Streamable HTTP); the transport enforces its own body limit.
  const mcp = options.mcp;
  if (mcp)
    app.all("/mcp", async (c) => {
      const tenant = c.get("tenant");
      // The request took one unit above; a JSON-RPC batch's further tools/call take one each.
      const chargeToolCall = () => chargeTenant(c.env.RATE_LIMITER, rateLimitSettings(load(c.env)), tenant);
      const res = await mcp(c.req.raw, { tenant, requestId: c.get("requestId"), sessions: c.env.SESSIONS, chargeToolCall });
      // Through the context, so the headers set for every answer (x-request-id) are kept.
      return c.newResponse(res.body, res);
    });

  for (const route of options.facades?.routes ?? []) {
    const handler = async (c: Context<{ Bindings: GatewayEnv } & Vars>) => {
      const config = load(c.env);
      if (!config.ok) throw new GatewayError("invalid_config", config.error.message);
      const res = await route.handle(c.req.raw, {
        tenant: c.get("tenant"),
        requestId: c.get("requestId"),
        sessions: c.env.SESSIONS,
        config: config.config,
        env: c.env as unknown as Readonly<Record<string, unknown>>,
        waitUntil: (promise) => {
          try {
            c.executionCtx.waitUntil(promise);
          } catch {
            // No execution context (an embedding calling the app directly): the promise runs anyway.
          }
        },
      });
      return c.newResponse(res.body, res);
    };
    if (route.method === "GET") app.get(route.path, handler);
    else app.post(route.path, handler);
  }

  app.notFound((c) => {
    c.set("errorCode", "not_found");
    return c.json({ error: { code: "not_found", message: "no such route" } }, 404);
  });
  app.onError((err, c) => {
    if (err instanceof GatewayError) {
      c.set("errorCode", err.code);
      const facade = options.facades?.errorBody(c.req.path, err.code, err.message, err.path);
      return c.json(facade ?? err.toJSON(), httpStatus(err.code), err.headers);
    }
    // Unknown throws never leak a stack or internal detail; the log has the cause.
    c.set("errorCode", "internal_error");
    logRecord("host_error", { where: "http.unhandled", error: err, requestId: c.get("requestId"), tenant: c.get("tenant") });
    const facade = options.facades?.errorBody(c.req.path, "internal_error", "internal error");
    return c.json(facade ?? { error: { code: "internal_error", message: "internal error" } }, 500);
  });
  return app;
}
