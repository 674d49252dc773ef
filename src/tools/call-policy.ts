import type { ToolContext, ToolDefinition } from "./types";

/**
 * What happened to a call at the policy step (seed 002: nested calls keep approval and hook
 * behaviour). `denied_by_policy`: the tool is not in the turn's catalog (allow/deny), reported
 * like an unknown name so existence is not revealed.
 */
export type PolicyDecision = "allowed" | "denied_by_policy" | "blocked_by_hook" | "approved" | "denied" | "timed_out" | "cancelled";

export type Admission = { ok: true; input: unknown; decision: "allowed" | "approved" } | { ok: false; message: string; decision: PolicyDecision };

/**
 * The policy the executor applies to every call, direct or nested (src/policy implements it):
 * plugin `before_tool_call` hooks (block, rewrite, demand approval), then an operator approval
 * when the tool needs one; after the run, `after_tool_call` hooks see the bounded result.
 */
export interface CallPolicy {
  admit(tool: ToolDefinition, input: unknown, ctx: ToolContext): Promise<Admission>;
  after(tool: ToolDefinition, input: unknown, result: { ok: true; value: unknown } | { ok: false; error: string }, ctx: ToolContext): Promise<void>;
}
