import type { ChatRequest } from "../agent";
import { AGENT_ID_PATTERN, DEFAULT_SWARM_MAX_DEPTH, DEFAULT_SWARM_MODEL_CALLS } from "../config";
import { AGENTS_WAIT, SESSIONS_SPAWN, SWARM_PLUGIN_ID } from "../guest-names";
import { DEFAULT_ASSISTANT_TURNS } from "../limits";
import { defineToolPlugin, type SubAgentDepth, type ToolContext } from "../tools";
import { childAllowList } from "./child-policy";
import { aborted, runChildTurn, type ChildResult, type SessionsBinding } from "./child-turn";
import { runningChild, trackChild } from "./swarm-children";

/** Sub-agents one parent turn may start, all cells and direct calls together (fails closed past it). */
export const MAX_SUB_AGENTS_PER_TURN = 16;
/** Sessions a single `agents_wait` collects. */
const MAX_WAIT_IDS = MAX_SUB_AGENTS_PER_TURN;
const MAX_PROMPT_CHARS = 32_768;
const MAX_LABEL_CHARS = 200;

export const COUNT_KEY = (turnId: string) => `swarm:n:${turnId}`;
/** Model calls the turn's children hold (reserved at spawn, the unused part given back at their end). */
const CALLS_KEY = (turnId: string) => `swarm:m:${turnId}`;
export const RESULT_KEY = (childSessionId: string) => `swarm:r:${childSessionId}`;
/** A child's label, stored at its spawn: the rollup names a child still running (its result holds it later). */
export const LABEL_KEY = (childSessionId: string) => `swarm:l:${childSessionId}`;
/** A spawn call's child session, stored before the child starts (the call re-attaches by it). */
const CALL_KEY = (turnId: string, callId: string) => `swarm:c:${turnId}:${callId}`;
/** The request id a child turn runs under in its own object: found again from the child's session id. */
const childRequestId = (childSessionId: string) => `swarm:${childSessionId}`;

/**
 * A child's session id: the parent's session, turn and the spawn's index in the turn, so a child
 * is found again from what the parent stored (deterministic, durable), and never collides with a
 * sibling. At most 128 characters, the edge's session id rule.
 */
export function childSessionId(parentSessionId: string, parentTurnId: string, index: number): string {
  return `${parentSessionId.slice(0, 96)}.sub-${parentTurnId.slice(0, 8)}-${index}`;
}

/** Spawn indexes and model-call reservations of one turn, handed out one at a time (concurrent spawns never share one). */
const indexChains = new Map<string, Promise<unknown>>();

function serialized<T>(turnId: string, step: () => Promise<T>): Promise<T> {
  const previous = indexChains.get(turnId) ?? Promise.resolve();
  const next = previous.catch(() => undefined).then(step);
  indexChains.set(turnId, next);
  void next
    .finally(() => {
      if (indexChains.get(turnId) === next) indexChains.delete(turnId);
    })
    .catch(() => undefined);
  return next;
}

/**
 * The next spawn's index and its share of the turn's model calls: every child may make at most
 * `DEFAULT_ASSISTANT_TURNS` model calls, and no more than what is left of the turn's
 * `tools.swarm.maxModelCalls` (reserved now, the unused part given back when the child ends), so
 * the children together can never pass the bound; none left fails the spawn closed.
 */
function nextIndex(ctx: ToolContext): Promise<{ index: number; modelCalls: number }> {
  return serialized(ctx.turnId, async () => {
    const used = Number((await ctx.store.get(COUNT_KEY(ctx.turnId))) ?? 0);
    if (used >= MAX_SUB_AGENTS_PER_TURN)
      throw new Error(
        `${SESSIONS_SPAWN}: this turn already started ${MAX_SUB_AGENTS_PER_TURN} sub-agents, the per-turn limit; use their results instead of starting more`,
      );
    const bound = ctx.subAgentModelCalls ?? DEFAULT_SWARM_MODEL_CALLS;
    const reserved = Number((await ctx.store.get(CALLS_KEY(ctx.turnId))) ?? 0);
    const modelCalls = Math.min(DEFAULT_ASSISTANT_TURNS, bound - reserved);
    if (modelCalls <= 0)
      throw new Error(
        `${SESSIONS_SPAWN}: this turn's sub-agents already hold all ${bound} model calls of tools.swarm.maxModelCalls; use their results instead of starting more`,
      );
    await ctx.store.put(CALLS_KEY(ctx.turnId), reserved + modelCalls);
    await ctx.store.put(COUNT_KEY(ctx.turnId), used + 1);
    return { index: used + 1, modelCalls };
  });
}

/** A child ended: the model calls it reserved and did not make go back to the turn. */
function giveBack(ctx: ToolContext, unused: number): Promise<void> {
  if (unused <= 0) return Promise.resolve();
  return serialized(ctx.turnId, async () => {
    const reserved = Number((await ctx.store.get(CALLS_KEY(ctx.turnId))) ?? 0);
    await ctx.store.put(CALLS_KEY(ctx.turnId), Math.max(0, reserved - unused));
  });
}

type SpawnInput = { prompt: string; agentId?: string; model?: string; allow?: string[]; deny?: string[]; label?: string; wait?: boolean };

function sessionsOf(ctx: ToolContext): SessionsBinding {
  const sessions = (ctx.env as { SESSIONS?: SessionsBinding } | undefined)?.SESSIONS;
  if (!sessions) throw new Error(`${SESSIONS_SPAWN} needs the Worker's SESSIONS Durable Object binding`);
  return sessions;
}

async function spawn(input: SpawnInput, ctx: ToolContext): Promise<ChildResult | { status: "running"; sessionId: string; label?: string }> {
  const sessions = sessionsOf(ctx);
  const model = input.model ?? ctx.model;
  if (model === undefined) throw new Error(`${SESSIONS_SPAWN}: no model; pass model ("provider/model")`);
  const label = input.label;
  // The child's place in the tree: one level below this turn, under the tree's maxDepth (carried
  // down from the top-level turn, never raised). Past it the spawn fails closed; the catalog of a
  // turn at that depth has no Swarm tools anyway (childAllowList).
  const tree = ctx.subAgentDepth ?? { depth: 0, maxDepth: DEFAULT_SWARM_MAX_DEPTH };
  const depth = tree.depth + 1;
  if (depth > tree.maxDepth)
    throw new Error(
      `${SESSIONS_SPAWN}: this turn is a sub-agent at depth ${tree.depth}, the deepest tools.swarm.maxDepth (${tree.maxDepth}) allows; it cannot start sub-agents`,
    );
  // The same call issued again after the parent's object restarted (a `reattachable` tool):
  // it re-attaches to the child it started, by the session id stored before that child began.
  const callKey = ctx.callId !== undefined ? CALL_KEY(ctx.turnId, ctx.callId) : undefined;
  const known = callKey !== undefined ? ((await ctx.store.get(callKey)) as string | undefined) : undefined;
  let sessionId: string;
  // A sub-agent's request carries its depth (src/turns/turn-opening.ts, SubAgentTurnRequest).
  let req: (ChatRequest & { subAgent: SubAgentDepth }) | undefined;
  let modelCalls = 0;
  if (known !== undefined) {
    sessionId = known;
    const stored = (await ctx.store.get(RESULT_KEY(sessionId))) as ChildResult | undefined;
    if (stored) return input.wait === true ? stored : { status: "running", sessionId, ...(label !== undefined ? { label } : {}) };
  } else {
    const next = await nextIndex(ctx);
    modelCalls = next.modelCalls;
    sessionId = childSessionId(ctx.sessionId, ctx.turnId, next.index);
    if (callKey !== undefined) await ctx.store.put(callKey, sessionId);
    if (label !== undefined) await ctx.store.put(LABEL_KEY(sessionId), label);
    req = {
      model,
      messages: [{ role: "user", content: input.prompt }],
      maxAssistantTurns: modelCalls,
      allow: childAllowList(ctx.turnTools ?? [], { allow: input.allow, deny: input.deny }, depth < tree.maxDepth),
      subAgent: { depth, maxDepth: tree.maxDepth },
      ...(input.agentId !== undefined ? { agentId: input.agentId } : {}),
      ...(ctx.party ? ctx.party : {}),
    };
  }
  const controller = new AbortController();
  // Cancelled with the call that waits for it (wait: true), or with the parent turn (deleteTurn).
  if (input.wait === true) ctx.signal.addEventListener("abort", () => controller.abort(), { once: true });
  const startedAt = Date.now();
  const done = (async () => {
    const result = await runChildTurn(
      sessions,
      {
        tenantId: ctx.tenantId,
        sessionId,
        parentSessionId: ctx.sessionId,
        requestId: childRequestId(sessionId),
        ...(req ? { req } : {}),
        ...(label !== undefined ? { label } : {}),
      },
      controller.signal,
    );
    const timed = { ...result, startedAt, endedAt: Date.now() };
    // Given back by the call that reserved them (a re-attached call reserved nothing).
    if (req) await giveBack(ctx, modelCalls - (result.meta?.assistantTurns ?? 0)).catch(() => undefined);
    // Stored before the parent is told: agents_wait finds it after the call that ran it is gone.
    await ctx.store.put(RESULT_KEY(sessionId), timed);
    return timed;
  })();
  const untrack = trackChild(ctx.turnId, { sessionId, done, cancel: () => controller.abort() });
  const settled = done.finally(untrack);
  if (input.wait === true) return settled;
  ctx.waitUntil(settled.catch(() => undefined));
  return { status: "running", sessionId, ...(label !== undefined ? { label } : {}) };
}

async function collect(input: { sessionIds: string[] }, ctx: ToolContext): Promise<{ results: ChildResult[] }> {
  const prefix = `${ctx.sessionId.slice(0, 96)}.sub-${ctx.turnId.slice(0, 8)}-`;
  const results = await Promise.all(
    input.sessionIds.map(async (sessionId): Promise<ChildResult> => {
      const lost = (error: string): ChildResult => ({ status: "failed", text: "", sessionId, error });
      if (!sessionId.startsWith(prefix)) return lost(`${sessionId} is not a sub-agent of this turn`);
      const stored = (await ctx.store.get(RESULT_KEY(sessionId))) as ChildResult | undefined;
      if (stored) return stored;
      const running = runningChild(ctx.turnId, sessionId);
      if (running) {
        await Promise.race([running.done.catch(() => undefined), aborted(ctx.signal)]);
        const after = (await ctx.store.get(RESULT_KEY(sessionId))) as ChildResult | undefined;
        if (after) return after;
        return lost(ctx.signal.aborted ? "the wait was cancelled" : "the sub-agent ended without a stored result");
      }
      // Nobody here runs it (the parent's object restarted since): the child's own object has it.
      const result = await runChildTurn(
        sessionsOf(ctx),
        { tenantId: ctx.tenantId, sessionId, parentSessionId: ctx.sessionId, requestId: childRequestId(sessionId) },
        ctx.signal,
      );
      if (!ctx.signal.aborted) await ctx.store.put(RESULT_KEY(sessionId), result);
      return result;
    }),
  );
  return { results };
}

const toolList = { type: "array", items: { type: "string", minLength: 1, maxLength: 128 }, maxItems: 512 };

/**
 * Swarm (seed 002, "Use Swarm for agent fan-out"): the native sub-agent tools. `sessions_spawn`
 * starts a `/chat` agent turn in a child session object; `agents_wait` collects answers. Policy,
 * approvals and hooks apply to both like any tool; in code mode `agents.run()` calls them.
 */
export const swarmPlugin = defineToolPlugin({
  id: SWARM_PLUGIN_ID,
  name: "Swarm",
  description: "Sub-agents: agent turns in their own session objects",
  origin: "core",
  tools: (tool) => [
    tool({
      name: SESSIONS_SPAWN,
      label: "Start a sub-agent",
      // Issued again after the parent's object restarts: it re-attaches to its child by call id.
      reattachable: true,
      // Admitted before the restart when it stored its child's session id (after hooks and approval).
      admittedBefore: async (ctx) => ctx.callId !== undefined && (await ctx.store.get(CALL_KEY(ctx.turnId, ctx.callId))) !== undefined,
      description:
        "Start a sub-agent: an agent turn with its own session, given `prompt`. It gets at most this turn's tools, narrowed by `allow`/`deny`, and cannot start sub-agents itself unless tools.swarm.maxDepth allows it. " +
        "With `wait: true` the call answers the sub-agent's result { status, text, meta, sessionId, turnId }; otherwise { status: 'running', sessionId } at once, and agents_wait collects it.",
      parameters: {
        type: "object",
        properties: {
          prompt: { type: "string", minLength: 1, maxLength: MAX_PROMPT_CHARS },
          agentId: { type: "string", pattern: AGENT_ID_PATTERN.source },
          model: { type: "string", pattern: "^[^/\\s]+/\\S+$", maxLength: 200 },
          allow: toolList,
          deny: toolList,
          label: { type: "string", maxLength: MAX_LABEL_CHARS },
          wait: { type: "boolean" },
        },
        required: ["prompt"],
        additionalProperties: false,
      },
      execute: (input: SpawnInput, ctx) => spawn(input, ctx),
    }),
    tool({
      name: AGENTS_WAIT,
      label: "Collect sub-agent results",
      description: "Wait for sub-agents this turn started with sessions_spawn and answer { results: [{ status, text, meta, sessionId, turnId }] }.",
      parameters: {
        type: "object",
        properties: { sessionIds: { type: "array", items: { type: "string", minLength: 1, maxLength: 128 }, minItems: 1, maxItems: MAX_WAIT_IDS } },
        required: ["sessionIds"],
        additionalProperties: false,
      },
      execute: (input: { sessionIds: string[] }, ctx) => collect(input, ctx),
    }),
  ],
});
