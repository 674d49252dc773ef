import { checkValue, compileSchema } from "./schema-validator";
import type { CallPolicy, PolicyDecision } from "./call-policy";
import type { ToolContext, ToolDefinition } from "./types";

/** Failures are data: the bridge turns `ok: false` into a plain guest Error with `message`. */
export type ToolOutcome = ({ ok: true; details: unknown } | { ok: false; message: string }) & { decision?: PolicyDecision };

/**
 * The one path every tool call takes, from the guest bridge or the direct tools route:
 * input validation → policy (hooks, approval; a rewritten input is validated again) → execute →
 * output contract check → JSON-only normalisation → after-hooks. Allow/deny policy was applied when
 * the turn's catalog was built: a denied tool never reaches this point.
 */
export async function executeTool(tool: ToolDefinition, input: unknown, ctx: ToolContext, policy?: CallPolicy): Promise<ToolOutcome> {
  let args = input === undefined || input === null ? {} : input;
  const params = compileSchema(tool.parameters);
  if (!params.ok) return { ok: false, message: `tool ${tool.name} has an invalid parameters schema` };
  if (tool.outputSchema) {
    // An invalid output contract cannot run the tool (seed: compile before running).
    const out = compileSchema(tool.outputSchema);
    if (!out.ok) return { ok: false, message: `tool ${tool.name} declares an invalid outputSchema; it cannot run` };
  }
  const inputCheck = checkValue(tool.parameters, args, true);
  if (!inputCheck.ok) return { ok: false, message: `invalid input for ${tool.name}: ${inputCheck.message}` };
  if (ctx.signal.aborted) return { ok: false, message: `${tool.name} was cancelled` };
  let decision: PolicyDecision | undefined;
  // A call re-issued after a restart whose first issue was admitted (its work started) is that
  // same call, not a new one: its hooks and approval are not asked twice (after-hooks still run once).
  const readmitted = ctx.reissued === true && tool.reattachable === true && (await tool.admittedBefore?.(ctx).catch(() => false)) === true;
  if (policy && !readmitted) {
    const admitted = await policy.admit(tool, args, ctx);
    if (!admitted.ok) return { ok: false, message: admitted.message, decision: admitted.decision };
    decision = admitted.decision;
    if (admitted.input !== args) {
      // A hook rewrote the input: it must still be what the tool declared.
      args = admitted.input === undefined || admitted.input === null ? {} : admitted.input;
      const again = checkValue(tool.parameters, args, true);
      if (!again.ok)
        return {
          ok: false,
          message: `a before_tool_call hook rewrote the input of ${tool.name} into an invalid one: ${again.message}`,
          decision: "blocked_by_hook",
        };
    }
    if (ctx.signal.aborted) return { ok: false, message: `${tool.name} was cancelled`, decision: "cancelled" };
  }
  const outcome = await run(tool, args, ctx);
  if (policy) await policy.after(tool, args, outcome.ok ? { ok: true, value: outcome.details } : { ok: false, error: outcome.message }, ctx);
  return decision ? { ...outcome, decision } : outcome;
}

async function run(tool: ToolDefinition, args: unknown, ctx: ToolContext): Promise<ToolOutcome> {
  let details: unknown;
  try {
    details = await tool.execute(args, ctx);
  } catch (error) {
    // Only the message crosses: never a host Error, stack or prototype.
    const message = error instanceof Error ? error.message : typeof error === "string" ? error : "tool failed";
    return { ok: false, message: message || `${tool.name} failed` };
  }
  let normalized: unknown;
  try {
    const text = JSON.stringify(details);
    normalized = text === undefined ? null : JSON.parse(text);
  } catch {
    return { ok: false, message: `${tool.name} returned a value that is not JSON-compatible` };
  }
  if (tool.outputSchema) {
    const check = checkValue(tool.outputSchema, normalized);
    if (!check.ok) return { ok: false, message: `${tool.name} result does not match its declared outputSchema (${check.message})` };
  }
  return { ok: true, details: normalized };
}
