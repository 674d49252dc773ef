import type { CodeModeResult } from "../code-mode";
import { NESTED_PREVIEW_BYTES } from "../limits";
import { logRecord, redactedPreview, type RedactionOptions } from "../observability";
import { RUN_UNAVAILABLE } from "../runs";
import type { ActivitySink, NestedCall } from "../turns";
import type { PolicyDecision } from "../tools";
import type { SessionReply } from "../errors";
import type { OuterCallContext } from "../agent";
import { storedInput } from "../observability";
import type { TranscriptPort } from "./ports";

/** What the tool dispatch needs of an outer call. */
export type CallScope = {
  requestId?: string;
  parent?: AbortSignal;
  /** The outer call's id: the invocation id of a direct call (nested calls have their own). */
  callId?: string;
  activity?: ActivitySink;
  /** Server- or client-written metadata (descriptions, schemas, declaration files) entered the call's result. */
  taint?: (source: string) => void;
  /** The call's result already holds network-derived content (what it writes to tool data is marked). */
  untrusted?: () => boolean;
  /** Policy decisions (hooks, approvals), by invocation id. */
  record?: (callId: string | undefined, tool: string, decision: PolicyDecision, reason?: string) => void;
  onUpdate?: (invocationId: string | undefined, tool: string, partial: unknown) => void;
  /** When the call's cell was admitted to the session's queue (its deadline counts from here). */
  admittedAt?: number;
};

/** The parked run an outer call resumes: code mode's `wait`, or Tool Search's `tool_search_code { runId }`. */
export function resumedRunId(toolName: string, input: unknown): string | undefined {
  if (toolName !== "wait" && toolName !== "tool_search_code") return undefined;
  const runId = input !== null && typeof input === "object" ? (input as { runId?: unknown }).runId : undefined;
  return typeof runId === "string" ? runId : undefined;
}

/** `exec`'s `code`/`command` as stored: redacted source (seed 002, "Source in session history"); other inputs as given. */

/** Whose call an OuterCallRecorder writes, and where. */
export type OuterCallRecorderOptions = {
  store: TranscriptPort;
  turnId: string;
  call: OuterCallContext;
  toolName: string;
  now: () => number;
  redaction: RedactionOptions;
  /** Ids every `tool_call` log record carries. */
  ids?: { tenant: string; sessionId: string };
  /** The turn's client tools (by their own names): the pending calls that are the caller's to run. */
  clientTools?: ReadonlySet<string>;
};

/**
 * Writes one outer call's trajectory events: its start and end, every completed nested call
 * under it (bounded, redacted previews), client calls it handed out, the snapshot lifecycle
 * (parked, resumed, settled, dropped, expired) and the limits it hit. Tracks whether any nested
 * call was network-derived (the model-facing result is then wrapped as untrusted).
 */
export class OuterCallRecorder {
  untrusted = false;
  /** The run this call parked (set when it answered `waiting`). */
  private parkedRunId: string | undefined;
  /** Decisions seen for invocations under this call, for their log records. */
  private readonly decisions = new Map<string, PolicyDecision>();
  /** Policy refused this call itself (hooks, an approval): an outer `wait` then resumed nothing. */
  private refusedByPolicy = false;
  /** The end's log record went out (a log line is not undone with a rolled-back step; the end's rows are written again). */
  private endLogged = false;

  private readonly store: TranscriptPort;
  private readonly turnId: string;
  private readonly call: OuterCallContext;
  private readonly toolName: string;
  private readonly now: () => number;
  private readonly redaction: RedactionOptions;
  private readonly ids: { tenant: string; sessionId: string } | undefined;
  private readonly clientTools: ReadonlySet<string>;

  constructor(o: OuterCallRecorderOptions) {
    this.store = o.store;
    this.turnId = o.turnId;
    this.call = o.call;
    this.toolName = o.toolName;
    this.now = o.now;
    this.redaction = o.redaction;
    this.ids = o.ids;
    this.clientTools = o.clientTools ?? new Set();
  }

  private log(callId: string, tool: string, source: string, ok: boolean, decision: PolicyDecision | undefined, durationMs?: number): void {
    if (!this.ids) return;
    logRecord("tool_call", {
      ...(this.call.requestId !== undefined ? { requestId: this.call.requestId } : {}),
      tenant: this.ids.tenant,
      sessionId: this.ids.sessionId,
      turnId: this.turnId,
      parentCallId: this.call.callId,
      callId,
      tool,
      source,
      outcome: ok ? "ok" : "error",
      decision: decision ?? "allowed",
      ...(durationMs !== undefined ? { durationMs } : {}),
    });
  }

  private event(kind: string, body: Record<string, unknown>): void {
    this.store.event(this.turnId, this.now(), kind, body);
  }

  private preview(value: unknown): string {
    return redactedPreview(value, NESTED_PREVIEW_BYTES, this.redaction);
  }

  start(input: unknown): void {
    this.store.callStarted(this.turnId, this.call.callId, this.toolName, this.now());
    this.event("outer_start", {
      callId: this.call.callId,
      tool: this.toolName,
      via: this.call.via,
      // exec: its redacted source (bounded) and language only; any other input as a bounded, redacted preview.
      input: this.toolName === "exec" ? execShown(storedInput(this.toolName, input, this.redaction)) : this.preview(input),
    });
  }

  /**
   * The call's result may now hold network-derived content: a network-derived nested call
   * completed, or the cell read server- or client-written metadata (`source` names it).
   */
  taint(_source: string): void {
    this.untrusted = true;
    // It came after this call parked its run (a slow or approval-gated call): the run now holds
    // network-derived content, so every later wait result of it is wrapped.
    if (this.parkedRunId !== undefined) this.store.markUntrusted(this.turnId, this.parkedRunId);
  }

  nested(n: NestedCall): void {
    if (n.networkDerived) this.taint(n.tool);
    this.log(n.invocationId, n.tool, n.source, n.ok, this.decisions.get(n.invocationId) ?? (n.denied ? "denied_by_policy" : undefined), n.durationMs);
    this.call.onNested?.(n);
    this.event("nested", {
      parentCallId: this.call.callId,
      invocationId: n.invocationId,
      tool: n.tool,
      source: n.source,
      ok: n.ok,
      ...(n.denied ? { denied: true } : {}),
      durationMs: n.durationMs,
      input: this.preview(n.input),
      ...(n.ok ? { result: this.preview(parseOr(n.result)) } : { error: this.preview(n.error) }),
      ...(n.phase ? { phase: n.phase } : {}),
    });
  }

  /** A policy decision on a call under this one (or on this call itself, for a direct tool). */
  policy(invocationId: string | undefined, tool: string, decision: PolicyDecision, reason?: string): void {
    const own = invocationId === undefined || invocationId === this.call.callId;
    if (own && !ADMITTED.has(decision)) this.refusedByPolicy = true;
    this.decisions.set(invocationId ?? this.call.callId, decision);
    this.event("policy", {
      invocationId: invocationId ?? this.call.callId,
      tool,
      decision,
      ...(reason !== undefined ? { reason: reason.slice(0, 240) } : {}),
    });
  }

  /**
   * A call answered without running (arguments that are not JSON, the transcript bound, a
   * cancelled /chat call, a stopped turn's repair): on record as `not_run`, with why as its code.
   */
  notRun(input: unknown, code: string): void {
    this.start(input);
    this.store.callEnded(this.turnId, this.call.callId);
    this.event("outer_end", { callId: this.call.callId, tool: this.toolName, status: "not_run", code, durationMs: 0 });
  }

  /**
   * A client tool the model called directly passed policy: `pending` until its result arrives
   * (`client_result` settles it, and its log record is written then). It stays an open call until
   * the turn's waiting answer is saved: a reset before that never handed it to the caller.
   */
  handedOut(durationMs: number): void {
    this.event("outer_end", { callId: this.call.callId, tool: this.toolName, status: "pending", durationMs });
  }

  /**
   * The gateway failed the call (a throw, not a result): it is not running any more. Its end goes
   * on record as `failed` with `internal_error`, best effort: the throw is what gets reported.
   */
  broke(durationMs: number): void {
    try {
      this.store.callEnded(this.turnId, this.call.callId);
      this.event("outer_end", { callId: this.call.callId, tool: this.toolName, status: "failed", code: "internal_error", durationMs });
    } catch {
      // The storage failed too: a reset reports the call lost.
    }
  }

  end(reply: SessionReply<unknown>, input: unknown, durationMs: number): void {
    const callId = this.call.callId;
    this.store.callEnded(this.turnId, callId);
    if (!reply.ok) {
      this.event("outer_end", { callId, tool: this.toolName, status: "refused", code: reply.reason, durationMs });
      return;
    }
    // A direct tool (not a cell): its own record, with its decision.
    const direct = (reply.body as { status?: unknown; telemetry?: unknown } | null)?.telemetry === undefined;
    if (direct && !this.endLogged)
      this.log(callId, this.toolName, "direct", (reply.body as { status?: unknown }).status !== "failed", this.decisions.get(callId), durationMs);
    this.endLogged = true;
    const body = reply.body as LooseResult;
    const status = typeof body.status === "string" ? body.status : "completed";
    const code = body.status === "failed" ? body.code : undefined;
    const resumed = resumedRunId(this.toolName, input);
    const runId = body.status === "waiting" ? body.runId : resumed;
    this.event("outer_end", {
      callId,
      tool: this.toolName,
      status,
      ...(code !== undefined ? { code } : {}),
      ...(typeof runId === "string" ? { runId } : {}),
      durationMs,
      ...(this.untrusted ? { untrusted: true } : {}),
    });
    // A wait refused by policy never claimed its run: it stays parked, nothing was resumed.
    if (resumed !== undefined && !this.refusedByPolicy) {
      const unavailable = body.status === "failed" && code === "invalid_input";
      if (unavailable) {
        if (body.error === RUN_UNAVAILABLE) this.event("snapshot", { event: "unavailable", runId, callId });
      } else {
        this.event("snapshot", { event: "resumed", runId: resumed, callId });
        if (body.status !== "waiting") this.event("snapshot", { event: body.status === "completed" ? "settled" : "dropped", runId: resumed, callId });
      }
    }
    if (body.status === "waiting") {
      // A Tool Search tool_call hands out a client call without parking anything (no runId).
      if (body.runId !== undefined) {
        this.parkedRunId = body.runId;
        if (this.untrusted) this.store.markUntrusted(this.turnId, body.runId);
        this.event("snapshot", { event: "parked", runId: body.runId, callId });
      }
      // Only client calls are handed to the caller; host calls still running complete as nested calls.
      for (const p of body.pendingToolCalls ?? []) {
        if (!this.clientTools.has(p.tool)) continue;
        this.event("client_call", { parentCallId: callId, invocationId: p.callId, tool: p.tool, source: "client", input: this.preview(p.input) });
      }
    }
    if (code === "timeout" || code === "output_limit_exceeded" || code === "snapshot_limit_exceeded" || code === "aborted")
      this.event("limit", { limit: code, callId, detail: typeof body.error === "string" ? body.error.slice(0, 240) : undefined });
    if (isTruncated(body.value)) this.event("limit", { limit: "maxOutputBytes", callId, detail: "the value was truncated" });
  }
}

/** Decisions that let a call run. */
const ADMITTED: ReadonlySet<PolicyDecision> = new Set<PolicyDecision>(["allowed", "approved"]);

/** Source shown in the trajectory: this much of each alias, at most. */
const SHOWN_SOURCE_CHARS = 16 * 1024;

function execShown(stored: unknown): unknown {
  if (typeof stored === "string") return stored.slice(0, SHOWN_SOURCE_CHARS);
  if (typeof stored !== "object" || stored === null) return stored;
  const s = stored as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of ["code", "command"]) {
    const v = s[key];
    if (typeof v === "string")
      out[key] = v.length > SHOWN_SOURCE_CHARS ? `${v.slice(0, SHOWN_SOURCE_CHARS)}\n// …[${v.length - SHOWN_SOURCE_CHARS} more characters]` : v;
  }
  if (s.language === "javascript" || s.language === "typescript") out.language = s.language;
  return out;
}

/** A CodeModeResult or a direct tool's `{ status, value | error }`, read field by field. */
type LooseResult = {
  status?: unknown;
  value?: unknown;
  error?: unknown;
  code?: CodeModeResult extends infer R ? (R extends { code?: infer C } ? C : never) : never;
  runId?: string;
  pendingToolCalls?: Array<{ callId: string; tool: string; input: unknown }>;
};

function parseOr(text: string | undefined): unknown {
  if (text === undefined) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function isTruncated(value: unknown): boolean {
  return typeof value === "object" && value !== null && (value as { truncated?: unknown }).truncated === true;
}
