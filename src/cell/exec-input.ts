import type { CodeModeLanguage } from "../code-mode";

export type ParsedExecInput = { code: string; language: CodeModeLanguage; restartSafe: boolean };
export type ExecInputResult = { ok: true; input: ParsedExecInput } | { ok: false; message: string };

const KNOWN_KEYS = new Set(["code", "command", "language", "restartSafe"]);

/**
 * The seed's `exec` input rules. `command` is an alias of `code` (not a shell command);
 * blank aliases count as absent; a populated alias that is not a string invalidates both
 * (fail closed); two non-empty aliases must match.
 */
export function parseExecInput(raw: unknown, enabledLanguages: readonly CodeModeLanguage[]): ExecInputResult {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    return { ok: false, message: "exec input must be an object: { code, language? }." };
  }
  const input = raw as Record<string, unknown>;
  const unknown = Object.keys(input).filter((k) => !KNOWN_KEYS.has(k));
  if (unknown.length > 0) {
    return {
      ok: false,
      message: `unknown exec field ${JSON.stringify(unknown[0])}; exec takes code, command (alias of code), language and restartSafe.`,
    };
  }
  for (const alias of ["code", "command"] as const) {
    const v = input[alias];
    if (v !== undefined && v !== null && typeof v !== "string") {
      return { ok: false, message: `exec ${alias} must be a string; with an invalid ${alias} neither code nor command is used.` };
    }
  }
  const code = typeof input.code === "string" && input.code.trim() !== "" ? input.code : undefined;
  const command = typeof input.command === "string" && input.command.trim() !== "" ? input.command : undefined;
  if (code === undefined && command === undefined) {
    return { ok: false, message: "exec needs non-empty code (JavaScript or TypeScript source); command is only an alias of code." };
  }
  if (code !== undefined && command !== undefined && code !== command) {
    return { ok: false, message: "exec code and command are aliases and must match when both are set." };
  }
  // No language: "javascript", unless the turn enables only TypeScript (matches the exec schema).
  const language = input.language ?? (enabledLanguages.includes("javascript") ? "javascript" : (enabledLanguages[0] ?? "javascript"));
  if (language !== "javascript" && language !== "typescript") {
    return { ok: false, message: `exec language must be "javascript" or "typescript".` };
  }
  if (!enabledLanguages.includes(language)) {
    return { ok: false, message: `exec language "${language}" is not enabled (enabled: ${enabledLanguages.join(", ")}).` };
  }
  if (input.restartSafe !== undefined && typeof input.restartSafe !== "boolean") {
    return { ok: false, message: "exec restartSafe must be a boolean; leave it unset for ordinary calls." };
  }
  return { ok: true, input: { code: (code ?? command)!, language, restartSafe: input.restartSafe === true } };
}
