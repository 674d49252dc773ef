import { parseDebugFlags, type DebugFlags } from "./debug-flags";
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
