/**
 * Allow/deny policy for a turn, applied before cataloging: a denied tool has no global,
 * no handle and cannot be reached by a guessed name. Patterns are exact names or a
 * trailing `*` prefix match (`notes_*`). Deny wins. An empty allow list allows nothing.
 */
export type ToolPolicy = { allow?: readonly string[]; deny?: readonly string[] };

function matches(pattern: string, name: string): boolean {
  if (pattern === "*") return true;
  if (pattern.endsWith("*")) return name.startsWith(pattern.slice(0, -1));
  return pattern === name;
}

export function isToolAllowed(policy: ToolPolicy, name: string): boolean {
  if (policy.deny?.some((p) => matches(p, name))) return false;
  if (policy.allow === undefined) return true;
  return policy.allow.some((p) => matches(p, name));
}
