import type { GatewayConfig } from "./gateway-config";
import { findAgent } from "./find-agent";

/**
 * Whether Swarm is on for a turn (seed 002, "Use Swarm for agent fan-out"): on by default;
 * `tools.swarm: false` or `tools.swarm.enabled: false` turns it off, globally or under an
 * agent's `tools` (the agent's setting wins). Both shapes were validated when the config loaded.
 */
export function resolveSwarm(config: GatewayConfig, agentId: string | undefined): boolean {
  const agent = agentId !== undefined ? swarmSetting(findAgent(config, agentId)?.raw) : undefined;
  return agent ?? swarmSetting(config.raw) ?? true;
}

function swarmSetting(owner: Readonly<Record<string, unknown>> | undefined): boolean | undefined {
  const tools = owner?.tools;
  if (typeof tools !== "object" || tools === null || !Object.hasOwn(tools, "swarm")) return undefined;
  const swarm = (tools as Record<string, unknown>).swarm;
  if (typeof swarm === "boolean") return swarm;
  if (typeof swarm === "object" && swarm !== null && Object.hasOwn(swarm, "enabled")) {
    const enabled = (swarm as Record<string, unknown>).enabled;
    return typeof enabled === "boolean" ? enabled : undefined;
  }
  return swarm === undefined ? undefined : true;
}

/** Model calls all sub-agents of one turn may make together unless `tools.swarm.maxModelCalls` says otherwise. */
export const DEFAULT_SWARM_MODEL_CALLS = 128;

/** `tools.swarm.maxModelCalls` for a turn: the agent's, else the gateway's, else the default. */
export function resolveSwarmModelCalls(config: GatewayConfig, agentId: string | undefined): number {
  const of = (owner: Readonly<Record<string, unknown>> | undefined): number | undefined => {
    const swarm = (owner?.tools as Record<string, unknown> | undefined)?.swarm;
    const calls = typeof swarm === "object" && swarm !== null ? (swarm as Record<string, unknown>).maxModelCalls : undefined;
    return typeof calls === "number" ? calls : undefined;
  };
  return (agentId !== undefined ? of(findAgent(config, agentId)?.raw) : undefined) ?? of(config.raw) ?? DEFAULT_SWARM_MODEL_CALLS;
}

/** Levels of sub-agents below a top-level turn unless `tools.swarm.maxDepth` says otherwise: children spawn no children. */
export const DEFAULT_SWARM_MAX_DEPTH = 1;
/** The deepest a Swarm tree may go, whatever the config says (a small fixed depth: every level multiplies the fan-out). */
export const MAX_SWARM_DEPTH = 3;

/** `tools.swarm.maxDepth` for a turn (the agent's, else the gateway's, else 1), clamped to 1–3. */
export function resolveSwarmMaxDepth(config: GatewayConfig, agentId: string | undefined): number {
  const of = (owner: Readonly<Record<string, unknown>> | undefined): number | undefined => {
    const swarm = (owner?.tools as Record<string, unknown> | undefined)?.swarm;
    const depth = typeof swarm === "object" && swarm !== null ? (swarm as Record<string, unknown>).maxDepth : undefined;
    return typeof depth === "number" && Number.isInteger(depth) ? depth : undefined;
  };
  const depth = (agentId !== undefined ? of(findAgent(config, agentId)?.raw) : undefined) ?? of(config.raw) ?? DEFAULT_SWARM_MAX_DEPTH;
  return Math.min(MAX_SWARM_DEPTH, Math.max(1, depth));
}
