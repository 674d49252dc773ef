import { fail, isRecord, own, rejectUnknownKeys } from "./config-validation-error";
import { configPath } from "./config-path";

/** At most this many `logging.redactPatterns`; each is applied to every stored record. */
export const MAX_REDACT_PATTERNS = 32;
/** Characters of one pattern's source. */
export const MAX_REDACT_PATTERN_CHARS = 256;
export const LOGGING_KEYS = ["redactPatterns"];

/**
 * `logging`: `{ redactPatterns?: string[] }`. Each pattern is a JavaScript RegExp source (no slashes,
 * no flags); it is compiled once here with the `g` flag and every non-empty match is masked as `***`
 * in stored source, nested-call previews and redacted debug payloads (src/observability). Refused,
 * naming the key path: a non-array, more than MAX_REDACT_PATTERNS entries, a non-string, empty or
 * over-long entry, a source the engine rejects, or one that matches the empty string. Error messages
 * carry the engine's reason, never the pattern (an operator may have pasted a secret into one).
 * The compiled RegExps are shared by every request: use them with `String.prototype.replace` only.
 */
export function parseLoggingSection(value: unknown, path: string): RegExp[] {
  if (value === undefined) return [];
  if (!isRecord(value)) fail(path, "must be an object");
  rejectUnknownKeys(value, path, LOGGING_KEYS);
  const list = own(value, "redactPatterns");
  const listPath = configPath(path, "redactPatterns");
  if (list === undefined) return [];
  if (!Array.isArray(list)) fail(listPath, "must be an array of regular expression sources");
  if (list.length > MAX_REDACT_PATTERNS) fail(listPath, `has ${list.length} patterns; at most ${MAX_REDACT_PATTERNS} are allowed`);
  return list.map((entry, i) => compilePattern(entry, configPath(listPath, i)));
}

function compilePattern(source: unknown, path: string): RegExp {
  if (typeof source !== "string") fail(path, "must be a string (a JavaScript regular expression source)");
  if (source.length === 0) fail(path, "must not be empty");
  if (source.length > MAX_REDACT_PATTERN_CHARS) fail(path, `is ${source.length} characters; at most ${MAX_REDACT_PATTERN_CHARS} are allowed`);
  let pattern: RegExp;
  try {
    pattern = new RegExp(source, "g");
  } catch (error) {
    // V8: "Invalid regular expression: /<source>/g: Unterminated group" — keep only the reason.
    const message = error instanceof Error ? error.message : "";
    const reason = message.slice(message.lastIndexOf(": ") + 2) || "rejected by the engine";
    fail(path, `is not a valid JavaScript regular expression (${reason})`);
  }
  if (new RegExp(source).test("")) fail(path, "must not match the empty string (it would mask nothing but run everywhere)");
  return pattern;
}
