import type { Settlement } from "../bridge";
import { Catalog, type CatalogEntry } from "../catalog";
import { boundedResult } from "../code-mode";
import { checkValue } from "../tools";
import type { CallPolicy, PolicyDecision, ToolContext, ToolDefinition } from "../tools";
import type { TurnSpec } from "./turn-spec";

/**
 * A client's result for a pending call of `pendingTool` (the tool's own name, as listed in
 * pendingToolCalls), as the guest will receive it when `wait` delivers it. A declared
 * `outputSchema` is enforced here (a mismatch becomes a catchable error that does not print
 * the value), and so is the output contract's size rule.
 */
export function clientResultSettlement(
  spec: TurnSpec,
  pendingTool: string | undefined,
  body: { value?: unknown; error?: { message: string } },
): Settlement {
  if (body.error) return { ok: false, message: body.error.message };
  const value = body.value ?? null;
  const entry = pendingTool === undefined ? undefined : new Catalog(spec.catalog).clientTool(pendingTool);
  const schema = entry?.clientOutputSchema;
  if (entry && schema) {
    const check = checkValue(schema, value);
    if (!check.ok) return { ok: false, message: `${entry.toolName} result does not match its declared outputSchema (${check.message})` };
  }
  return boundedResult(entry?.toolName ?? pendingTool ?? "client tool", value, spec.options.maxOutputBytes, schema !== undefined);
}

/**
 * A client tool call through the turn's policy (hooks, approval) before the caller gets it: the
 * same `before_tool_call` hooks and approval rules as any tool, by the client tool's own name. A
 * rewritten input must still match the tool's declared schema.
 */
export async function admitClientCall(
  entry: CatalogEntry,
  input: unknown,
  policy: CallPolicy,
  ctx: ToolContext,
): Promise<{ ok: true; input: unknown; decision: PolicyDecision } | { ok: false; message: string; decision: PolicyDecision }> {
  const admitted = await policy.admit(clientDefinition(entry), input, ctx);
  if (!admitted.ok) return { ok: false, message: admitted.message, decision: admitted.decision };
  if (admitted.input !== input) {
    const check = checkValue(entry.parameters, admitted.input ?? {}, true);
    if (!check.ok)
      return {
        ok: false,
        message: `a before_tool_call hook rewrote the input of ${entry.toolName} into an invalid one: ${check.message}`,
        decision: "blocked_by_hook",
      };
  }
  return { ok: true, input: admitted.input, decision: admitted.decision };
}

/**
 * A client tool's result, once the caller posted it: the same `after_tool_call` hooks as any call
 * see it (observation only: the result is already the caller's; a failing hook is logged).
 */
export async function afterClientResult(
  entry: CatalogEntry,
  input: unknown,
  result: { ok: true; value: unknown } | { ok: false; error: string },
  policy: CallPolicy,
  ctx: ToolContext,
): Promise<void> {
  await policy.after(clientDefinition(entry), input, result, ctx);
}

/** A client tool as the policy sees it: its own name and schema; the gateway never runs it. */
function clientDefinition(entry: CatalogEntry): ToolDefinition {
  return {
    name: entry.toolName,
    description: entry.description,
    parameters: entry.parameters,
    execute: () => {
      throw new Error(`${entry.toolName} is a client tool: the client runs it`);
    },
  };
}
