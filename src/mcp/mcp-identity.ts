import type { McpTarget } from "./mcp-config";

/**
 * A server's identity for reuse (issue 22): what it is sent, as a SHA-256 digest of the URL and
 * every header (name, value, and whether the value is masked as a secret). Two turns share an MCP
 * session or a cached listing only when the gateway would send byte-for-byte the same requests,
 * so a listing fetched with one tenant's credentials never serves another's. The key is a digest:
 * no URL (its query may hold a token) and no header value is in it, in a map key or a log.
 */
export async function serverIdentity(target: McpTarget, secretValues: readonly string[]): Promise<string> {
  const headers = Object.entries(target.headers)
    .map(([name, value]) => [name.toLowerCase(), value, secretValues.includes(value)] as const)
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const text = JSON.stringify([target.url.href, headers]);
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}
