/**
 * Structured logs: one JSON line per record on the console, which Workers Logs indexes
 * (`[observability]` in wrangler.toml). Records are whitelisted field by field: a field that
 * is not in its kind's rule table never reaches the output, strings are bounded, and errors
 * become `{ name, message }` (never a stack). Cell code, returned values, tool inputs, client
 * results and bearer tokens have no field to go into.
 */

import { MAX_DEBUG_SNAPSHOT_CHARS } from "./debug-flags";

/** The calls that run through a turn's cell machinery (Tool Search's structured tools only count and persist). */
export type CellTool = "exec" | "wait" | "tool_search_code" | "tool_search" | "tool_describe" | "tool_call";

/** Bridge counters of one cell (the delta it caused, not the turn's running totals). */
export type BridgeCounts = { search: number; describe: number; call: number };

/** One per HTTP request, written when the response is ready. */
export type RequestFields = {
  requestId: string;
  method: string;
  /** The matched route pattern (`/v1/sessions/:sessionId/turns`), not the raw path. */
  route: string;
  status: number;
  durationMs: number;
  tenant?: string;
  sessionId?: string;
  turnId?: string;
  tool?: string;
  /** The error code of a non-2xx answer (`unauthorized`, `not_found`, `internal_error`, …). */
  errorCode?: string;
  /** The request's declared body size (Content-Length), when it declared one. */
  requestBytes?: number;
};

/** One per `exec` / `wait` the session object answered with a CodeModeResult. */
export type CellFields = {
  tool: CellTool;
  requestId?: string;
  tenant: string;
  sessionId: string;
  turnId: string;
  /** The parked run this cell resumed or parked as (opaque id). */
  runId?: string;
  outcome: "completed" | "waiting" | "failed";
  /** The seed's failure code; absent for a program's own uncaught error. */
  errorCode?: string;
  /** Why a waiting cell parked. */
  reason?: "pending_tools" | "yield";
  /** From arrival at the session object to the answer (queueing behind other cells included); absent when unknown. */
  durationMs?: number;
  /** Time spent queued behind the session's other cells before this one ran. */
  queuedMs?: number;
  /** Absent when unknown (a cell lost to an object reset). */
  bridge?: BridgeCounts;
  /** UTF-8 bytes of the result as returned to the caller. */
  resultBytes: number;
  /** Stored (compressed) snapshot bytes of a parked run. */
  snapshotBytes?: number;
  pendingToolCalls?: number;
  language?: "javascript" | "typescript";
  /** The session object was reset under this cell; reported by the fresh instance. */
  lost?: boolean;
};

/** A host-side failure that was handled (turned into a result, retried, or ignored) rather than thrown. */
export type HostErrorFields = {
  /** Where it happened, dotted (`park.encode`, `http.unhandled`). */
  where: string;
  error: unknown;
  requestId?: string;
  tenant?: string;
  sessionId?: string;
  turnId?: string;
  runId?: string;
  tool?: string;
};

/**
 * One completed nested call (or a direct tool call), under its parent outer call, with the policy
 * decision it got (seed 002, "Nested tool execution": trajectory and audit events). Never its input
 * or result.
 */
export type ToolCallFields = {
  requestId?: string;
  tenant: string;
  sessionId: string;
  turnId: string;
  /** The outer call (`exec`, `wait`, a Tool Search control, or the direct tool itself). */
  parentCallId: string;
  callId: string;
  tool: string;
  source: string;
  outcome: "ok" | "error";
  /** allowed, denied_by_policy, blocked_by_hook, approved, denied, timed_out, cancelled. */
  decision: string;
  durationMs?: number;
};

/** The image registry's alarm pruned images no build still uses. */
export type ImagePruneFields = { pruned: number };

/** Written only when `CODEMODE_DEBUG` asks (debug-flags.ts): what a turn's model would be sent. */
export type DebugFields = {
  event: "activation" | "model_payload" | "model_request" | "model_response" | "model_sse";
  requestId?: string;
  tenant?: string;
  sessionId?: string;
  turnId?: string;
  codeModeEngaged?: boolean;
  /** `code_mode`, `tool_search_code`, `tool_search_tools`, `direct` or `none`. */
  surface?: string;
  toolSearchMode?: string;
  fallbackFrom?: string;
  /** The model-facing tool names, in the order sent. */
  toolNames?: string[];
  /** `payload=full-redacted`: the payload as redacted, capped JSON text. */
  payload?: string;
  /** Provider transport (`transport`): the request URL (redacted), body bytes, status and time. */
  url?: string;
  bytes?: number;
  status?: number;
  durationMs?: number;
  /** `sse=…`: the event's number in the stream and its redacted, capped data. */
  n?: number;
  data?: string;
};

export type LogFields = {
  request: RequestFields;
  cell: CellFields;
  host_error: HostErrorFields;
  image_prune: ImagePruneFields;
  debug: DebugFields;
  tool_call: ToolCallFields;
};
export type LogKind = keyof LogFields;

/** Where lines go: the console by default (Workers Logs), a capture in tests. */
export type LogSink = (line: string, level: "info" | "error") => void;

type Rule = "string" | "number" | "boolean" | "counts" | "error" | "names" | "snapshot";

/** The whitelist. Every field of every kind must have a rule here (the type checks it). */
const RULES: { [K in LogKind]: { [F in keyof Required<LogFields[K]>]: Rule } } = {
  request: {
    requestId: "string",
    method: "string",
    route: "string",
    status: "number",
    durationMs: "number",
    tenant: "string",
    sessionId: "string",
    turnId: "string",
    tool: "string",
    errorCode: "string",
    requestBytes: "number",
  },
  cell: {
    tool: "string",
    requestId: "string",
    tenant: "string",
    sessionId: "string",
    turnId: "string",
    runId: "string",
    outcome: "string",
    errorCode: "string",
    reason: "string",
    durationMs: "number",
    queuedMs: "number",
    bridge: "counts",
    resultBytes: "number",
    snapshotBytes: "number",
    pendingToolCalls: "number",
    language: "string",
    lost: "boolean",
  },
  host_error: {
    where: "string",
    error: "error",
    requestId: "string",
    tenant: "string",
    sessionId: "string",
    turnId: "string",
    runId: "string",
    tool: "string",
  },
  image_prune: { pruned: "number" },
  tool_call: {
    requestId: "string",
    tenant: "string",
    sessionId: "string",
    turnId: "string",
    parentCallId: "string",
    callId: "string",
    tool: "string",
    source: "string",
    outcome: "string",
    decision: "string",
    durationMs: "number",
  },
  debug: {
    event: "string",
    requestId: "string",
    tenant: "string",
    sessionId: "string",
    turnId: "string",
    codeModeEngaged: "boolean",
    surface: "string",
    toolSearchMode: "string",
    fallbackFrom: "string",
    toolNames: "names",
    payload: "snapshot",
    url: "string",
    bytes: "number",
    status: "number",
    durationMs: "number",
    n: "number",
    data: "snapshot",
  },
};

/** At most this many tool names in a debug record (the count past it is given). */
export const MAX_LOG_NAMES = 200;

/** Strings are cut here (ids are far shorter; error messages are summaries, not payloads). */
export const MAX_LOG_STRING = 300;

const LEVEL: Record<LogKind, "info" | "error"> = {
  request: "info",
  cell: "info",
  host_error: "error",
  image_prune: "info",
  debug: "info",
  tool_call: "info",
};

export const consoleSink: LogSink = (line, level) => (level === "error" ? console.error(line) : console.log(line));

/** Isolate-wide, like the VM ledger: every gateway and session object of the isolate logs through it. */
let sink: LogSink = consoleSink;

/**
 * Send log lines somewhere else (tests capture them; an embedding may forward them). Returns
 * a function that puts the previous sink back.
 */
export function setLogSink(next: LogSink): () => void {
  const previous = sink;
  sink = next;
  return () => {
    sink = previous;
  };
}

function bounded(text: string): string {
  return text.length <= MAX_LOG_STRING ? text : `${text.slice(0, MAX_LOG_STRING)}…`;
}

/** An error as `{ name, message }`: no stack, no properties, no host object. */
export function describeError(error: unknown): { name: string; message: string } {
  if (error instanceof Error) return { name: bounded(error.name || "Error"), message: bounded(error.message) };
  if (typeof error === "string") return { name: "string", message: bounded(error) };
  return { name: typeof error, message: "" };
}

function clean(rule: Rule, value: unknown): unknown {
  switch (rule) {
    case "string":
      return typeof value === "string" ? bounded(value) : undefined;
    case "number":
      return typeof value === "number" && Number.isFinite(value) ? value : undefined;
    case "boolean":
      return typeof value === "boolean" ? value : undefined;
    case "error":
      return value === undefined ? undefined : describeError(value);
    case "names": {
      if (!Array.isArray(value)) return undefined;
      const names = value.slice(0, MAX_LOG_NAMES).map((n) => (typeof n === "string" ? bounded(n) : "?"));
      return value.length > MAX_LOG_NAMES ? [...names, `… ${value.length - MAX_LOG_NAMES} more`] : names;
    }
    case "snapshot":
      // Redacted by the caller (redact-secrets.ts); capped here.
      return typeof value === "string"
        ? value.length <= MAX_DEBUG_SNAPSHOT_CHARS
          ? value
          : `${value.slice(0, MAX_DEBUG_SNAPSHOT_CHARS)}…[truncated]`
        : undefined;
    case "counts": {
      if (value === null || typeof value !== "object") return undefined;
      const c = value as Partial<BridgeCounts>;
      const n = (x: unknown) => (typeof x === "number" && Number.isFinite(x) ? x : 0);
      return { search: n(c.search), describe: n(c.describe), call: n(c.call) };
    }
  }
}

/** The record exactly as it is written: `kind` first, then only whitelisted, cleaned fields. */
export function redact<K extends LogKind>(kind: K, fields: LogFields[K]): Record<string, unknown> {
  const out: Record<string, unknown> = { kind };
  const rules = RULES[kind] as Record<string, Rule>;
  for (const [name, rule] of Object.entries(rules)) {
    const value = clean(rule, (fields as Record<string, unknown>)[name]);
    if (value !== undefined) out[name] = value;
  }
  return out;
}

/** Write one structured record. Never throws: logging must not change what a request does. */
export function logRecord<K extends LogKind>(kind: K, fields: LogFields[K]): void {
  try {
    sink(JSON.stringify(redact(kind, fields)), LEVEL[kind]);
  } catch {
    // A sink that fails has nowhere to report to; the request goes on.
  }
}
