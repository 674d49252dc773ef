/**
 * `CODEMODE_DEBUG` (a Worker var): the gateway's equivalents of the seed's `OPENCLAW_DEBUG_*`
 * switches, as one comma-separated list.
 * - `code-mode` (OPENCLAW_DEBUG_CODE_MODE=1): one `debug` record per opened turn with the
 *   activation decision (code mode engaged, surface, Tool Search mode and fallback).
 * - `payload=tools` (OPENCLAW_DEBUG_MODEL_PAYLOAD=tools): the model-facing tool names.
 * - `payload=full-redacted`: also a capped (16 KiB), redacted JSON snapshot of the model payload.
 * - `transport`, `sse=events`, `sse=peek` (OPENCLAW_DEBUG_MODEL_TRANSPORT / _SSE) are accepted for
 *   the provider adapters and the SSE stream of agent turns.
 * Unknown flags are reported (once per isolate, as a host_error record), never fatal: a typo in a
 * debug switch must not take the gateway down.
 */
export type DebugFlags = {
  codeMode: boolean;
  payload: "off" | "tools" | "full-redacted";
  transport: boolean;
  sse: "off" | "events" | "peek";
  unknown: string[];
};

export const DEBUG_OFF: DebugFlags = Object.freeze({ codeMode: false, payload: "off", transport: false, sse: "off", unknown: [] }) as DebugFlags;

/** Snapshot cap for `payload=full-redacted`. */
export const MAX_DEBUG_SNAPSHOT_CHARS = 16 * 1024;

export function parseDebugFlags(value: string | undefined): DebugFlags {
  if (value === undefined || value.trim() === "") return DEBUG_OFF;
  const flags: DebugFlags = { ...DEBUG_OFF, unknown: [] };
  for (const raw of value.split(/[\s,]+/)) {
    const flag = raw.trim().toLowerCase();
    if (flag === "") continue;
    if (flag === "code-mode") flags.codeMode = true;
    else if (flag === "payload=tools") flags.payload = flags.payload === "full-redacted" ? "full-redacted" : "tools";
    else if (flag === "payload=full-redacted") flags.payload = "full-redacted";
    else if (flag === "transport") flags.transport = true;
    else if (flag === "sse=events") flags.sse = flags.sse === "peek" ? "peek" : "events";
    else if (flag === "sse=peek") flags.sse = "peek";
    else flags.unknown.push(raw.slice(0, 64));
  }
  return flags;
}
