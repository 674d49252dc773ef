import type { SubAgents } from "../agent";
import type { SubAgentTelemetry } from "../code-mode";
import type { SessionStore } from "../tools";
import type { ChildResult } from "./child-turn";
import { childSessionId, COUNT_KEY, LABEL_KEY, MAX_SUB_AGENTS_PER_TURN, RESULT_KEY } from "./swarm-plugin";

/**
 * A parent turn's sub-agents for its trajectory: each child in spawn order (label, session and
 * turn ids, status, duration, cost, a link to its own trajectory), and the totals of their
 * assistant turns, usage and cost. Read from what the parent stored (its spawn count, each child's
 * label and result, stored before the parent was told); a child without a result yet is `running`.
 */
export async function rollUpChildren(store: SessionStore, sessionId: string, turnId: string): Promise<SubAgents | undefined> {
  const started = Math.min(Number((await store.get(COUNT_KEY(turnId))) ?? 0), MAX_SUB_AGENTS_PER_TURN);
  if (!(started > 0)) return undefined;
  const rollup: SubAgents = {
    count: started,
    assistantTurns: 0,
    usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
    costUsd: 0,
    children: [],
  };
  for (let index = 1; index <= started; index++) {
    const child = childSessionId(sessionId, turnId, index);
    const result = (await store.get(RESULT_KEY(child))) as ChildResult | undefined;
    if (!result) {
      const label = await store.get(LABEL_KEY(child));
      rollup.children.push({ ...(typeof label === "string" ? { label } : {}), sessionId: child, status: "running", assistantTurns: 0 });
      continue;
    }
    const meta = result.meta;
    rollup.assistantTurns += meta?.assistantTurns ?? 0;
    for (const k of ["inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens"] as const) rollup.usage[k] += meta?.usage?.[k] ?? 0;
    rollup.costUsd += meta?.costUsd ?? 0;
    rollup.children.push({
      ...(result.label !== undefined ? { label: result.label } : {}),
      sessionId: child,
      ...(result.turnId !== undefined ? { turnId: result.turnId } : {}),
      status: result.status,
      ...(result.startedAt !== undefined && result.endedAt !== undefined ? { durationMs: result.endedAt - result.startedAt } : {}),
      assistantTurns: meta?.assistantTurns ?? 0,
      ...(meta?.costUsd !== undefined ? { costUsd: meta.costUsd } : {}),
      ...(result.error !== undefined ? { error: result.error } : {}),
      ...(result.turnId !== undefined ? { trajectory: `/v1/sessions/${child}/turns/${result.turnId}/trajectory` } : {}),
    });
  }
  return rollup;
}

/**
 * The code-mode telemetry's `subAgents` (issue 27, "Accounting"): the turn's children as aggregates
 * only, no ids (the trajectory lists them). Every exec/wait builds telemetry, so a turn that never
 * started a sub-agent costs one read of its spawn count here, and answers `undefined`.
 */
export async function subAgentTelemetry(store: SessionStore, sessionId: string, turnId: string): Promise<SubAgentTelemetry | undefined> {
  const rollup = await rollUpChildren(store, sessionId, turnId);
  if (!rollup) return undefined;
  const totals: SubAgentTelemetry = { count: rollup.count, running: 0, completed: 0, failed: 0, assistantTurns: rollup.assistantTurns };
  let costUsd: number | undefined;
  for (const child of rollup.children) {
    if (child.status === "completed") totals.completed++;
    else if (child.status === "failed") totals.failed++;
    else totals.running++;
    if (child.costUsd !== undefined) costUsd = (costUsd ?? 0) + child.costUsd;
  }
  return costUsd !== undefined ? { ...totals, costUsd } : totals;
}
