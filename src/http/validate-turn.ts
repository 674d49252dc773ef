import type { ClientResultBody } from "../session";
import type { OpenTurnRequest } from "../turns";
import { privateAddress } from "../mcp";
import { GatewayError } from "../errors";
import { clientToolSpec } from "./validate-client-tool";
import { ApprovalDecisionBody, ClientResultBody as ClientResultSchema, OpenTurnBody } from "./request-schemas";
import { checkRequest } from "./schema-issues";

/** The typed turn request from a body the schema (OpenTurnBody or ChatBody) accepted: only the fields given. */
export function openTurnRequest(b: Record<string, unknown>): OpenTurnRequest {
  const out: OpenTurnRequest = {};
  if (b.agentId !== undefined) out.agentId = b.agentId as string;
  if (b.model !== undefined) out.model = b.model as string;
  if (b.allow !== undefined) out.allow = b.allow as string[];
  if (b.deny !== undefined) out.deny = b.deny as string[];
  if (b.disableTools !== undefined) out.disableTools = b.disableTools as boolean;
  if (b.clientTools !== undefined) out.clientTools = (b.clientTools as Record<string, unknown>[]).map(clientToolSpec);
  if (b.mcpServers !== undefined && Object.keys(b.mcpServers as object).length > 0) out.mcpServers = b.mcpServers as OpenTurnRequest["mcpServers"];
  for (const key of ["senderId", "senderName", "channel"] as const) if (b[key] !== undefined) out[key] = b[key] as string;
  return out;
}

/** Validate the `POST …/turns` body at the edge (OpenTurnBody); inner modules trust the typed result. */
export function validateOpenTurn(body: unknown): OpenTurnRequest {
  if (body === undefined) return {};
  checkRequest(OpenTurnBody, body);
  return openTurnRequest(body as Record<string, unknown>);
}

/** `POST …/client-results`: `{ callId, value }` or `{ callId, error: { message } }` (ClientResultBody). */
export function validateClientResult(body: unknown): ClientResultBody {
  checkRequest(ClientResultSchema, body);
  const b = body as { callId: string; value?: unknown; error?: { message: string } };
  if (b.error !== undefined) return { callId: b.callId, error: { message: b.error.message.slice(0, 4096) } };
  // Depth and non-finite numbers were refused when the body was parsed (json-body.ts).
  return { callId: b.callId, value: b.value };
}

/** `POST …/approvals/:approvalId`: `{ decision: "allow" | "deny", reason? }` (ApprovalDecisionBody). */
export function validateApprovalDecision(body: unknown): { decision: "allow" | "deny"; reason?: string } {
  checkRequest(ApprovalDecisionBody, body);
  const b = body as { decision: "allow" | "deny"; reason?: string };
  return { decision: b.decision, ...(typeof b.reason === "string" && b.reason !== "" ? { reason: b.reason } : {}) };
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
      throw new GatewayError(
        "invalid_request",
        `MCP server "${name}": url points to ${why}; a turn's own MCP servers must be public hosts (gateway config mcp.allowPrivateAddresses allows others)`,
        `mcpServers.${name}.url`,
      );
  }
}
