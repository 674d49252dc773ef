import { QuotaExceeded } from "../quota";
import type { CatalogEntry } from "../catalog";
import { objectResetMessage } from "../errors";
import { logRecord } from "../observability";
import type { TurnSpec } from "../turns";
import type { LostApproval } from "./ports";
import type { TranscriptPort } from "./ports";

export type RecoveryDeps = {
  /** Approvals pending when the predecessor died, now failed closed (ApprovalBroker.init). */
  lostApprovals: readonly LostApproval[];
  transcript: TranscriptPort;
  turn(tenantId: string, turnId: string): { spec: TurnSpec } | undefined;
  now(): number;
};

const RESET = objectResetMessage();

/**
 * A new incarnation of the session object records what its predecessor left unfinished: nothing
 * of it can still run, so it is lost, never resumed. Approvals that were pending show as `lost`
 * decisions under the call that asked for them; outer calls still open end `lost` with a
 * `session_reset` limit; /chat turns that were running are stopped by `session_reset` (and may be
 * continued). Runs in the constructor, before any request of the new incarnation.
 */
export function recoverFromReset(d: RecoveryDeps): void {
  const now = d.now();
  for (const a of d.lostApprovals) lostApproval(d, a, now);
  const closed = new Set<string>();
  for (const call of d.transcript.openCalls()) {
    d.transcript.event(call.turnId, now, "outer_end", { callId: call.callId, tool: call.tool, status: "lost", code: "session_reset" });
    d.transcript.event(call.turnId, now, "limit", {
      limit: "session_reset",
      callId: call.callId,
      detail: `${RESET} while this call ran; its outcome is unknown`,
    });
    d.transcript.callEnded(call.turnId, call.callId);
    closed.add(call.turnId);
  }
  for (const turnId of d.transcript.runningTurns()) {
    const state = d.transcript.state(turnId);
    if (!state) continue;
    state.status = "stopped";
    state.lastError = "session_reset";
    try {
      d.transcript.saveState(turnId, state);
    } catch (error) {
      // A full session keeps the stored `running`: without a driver it already reads as stopped by the reset.
      if (!(error instanceof QuotaExceeded)) throw error;
    }
    // One reset, one limit event per turn: a call it cut off already has one.
    if (!closed.has(turnId)) d.transcript.event(turnId, now, "limit", { limit: "session_reset", detail: `${RESET} while /chat ran this turn` });
  }
}

function lostApproval(d: RecoveryDeps, a: LostApproval, now: number): void {
  const reason = `${RESET} while this call waited for its approval; it did not run`;
  const invocationId = a.callId ?? a.parentCallId;
  // Rows of older builds that name no call have nothing to show it under.
  if (invocationId === undefined) return;
  d.transcript.event(a.turnId, now, "policy", { invocationId, tool: a.tool, decision: "lost", reason });
  // The outer call's own approval (exec, a direct tool): its decision is enough; the call itself ends lost.
  if (a.parentCallId === undefined || a.callId === undefined || a.callId === a.parentCallId) return;
  const spec = d.turn(a.tenantId, a.turnId)?.spec;
  const shown = shownTool(spec, a.tool);
  d.transcript.event(a.turnId, now, "nested", {
    parentCallId: a.parentCallId,
    invocationId: a.callId,
    tool: shown.tool,
    source: shown.source,
    ok: false,
    input: a.inputPreview,
    error: reason,
  });
  if (spec)
    logRecord("tool_call", {
      tenant: a.tenantId,
      sessionId: spec.sessionId,
      turnId: a.turnId,
      parentCallId: a.parentCallId,
      callId: a.callId,
      tool: shown.tool,
      source: shown.source,
      outcome: "error",
      decision: "lost",
    });
}

/** The nested entry's name and source for an approval's policy name (`<server>__<tool>` for MCP). */
function shownTool(spec: TurnSpec | undefined, policyName: string): { tool: string; source: CatalogEntry["source"] } {
  const entry = spec ? [...spec.catalog.entries, ...spec.catalog.direct].find((e) => e.toolName === policyName) : undefined;
  if (!entry) return { tool: policyName, source: "openclaw" };
  return { tool: entry.mcp ? `MCP.${entry.mcp.serverIdent}.${entry.mcp.toolIdent}` : entry.toolName, source: entry.source };
}
