import type { AgentEntry, GatewayConfig } from "./gateway-config";

/** `agents.entries.<agentId>`, or undefined for an unknown agent (own keys only). */
export function findAgent(config: GatewayConfig, agentId: string): AgentEntry | undefined {
  return Object.hasOwn(config.agents.entries, agentId) ? config.agents.entries[agentId] : undefined;
}
