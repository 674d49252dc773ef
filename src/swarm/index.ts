/** Swarm: sub-agents as agent turns in their own session objects (docs/swarm.md). */
export { swarmPlugin, childSessionId, MAX_SUB_AGENTS_PER_TURN } from "./swarm-plugin";
export { cancelChildren } from "./swarm-children";
export type { ChildOutcome, ChildResult } from "./child-turn";
export { ChildRuns } from "./child-runs";
export { childSettled } from "./child-turn";
export { rollUpChildren, subAgentTelemetry } from "./child-rollup";
