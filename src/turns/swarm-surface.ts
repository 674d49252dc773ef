import type { CatalogEntry } from "../catalog";
import { SESSIONS_SPAWN, SWARM_PLUGIN_ID } from "../guest-names";

/** The virtual declaration file of the Swarm globals (`API.read("agents.d.ts")`). */
export const AGENTS_DTS = "agents.d.ts";

/**
 * The turn's native `sessions_spawn`, when the Swarm globals are visible (seed 002): Swarm is on
 * for the turn (otherwise the tool is not cataloged, turn-opening.ts) and the core plugin's own
 * tool survived allow/deny. An MCP or client tool of that name does not qualify.
 */
export function swarmSpawnEntry(entries: readonly CatalogEntry[]): CatalogEntry | undefined {
  return entries.find((e) => e.toolName === SESSIONS_SPAWN && e.pluginId === SWARM_PLUGIN_ID && e.origin === "core");
}

/** The exec description's Swarm paragraph (only in turns where the globals are visible). */
export const SWARM_EXEC_LINE =
  "Sub-agents: await agents.run(task) or agents.run([tasks]) runs each task (a prompt string, or { prompt, label?, agentId?, model?, allow?, deny? }) " +
  "as an agent turn in its own session, in parallel, and resolves with { status, text, meta, sessionId, turnId } per task (a failed one is a value; " +
  "agents.run(tasks, { throwOnFailure: true }) rejects instead, once every task ended). " +
  'phase(name) groups what follows in the trajectory; log(...values) adds a record there. await API.read("agents.d.ts") has the declarations.';

export const AGENTS_DTS_CONTENT = `// Swarm globals of this turn: sub-agents are agent turns in their own session objects.
/** A sub-agent's task: a prompt, or a prompt with a label and its own agent, model and narrower tools. */
type AgentTask =
  | string
  | {
      prompt: string;
      /** Shown in the trajectory. */
      label?: string;
      agentId?: string;
      /** "provider/model"; defaults to this turn's model. */
      model?: string;
      /** Narrow the tools the sub-agent gets (never more than this turn's; it starts sub-agents only where tools.swarm.maxDepth allows). */
      allow?: string[];
      deny?: string[];
    };
/** A sub-agent's answer. A failed sub-agent is a value with status "failed" and an error (a throw only with throwOnFailure). */
interface AgentResult {
  status: "completed" | "failed";
  /** The sub-agent's final answer text. */
  text: string;
  /** Its turn's meta: assistant turns, usage, costUsd. */
  meta?: { assistantTurns: number; usage: { inputTokens: number; outputTokens: number }; costUsd?: number; [key: string]: unknown };
  /** Its own session (readable like any session of this tenant) and turn. */
  sessionId: string;
  turnId?: string;
  label?: string;
  error?: string;
}
interface AgentRunOptions {
  /**
   * Reject instead of resolving when a task failed: still once every task has ended (the others
   * complete), with an Error naming the first failed task (its index and label) and its error.
   */
  throwOnFailure?: boolean;
}
declare namespace agents {
  /** Run one task, or many in parallel (launches queue for bridge slots); resolves when every one has ended. */
  function run(task: AgentTask, options?: AgentRunOptions): Promise<AgentResult>;
  function run(tasks: AgentTask[], options?: AgentRunOptions): Promise<AgentResult[]>;
}
/** Group what follows in the trajectory under this name. */
declare function phase(name: string): Promise<null>;
/** Add a bounded record of these values to the trajectory (not to the cell's output). */
declare function log(...values: unknown[]): Promise<null>;
`;

/** What the guest's installSwarm gets: the spawn tool's callable name, the launch slots and the declaration file. */
export function swarmGuestSpec(entry: CatalogEntry, slots: number): { spawn: string; slots: number; file: Record<string, unknown> } {
  return {
    spawn: entry.callableName,
    slots,
    file: {
      path: AGENTS_DTS,
      bytes: new TextEncoder().encode(AGENTS_DTS_CONTENT).length,
      description: "Swarm globals: agents.run, phase, log",
      content: AGENTS_DTS_CONTENT,
    },
  };
}
