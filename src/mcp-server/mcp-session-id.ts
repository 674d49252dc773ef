/**
 * The MCP session id (`mcp-session-id`) names one codemode session and its one turn, so any
 * isolate can find both from the header alone: `<key>.<turnId>`, where the codemode session is
 * `mcp-<key>` under the caller's tenant. Nothing maps ids in the Worker; the session object
 * decides whether the turn exists (for this tenant), which is why a forged, expired or other
 * tenant's id is simply unknown.
 */
export type McpSessionRef = { sessionId: string; turnId: string };

const UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";
const MCP_SESSION_ID = new RegExp(`^(${UUID})\\.(${UUID})$`);

/** The codemode session id for a freshly minted key. */
export function mcpCodemodeSessionId(key: string): string {
  return `mcp-${key}`;
}

export function formatMcpSessionId(key: string, turnId: string): string {
  return `${key}.${turnId}`;
}

/** The session and turn an `mcp-session-id` header names, or undefined when it has no such shape. */
export function parseMcpSessionId(header: string): McpSessionRef | undefined {
  const m = MCP_SESSION_ID.exec(header);
  return m ? { sessionId: mcpCodemodeSessionId(m[1]!), turnId: m[2]! } : undefined;
}
