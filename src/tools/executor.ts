import { checkValue, compileSchema } from "./schema-validator";
import type { ToolContext, ToolDefinition } from "./types";

/** Failures are data: the bridge turns `ok: false` into a plain guest Error with `message`. */
export type ToolOutcome = { ok: true; details: unknown } | { ok: false; message: string };

/**
 * The one path every tool call takes, from the guest bridge or the direct tools route:
 * input validation → execute → output contract check → JSON-only normalisation.
 * (Policy was applied when the turn's catalog was built; approvals and hooks plug in here.)
 */
export async function executeTool(tool: ToolDefinition, input: unknown, ctx: ToolContext): Promise<ToolOutcome> {
  const args = input === undefined || input === null ? {} : input;
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
