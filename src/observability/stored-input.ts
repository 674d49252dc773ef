import { redactSource } from "./redact-source";

/** Secrets and `logging.redactPatterns` to mask wherever a session stores or shows text. */
export type RedactionOptions = { secrets: readonly string[]; patterns: readonly RegExp[] };

/** An outer call's input as transcripts and trajectories keep it: `exec` source redacted, anything else as given. */
export function storedInput(toolName: string, input: unknown, redaction: RedactionOptions): unknown {
  if (toolName !== "exec") return input;
  // Arguments that did not parse (e.g. cut off at max tokens) are still source: redacted the same way.
  if (typeof input === "string") return redactSource(input, redaction);
  if (typeof input !== "object" || input === null || Array.isArray(input)) return input;
  const out: Record<string, unknown> = { ...(input as Record<string, unknown>) };
  for (const key of ["code", "command"]) if (typeof out[key] === "string") out[key] = redactSource(out[key] as string, redaction);
  return out;
}
