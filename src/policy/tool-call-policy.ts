import { boundedJson } from "../code-mode";
import { matchesToolPattern, type ApprovalSettings } from "../config";
import { logRecord } from "../observability";
import type { Admission, CallPolicy, PolicyDecision, ToolCallEvent, ToolContext, ToolDefinition, ToolHooks } from "../tools";
import type { BudgetPause } from "./budget-pause";

/** A plugin's hooks, with the plugin id for logs and block messages. */
export type PluginHooks = { pluginId: string; hooks: ToolHooks };

export type ApprovalAnswer =
  { decision: "allow" } | { decision: "deny"; reason?: string } | { decision: "timeout" } | { decision: "cancelled"; reason: string };

/** The session's approval queue (durable-objects/session/approval-broker.ts). */
export interface ApprovalRequester {
  request(req: { tool: string; input: unknown; callId?: string; signal: AbortSignal; timeoutMs: number }): Promise<ApprovalAnswer>;
}

/** A hook that runs longer than this blocks the call (fail closed). */
export const HOOK_TIMEOUT_MS = 5000;
/** What after-hooks see of a result: the value when it fits, else the seed's truncation marker. */
export const HOOK_RESULT_BYTES = 64 * 1024;

export type PolicyDeps = {
  hooks: readonly PluginHooks[];
  approvals: ApprovalSettings;
  requester?: ApprovalRequester;
  /** The cell's budget pause (absent for direct calls: no cell budget to pause). */
  pause?: BudgetPause;
  /** `nested`: called from guest code (a cell, Tool Search code) rather than by the model. */
  nested: boolean;
  /** Each decision, with the call's invocation id (the trajectory shows it under its parent). */
  record?(callId: string | undefined, tool: string, decision: PolicyDecision, reason?: string): void;
};

/** The name config rules and hooks use: the catalog's (`<server>__<tool>` for MCP). */
export const policyName = (tool: ToolDefinition): string => tool.catalogName ?? tool.name;

export function needsApproval(tool: ToolDefinition, approvals: ApprovalSettings): boolean {
  return tool.requiresApproval === true || approvals.require.some((p) => matchesToolPattern(p, policyName(tool)));
}

function event(tool: ToolDefinition, input: unknown, ctx: ToolContext, nested: boolean): ToolCallEvent {
  return {
    toolName: policyName(tool),
    toolKind: "tool",
    input,
    nested,
    context: { tenantId: ctx.tenantId, sessionId: ctx.sessionId, turnId: ctx.turnId, agentId: ctx.agentId, party: ctx.party },
  };
}

/** A hook's answer, or why it blocks: a throw, a timeout or a malformed answer all fail closed. */
export async function runBeforeHooks(
  hooks: readonly PluginHooks[],
  ev: ToolCallEvent,
): Promise<{ ok: true; input: unknown; approval: boolean } | { ok: false; message: string }> {
  let input = ev.input;
  let approval = false;
  for (const { pluginId, hooks: h } of hooks) {
    if (!h.before_tool_call) continue;
    let answer: unknown;
    try {
      answer = await withTimeout(Promise.resolve(h.before_tool_call({ ...ev, input })), HOOK_TIMEOUT_MS);
    } catch (error) {
      logRecord("host_error", { where: `hook.before_tool_call:${pluginId}`, error, turnId: ev.context.turnId, tool: ev.toolName });
      return { ok: false, message: `${ev.toolName} was blocked: a before_tool_call hook (${pluginId}) failed` };
    }
    if (answer === undefined || answer === null) continue;
    if (typeof answer !== "object")
      return { ok: false, message: `${ev.toolName} was blocked: a before_tool_call hook (${pluginId}) answered something that is not an object` };
    const a = answer as { block?: unknown; input?: unknown; requireApproval?: unknown };
    if (a.block !== undefined) return { ok: false, message: `${ev.toolName} was blocked by a hook (${pluginId}): ${String(a.block).slice(0, 500)}` };
    if ("input" in a && a.input !== undefined) input = a.input;
    if (a.requireApproval === true) approval = true;
  }
  return { ok: true, input, approval };
}

export async function runAfterHooks(
  hooks: readonly PluginHooks[],
  ev: ToolCallEvent & { result: { ok: true; value: unknown } | { ok: false; error: string } },
): Promise<void> {
  for (const { pluginId, hooks: h } of hooks) {
    if (!h.after_tool_call) continue;
    try {
      await withTimeout(Promise.resolve(h.after_tool_call(ev)), HOOK_TIMEOUT_MS);
    } catch (error) {
      // The call already ran: a failing after-hook cannot undo it, so it is logged, not fatal.
      logRecord("host_error", { where: `hook.after_tool_call:${pluginId}`, error, turnId: ev.context.turnId, tool: ev.toolName });
    }
  }
}

const APPROVAL_MESSAGES: Record<Exclude<ApprovalAnswer["decision"], "allow">, (tool: string, reason?: string) => string> = {
  deny: (tool, reason) => `${tool} was denied by the operator${reason ? `: ${reason}` : ""}`,
  timeout: (tool) => `${tool} needs an operator's approval and none came in time; it did not run`,
  cancelled: (tool, reason) => `${tool} did not run: its approval was cancelled (${reason ?? "cancelled"})`,
};

const DECISIONS: Record<Exclude<ApprovalAnswer["decision"], "allow">, PolicyDecision> = {
  deny: "denied",
  timeout: "timed_out",
  cancelled: "cancelled",
};

/** A cell waits for decisions at most this many approval windows (`timeoutSeconds`) in total. */
export const MAX_APPROVAL_WINDOWS_PER_CELL = 4;

/** The executor's policy for one turn's calls: hooks, then approval; after-hooks see the result. */
export function toolCallPolicy(deps: PolicyDeps): CallPolicy {
  // `allowed` is what the trajectory assumes: only the decisions that say more are recorded.
  const decide = (tool: ToolDefinition, ctx: ToolContext, a: Admission): Admission => {
    if (a.decision !== "allowed") deps.record?.(ctx.callId, policyName(tool), a.decision, a.ok ? undefined : a.message);
    return a;
  };

  async function admit(tool: ToolDefinition, input: unknown, ctx: ToolContext): Promise<Admission> {
    const before = await runBeforeHooks(deps.hooks, event(tool, input, ctx, deps.nested));
    if (!before.ok) return { ok: false, message: before.message, decision: "blocked_by_hook" };
    if (!before.approval && !needsApproval(tool, deps.approvals)) return { ok: true, input: before.input, decision: "allowed" };
    if (!deps.requester)
      return { ok: false, message: `${tool.name} needs an operator's approval, which this surface cannot ask for`, decision: "denied" };
    // One cell may not wait for decisions forever: each is bounded by timeoutSeconds, their sum by the cap.
    const capMs = deps.approvals.timeoutSeconds * 1000 * MAX_APPROVAL_WINDOWS_PER_CELL;
    if (deps.pause && deps.pause.pausedMs() >= capMs) {
      const waited = Math.round(deps.pause.pausedMs() / 1000);
      return {
        ok: false,
        message: `${tool.name} did not run: this cell already waited ${waited} s for approvals (at most ${MAX_APPROVAL_WINDOWS_PER_CELL} × timeoutSeconds); start a new cell`,
        decision: "timed_out",
      };
    }
    const answer = await deps.requester.request({
      tool: policyName(tool),
      input: before.input,
      callId: ctx.callId,
      signal: ctx.signal,
      timeoutMs: deps.approvals.timeoutSeconds * 1000,
    });
    if (answer.decision === "allow") return { ok: true, input: before.input, decision: "approved" };
    const reason = answer.decision === "deny" || answer.decision === "cancelled" ? answer.reason : undefined;
    return { ok: false, message: APPROVAL_MESSAGES[answer.decision](tool.name, reason), decision: DECISIONS[answer.decision] };
  }

  return {
    async admit(tool, input, ctx): Promise<Admission> {
      // Policy time (hooks, then an approval) is not the cell's: its budget is paused, so it never
      // parks or times out in the middle of a decision.
      const end = deps.pause?.begin();
      try {
        return decide(tool, ctx, await admit(tool, input, ctx));
      } finally {
        end?.();
      }
    },
    async after(tool, input, result, ctx) {
      if (!deps.hooks.some((h) => h.hooks.after_tool_call)) return;
      const bounded = result.ok ? { ok: true as const, value: JSON.parse(boundedJson(result.value, HOOK_RESULT_BYTES)) as unknown } : result;
      await runAfterHooks(deps.hooks, { ...event(tool, input, ctx, deps.nested), result: bounded });
    },
  };
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    p.then(
      (v) => (clearTimeout(timer), resolve(v)),
      (e: unknown) => (clearTimeout(timer), reject(e instanceof Error ? e : new Error(String(e)))),
    );
  });
}
