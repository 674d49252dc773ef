import { isToolAllowed } from "../catalog";
import { SWARM_TOOL_NAMES } from "../guest-names";

/**
 * The allow list of a child turn: exactly the parent turn's own tools (by policy name) that the
 * spawn's `allow`/`deny` let through, and the Swarm tools only when the child may start children of
 * its own (`spawns`: its depth is below the tree's `tools.swarm.maxDepth`; by default it is not). A
 * list of exact names, not patterns: the child can never hold a tool its parent was denied,
 * whatever its own catalog would offer. An empty list opens the child without tools.
 */
export function childAllowList(
  parentTools: readonly string[],
  narrowing: { allow?: readonly string[]; deny?: readonly string[] },
  spawns = false,
): string[] {
  return parentTools.filter((name) => (spawns || !SWARM_TOOL_NAMES.has(name)) && isToolAllowed(narrowing, name));
}
