import { MAX_DEBUG_SNAPSHOT_CHARS, parseDebugFlags, type DebugFlags } from "./debug-flags";
import { logRecord } from "./log";
import { redactSecrets } from "./redact-secrets";

export type TurnDebugFacts = {
  requestId?: string;
  tenant: string;
  sessionId: string;
  turnId: string;
  codeModeEngaged: boolean;
  surface: string;
  toolSearchMode?: string;
  fallbackFrom?: string;
};

const reportedUnknown = new Set<string>();

/** The debug flags of this request (`CODEMODE_DEBUG`); unknown flags are reported once per isolate. */
export function debugFlags(value: string | undefined): DebugFlags {
  const flags = parseDebugFlags(value);
  for (const flag of flags.unknown) {
    if (reportedUnknown.has(flag) || reportedUnknown.size > 64) continue;
    reportedUnknown.add(flag);
    logRecord("host_error", {
      where: "config.debug_flags",
      error: new Error(
        `CODEMODE_DEBUG has an unknown flag ${JSON.stringify(flag)} (known: code-mode, payload=tools, payload=full-redacted, transport, sse=events, sse=peek); it is ignored`,
      ),
    });
  }
  return flags;
}

/**
 * `code-mode` and `payload=…`: what the turn's model would be sent, logged as `debug` records.
 * `redactPatterns` are the configured `logging.redactPatterns`, masked in the full-redacted payload too.
 */
export function logTurnSurface(
  flags: DebugFlags,
  facts: TurnDebugFacts,
  tools: ReadonlyArray<{ name: string }>,
  redactPatterns: readonly RegExp[] = [],
): void {
  const ids = { requestId: facts.requestId, tenant: facts.tenant, sessionId: facts.sessionId, turnId: facts.turnId };
  if (flags.codeMode) {
    logRecord("debug", {
      event: "activation",
      ...ids,
      codeModeEngaged: facts.codeModeEngaged,
      surface: facts.surface,
      toolSearchMode: facts.toolSearchMode,
      fallbackFrom: facts.fallbackFrom,
      toolNames: tools.map((t) => t.name),
    });
  }
  if (flags.payload !== "off") {
    logRecord("debug", {
      event: "model_payload",
      ...ids,
      toolNames: tools.map((t) => t.name),
      ...(flags.payload === "full-redacted" ? { payload: redactSecrets(JSON.stringify({ tools }), [], redactPatterns) } : {}),
    });
  }
}

/** Stream events logged under `sse=peek` (seed 002: the first five). */
const SSE_PEEK_EVENTS = 5;
/** One logged SSE event is cut to this many characters. */
const SSE_EVENT_CHARS = 2048;

/**
 * The provider transport as the debug switches see it (seed 002 "Debugging": model transport,
 * payload and SSE logging): `transport` logs each request's URL and size and each response's
 * status and time; `payload=tools` the tool names sent; `payload=full-redacted` a capped redacted
 * snapshot of the request; `sse=events` every provider stream event (redacted, capped), `sse=peek`
 * the first five. Undefined when every switch is off (no per-event cost).
 */
export function transportObserver(
  flags: DebugFlags,
  ids: { tenant: string; sessionId: string; turnId: string; requestId: string },
  redaction: { secrets: readonly string[]; patterns: readonly RegExp[] },
):
  | {
      request?(i: { url: string; body: unknown; bytes: number }): void;
      response?(i: { url: string; status: number; ms: number }): void;
      sseEvent?(data: string): void;
    }
  | undefined {
  if (!flags.transport && flags.payload === "off" && flags.sse === "off") return undefined;
  let seen = 0;
  return {
    request({ url, body, bytes }) {
      if (flags.transport)
        logRecord("debug", { event: "model_request", ...ids, url: redactSecrets(url, redaction.secrets, redaction.patterns), bytes });
      if (flags.payload !== "off") {
        const tools = (body as { tools?: Array<{ name?: string; function?: { name?: string } }> } | null)?.tools ?? [];
        logRecord("debug", {
          event: "model_payload",
          ...ids,
          toolNames: tools.map((t) => t.function?.name ?? t.name ?? "?"),
          ...(flags.payload === "full-redacted"
            ? { payload: redactSecrets(JSON.stringify(body), redaction.secrets, redaction.patterns).slice(0, MAX_DEBUG_SNAPSHOT_CHARS) }
            : {}),
        });
      }
    },
    response({ url, status, ms }) {
      if (flags.transport)
        logRecord("debug", {
          event: "model_response",
          ...ids,
          url: redactSecrets(url, redaction.secrets, redaction.patterns),
          status,
          durationMs: ms,
        });
    },
    sseEvent(data) {
      if (flags.sse === "off" || (flags.sse === "peek" && seen >= SSE_PEEK_EVENTS)) return;
      seen++;
      logRecord("debug", {
        event: "model_sse",
        ...ids,
        n: seen,
        data: redactSecrets(data, redaction.secrets, redaction.patterns).slice(0, SSE_EVENT_CHARS),
      });
    },
  };
}
