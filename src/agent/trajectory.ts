import type { CodeModeTelemetry } from "../code-mode";
import type { ChatMeta, SubAgents } from "./chat-events";

/**
 * A turn's trajectory (seed 002 E2E step 16: nested calls visible under the parent code-mode
 * call), assembled from the stored event rows. Pure: the rows are display-only records already
 * redacted and bounded when they were written.
 */
export type TrajectoryRow = { at: number; kind: string; body: Record<string, unknown> };

export type NestedEntry = {
  invocationId: string;
  tool: string;
  source: string;
  /** `pending`: a client call handed to the caller, no result yet. */
  status: "ok" | "error" | "pending";
  at: number;
  durationMs?: number;
  input?: string;
  result?: string;
  error?: string;
  /** What policy decided (hooks, approvals): `allowed` unless a decision was recorded. */
  decision?: string;
  /** Swarm: the phase (`phase(name)`) the cell was in when it made the call; absent before any. */
  phase?: { id: number; name: string };
};

export type OuterCall = {
  callId: string;
  tool: string;
  /** `chat`: called by the model in /chat; `route`: through the tools route (or /mcp). */
  via: string;
  input: unknown;
  startedAt: number;
  /**
   * `completed`/`waiting`/`failed` of a result; `refused`; `pending`: a client tool handed to the
   * caller, no result yet; `lost`: cut off by a reset of the session object (`code: "session_reset"`).
   */
  status?: string;
  code?: string;
  runId?: string;
  durationMs?: number;
  untrusted?: boolean;
  /** A direct tool's policy decision (hooks, approvals). */
  decision?: string;
  nested: NestedEntry[];
};

export type Trajectory = {
  turnId: string;
  /** Swarm: the sub-agents this turn started, when it started any. */
  subAgents?: SubAgents;
  codeModeEngaged: boolean;
  /** The /chat state of the turn, or `open` for a turn driven through the tools route only. */
  status: string;
  meta?: ChatMeta;
  telemetry: CodeModeTelemetry;
  calls: OuterCall[];
  modelCalls: Array<Record<string, unknown> & { at: number }>;
  snapshots: Array<{ at: number; event: string; runId: string; callId?: string }>;
  limitsHit: Array<{ at: number; limit: string; callId?: string; detail?: string }>;
  /** Events past the per-turn bound: counted, not stored. */
  omittedEvents: number;
  /**
   * Events the session's storage quota removed, oldest first, to make room for newer ones (or could
   * not store at all): what is shown is the turn's most recent events. 0 while the session has room.
   */
  droppedEvents: number;
};

export function buildTrajectory(
  rows: readonly TrajectoryRow[],
  {
    droppedEvents = 0,
    ...head
  }: Omit<Trajectory, "calls" | "modelCalls" | "snapshots" | "limitsHit" | "omittedEvents" | "droppedEvents"> & {
    droppedEvents?: number;
  },
): Trajectory {
  const out: Trajectory = { ...head, calls: [], modelCalls: [], snapshots: [], limitsHit: [], omittedEvents: 0, droppedEvents };
  const calls = new Map<string, OuterCall>();
  const nested = new Map<string, NestedEntry>();
  // Policy decisions come before the call completes: kept until its nested entry exists.
  const decisions = new Map<string, string>();
  for (const { at, kind, body } of rows) {
    const b = body as Record<string, any>;
    switch (kind) {
      case "outer_start": {
        const call: OuterCall = { callId: b.callId, tool: b.tool, via: b.via, input: b.input, startedAt: at, nested: [] };
        calls.set(call.callId, call);
        out.calls.push(call);
        break;
      }
      case "outer_end": {
        const call = calls.get(b.callId);
        if (!call) break;
        call.status = b.status;
        if (b.code !== undefined) call.code = b.code;
        if (b.runId !== undefined) call.runId = b.runId;
        call.durationMs = b.durationMs;
        if (b.untrusted) call.untrusted = true;
        break;
      }
      case "nested":
      case "client_call": {
        const entry: NestedEntry = {
          invocationId: b.invocationId,
          tool: b.tool,
          source: b.source,
          status: kind === "client_call" ? "pending" : b.ok ? "ok" : "error",
          at,
          ...(b.durationMs !== undefined ? { durationMs: b.durationMs } : {}),
          ...(b.input !== undefined ? { input: b.input } : {}),
          ...(b.result !== undefined ? { result: b.result } : {}),
          ...(b.error !== undefined ? { error: b.error } : {}),
          ...(b.phase !== undefined ? { phase: b.phase } : {}),
          decision: decisions.get(b.invocationId) ?? (b.denied ? "denied_by_policy" : "allowed"),
        };
        nested.set(entry.invocationId, entry);
        calls.get(b.parentCallId)?.nested.push(entry);
        break;
      }
      case "client_result": {
        // A client tool the model called directly is an outer call of its own: its result settles it.
        const direct = calls.get(b.invocationId);
        if (direct) {
          direct.status = b.ok ? "completed" : "failed";
          direct.durationMs = Math.max(0, at - direct.startedAt);
          break;
        }
        const entry = nested.get(b.invocationId);
        if (!entry) break;
        entry.status = b.ok ? "ok" : "error";
        entry.durationMs = Math.max(0, at - entry.at);
        if (b.result !== undefined) entry.result = b.result;
        if (b.error !== undefined) entry.error = b.error;
        break;
      }
      case "policy": {
        decisions.set(b.invocationId, b.decision);
        const outer = calls.get(b.invocationId);
        if (outer) outer.decision = b.decision;
        break;
      }
      case "model_call":
        out.modelCalls.push({ at, ...b });
        break;
      case "snapshot":
        out.snapshots.push({ at, event: b.event, runId: b.runId, ...(b.callId !== undefined ? { callId: b.callId } : {}) });
        break;
      case "limit":
        out.limitsHit.push({
          at,
          limit: b.limit,
          ...(b.callId !== undefined ? { callId: b.callId } : {}),
          ...(b.detail !== undefined ? { detail: b.detail } : {}),
        });
        break;
      case "omitted":
        out.omittedEvents = b.count;
        break;
    }
  }
  return out;
}
