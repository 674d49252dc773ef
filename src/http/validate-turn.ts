import type { ClientResultBody } from "../session";
import type { OpenTurnRequest } from "../turns";
import { AGENT_ID_PATTERN, AGENT_ID_RULE } from "../config";
import { mcpServerProblem, privateAddress } from "../mcp";
import { GatewayError } from "../errors";
import { validateClientTool } from "./validate-client-tool";
import { MAX_CLIENT_TOOLS, MAX_LIST } from "../limits";

function fail(path: string, message: string): never {
  throw new GatewayError("invalid_request", message, path);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function stringList(v: unknown, path: string): string[] {
  if (!Array.isArray(v)) fail(path, `${path} must be an array of strings`);
  if (v.length > MAX_LIST) fail(path, `${path} has more than ${MAX_LIST} entries`);
  v.forEach((s, i) => {
    if (typeof s !== "string" || s.length === 0 || s.length > 128)
      fail(`${path}[${i}]`, `${path}[${i}] must be a non-empty string of at most 128 characters`);
  });
  return v as string[];
}

const MAX_MCP_SERVERS = 16;

const KEYS = new Set(["agentId", "model", "allow", "deny", "disableTools", "clientTools", "mcpServers", "senderId", "senderName", "channel"]);

/** Validate the `POST …/turns` body at the edge; inner modules trust the typed result. */
export function validateOpenTurn(body: unknown, extraKeys: ReadonlySet<string> = new Set()): OpenTurnRequest {
  if (body === undefined) return {};
  if (!isObject(body)) fail("", "body must be a JSON object");
  for (const key of Object.keys(body)) if (!KEYS.has(key) && !extraKeys.has(key)) fail(key, `unknown field ${key}`);
  const out: OpenTurnRequest = {};
  if (body.agentId !== undefined) {
    if (typeof body.agentId !== "string" || !AGENT_ID_PATTERN.test(body.agentId)) fail("agentId", `agentId must be ${AGENT_ID_RULE}`);
    out.agentId = body.agentId;
  }
  if (body.model !== undefined) {
    if (typeof body.model !== "string" || !/^[^/\s]+\/\S+$/.test(body.model) || body.model.length > 200) {
      fail("model", 'model must look like "provider/model"');
    }
    out.model = body.model;
  }
  if (body.allow !== undefined) out.allow = stringList(body.allow, "allow");
  if (body.deny !== undefined) out.deny = stringList(body.deny, "deny");
  if (body.disableTools !== undefined) {
    if (typeof body.disableTools !== "boolean") fail("disableTools", "disableTools must be a boolean");
    out.disableTools = body.disableTools;
  }
  if (body.clientTools !== undefined) {
    if (!Array.isArray(body.clientTools)) fail("clientTools", "clientTools must be an array");
    if (body.clientTools.length > MAX_CLIENT_TOOLS) fail("clientTools", `clientTools has more than ${MAX_CLIENT_TOOLS} entries`);
    const seen = new Set<string>();
    out.clientTools = body.clientTools.map((t, i) => validateClientTool(t, `clientTools[${i}]`, seen));
  }
  if (body.mcpServers !== undefined) {
    if (!isObject(body.mcpServers)) fail("mcpServers", "mcpServers must be an object of { url, headers? }");
    const names = Object.keys(body.mcpServers);
    if (names.length > MAX_MCP_SERVERS) fail("mcpServers", `at most ${MAX_MCP_SERVERS} MCP servers per turn`);
    const servers: Record<string, { url: string; headers?: Record<string, string> }> = {};
    for (const name of names) {
      const path = `mcpServers.${name}`;
      const problem = mcpServerProblem(name, body.mcpServers[name], "turn");
      if (problem) fail(problem.path ? `${path}.${problem.path}` : path, problem.message);
      servers[name] = body.mcpServers[name] as { url: string; headers?: Record<string, string> };
    }
    if (names.length > 0) out.mcpServers = servers;
  }
  // Who the turn is for: passed to every tool call's context (never authenticated here).
  for (const key of ["senderId", "senderName", "channel"] as const) {
    const v = body[key];
    if (v === undefined) continue;
    if (typeof v !== "string" || v.length === 0 || v.length > 256 || /[\u0000-\u001f\u007f]/.test(v))
      fail(key, `${key} must be 1-256 characters without control characters`);
    out[key] = v;
  }
  return out;
}

/** `POST …/client-results`: `{ callId, value }` or `{ callId, error: { message } }`. */
export function validateClientResult(body: unknown): ClientResultBody {
  if (!isObject(body)) fail("", "body must be { callId, value } or { callId, error: { message } }");
  for (const key of Object.keys(body)) if (key !== "callId" && key !== "value" && key !== "error") fail(key, `unknown field ${key}`);
  if (typeof body.callId !== "string" || body.callId.length === 0 || body.callId.length > 128)
    fail("callId", "callId must be the callId from pendingToolCalls");
  const hasValue = "value" in body;
  const hasError = body.error !== undefined;
  if (hasValue === hasError) fail("", "give exactly one of value or error");
  if (hasError) {
    if (!isObject(body.error) || typeof body.error.message !== "string") fail("error.message", "error must be { message: string }");
    return { callId: body.callId, error: { message: body.error.message.slice(0, 4096) } };
  }
  // Depth and non-finite numbers were refused when the body was parsed (json-body.ts).
  return { callId: body.callId, value: body.value };
}

/** `POST …/approvals/:approvalId`: `{ decision: "allow" | "deny", reason? }`. */
export function validateApprovalDecision(body: unknown): { decision: "allow" | "deny"; reason?: string } {
  if (!isObject(body)) fail("", 'body must be { decision: "allow" | "deny", reason? }');
  for (const key of Object.keys(body)) if (key !== "decision" && key !== "reason") fail(key, `unknown field ${key}`);
  if (body.decision !== "allow" && body.decision !== "deny") fail("decision", 'decision must be "allow" or "deny"');
  if (body.reason !== undefined && (typeof body.reason !== "string" || body.reason.length > 500))
    fail("reason", "reason must be a string of at most 500 characters");
  return { decision: body.decision, ...(typeof body.reason === "string" && body.reason !== "" ? { reason: body.reason } : {}) };
}

/**
 * A turn's own MCP servers must be public hosts unless the gateway config allows otherwise
 * (`mcp.allowPrivateAddresses`): the caller names them and the gateway connects (private-address.ts).
 */
export function refusePrivateMcpServers(servers: OpenTurnRequest["mcpServers"], allowPrivate: boolean): void {
  if (allowPrivate || !servers) return;
  for (const [name, server] of Object.entries(servers)) {
    const why = privateAddress(new URL(server.url));
    if (why)
      fail(
        `mcpServers.${name}.url`,
        `MCP server "${name}": url points to ${why}; a turn's own MCP servers must be public hosts (gateway config mcp.allowPrivateAddresses allows others)`,
      );
  }
}
