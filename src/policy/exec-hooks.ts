import { boundedJson } from "../code-mode";
import type { ApprovalSettings } from "../config";
import { matchesToolPattern } from "../config";
import type { PolicyDecision, ToolCallEvent } from "../tools";
import { HOOK_RESULT_BYTES, runAfterHooks, runBeforeHooks, type ApprovalRequester, type PluginHooks } from "./tool-call-policy";

/**
 * Policy on the outer code-mode `exec` itself (seed 002, "exec"): hooks see it as
 * `toolKind: "code_mode_exec"` with `toolInputKind`, so they can tell a cell from a shell-style
 * `exec` of the same name. A hook may block the cell, rewrite its source, or ask for approval.
 * Fail closed on the aliases: a rewrite that invalidates a populated `code` or `command` (blank or
 * not a string) invalidates both, and the cell does not run.
 */
export type ExecAdmission = { ok: true; input: unknown } | { ok: false; message: string; code?: "invalid_input"; decision: PolicyDecision };

export async function admitExec(
  deps: { hooks: readonly PluginHooks[]; approvals: ApprovalSettings; requester?: ApprovalRequester; signal: AbortSignal },
  event: ToolCallEvent,
): Promise<ExecAdmission> {
  // Hooks see one source under both aliases, so a policy written against `command` (shell exec)
  // or `code` sees the program whichever alias the model filled.
  const shown = withBothAliases(event.input);
  const before = await runBeforeHooks(deps.hooks, { ...event, input: shown });
  if (!before.ok) return { ok: false, message: before.message, decision: "blocked_by_hook" };
  let input = event.input;
  if (before.input !== shown && aliasesBroken(shown, before.input)) {
    return {
      ok: false,
      message: "a before_tool_call hook invalidated exec's code/command; both are invalid and the cell did not run",
      code: "invalid_input",
      decision: "blocked_by_hook",
    };
  }
  if (before.input !== shown) input = rewritten(event.input, shown, before.input as Record<string, unknown>);
  const refused = await outerApproval(deps, "exec", input, before.approval, "did not run");
  return refused ?? { ok: true, input };
}

/**
 * Policy on the outer `wait`: hooks see it as `toolKind: "code_mode_wait"` with its `{ runId }`. A
 * hook may block it or ask for an approval (so may an `approvals.require` rule naming `wait`); a
 * refused wait resumes nothing: the run stays parked, for a later wait, until its TTL. Its input is
 * not rewritable (which run to resume is the caller's).
 */
export async function admitWait(
  deps: { hooks: readonly PluginHooks[]; approvals: ApprovalSettings; requester?: ApprovalRequester; signal: AbortSignal },
  event: ToolCallEvent,
): Promise<ExecAdmission> {
  const before = await runBeforeHooks(deps.hooks, event);
  if (!before.ok) return { ok: false, message: before.message, decision: "blocked_by_hook" };
  const refused = await outerApproval(deps, "wait", event.input, before.approval, "resumed nothing; the run stays parked");
  return refused ?? { ok: true, input: event.input };
}

/** The operator's approval of an outer exec or wait, when a hook or a rule asks for one: undefined when allowed. */
async function outerApproval(
  deps: { approvals: ApprovalSettings; requester?: ApprovalRequester; signal: AbortSignal },
  tool: "exec" | "wait",
  input: unknown,
  asked: boolean,
  outcome: string,
): Promise<Extract<ExecAdmission, { ok: false }> | undefined> {
  if (!asked && !deps.approvals.require.some((p) => matchesToolPattern(p, tool))) return undefined;
  if (!deps.requester) return { ok: false, message: `${tool} needs an operator's approval, which this surface cannot ask for`, decision: "denied" };
  const answer = await deps.requester.request({ tool, input, signal: deps.signal, timeoutMs: deps.approvals.timeoutSeconds * 1000 });
  if (answer.decision === "allow") return undefined;
  const why =
    answer.decision === "deny"
      ? `denied by the operator${answer.reason ? `: ${answer.reason}` : ""}`
      : answer.decision === "timeout"
        ? "no approval came in time"
        : answer.reason;
  const decision: PolicyDecision = answer.decision === "deny" ? "denied" : answer.decision === "timeout" ? "timed_out" : "cancelled";
  return { ok: false, message: `${tool} ${outcome}: ${why}`, decision };
}

function sourceOf(input: Record<string, unknown>): string | undefined {
  for (const key of ["code", "command"]) if (typeof input[key] === "string" && (input[key] as string).trim() !== "") return input[key] as string;
  return undefined;
}

function withBothAliases(input: unknown): unknown {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return input;
  const source = sourceOf(input as Record<string, unknown>);
  return source === undefined ? input : { ...(input as Record<string, unknown>), code: source, command: source };
}

/**
 * The hook's input, less the alias added only for it to read (when the hook left it as shown).
 * Both aliases the caller filled stay: if a hook rewrote one and not the other, they no longer
 * match and the cell fails closed (seed 002: populated aliases must match).
 */
function rewritten(original: unknown, shown: unknown, after: Record<string, unknown>): Record<string, unknown> {
  const was = (typeof original === "object" && original !== null ? original : {}) as Record<string, unknown>;
  const added = (typeof shown === "object" && shown !== null ? shown : {}) as Record<string, unknown>;
  const out = { ...after };
  for (const key of ["code", "command"]) {
    const populated = typeof was[key] === "string" && (was[key] as string).trim() !== "";
    if (!populated && out[key] === added[key]) {
      if (key in was) out[key] = was[key];
      else delete out[key];
    }
  }
  return out;
}

export async function execRan(hooks: readonly PluginHooks[], event: ToolCallEvent, result: { status?: unknown; error?: unknown }): Promise<void> {
  if (!hooks.some((h) => h.hooks.after_tool_call)) return;
  const outcome =
    result.status === "failed"
      ? { ok: false as const, error: typeof result.error === "string" ? result.error : "failed" }
      : { ok: true as const, value: JSON.parse(boundedJson(result, HOOK_RESULT_BYTES)) as unknown };
  await runAfterHooks(hooks, { ...event, result: outcome });
}

function aliasesBroken(before: unknown, after: unknown): boolean {
  if (typeof after !== "object" || after === null || Array.isArray(after)) return true;
  const was = (typeof before === "object" && before !== null ? before : {}) as Record<string, unknown>;
  const now = after as Record<string, unknown>;
  for (const key of ["code", "command"]) {
    const populated = typeof was[key] === "string" && (was[key] as string).trim() !== "";
    if (populated && (typeof now[key] !== "string" || (now[key] as string).trim() === "")) return true;
  }
  return false;
}
