import type { CodeModeLanguage } from "../code-mode";
import { CODE_MODE_LANGUAGES, CODE_MODE_NUMERIC_KEYS, type CodeModeSettings } from "./code-mode-options";
import { fail, isRecord, rejectUnknownKeys } from "./config-validation-error";
import { configPath } from "./config-path";

const NUMERIC_KEYS: ReadonlySet<string> = new Set(CODE_MODE_NUMERIC_KEYS);
export const CODE_MODE_KEYS: readonly string[] = ["enabled", "runtime", "mode", "languages", ...CODE_MODE_NUMERIC_KEYS];

/**
 * Validates one `tools.codeMode` value (global, or `agents.entries.<agent>.tools.codeMode`).
 *
 * - `undefined` → `{}` (nothing set at this level).
 * - `true` / `false` / `"auto"` → shorthand for `{ enabled: value }`.
 * - object → each known field validated; `enabled` stays absent unless written, so configuring
 *   limits never enables code mode. Unknown keys are rejected so a typo never looks like it took effect.
 */
export function parseCodeModeSettings(value: unknown, path: string): CodeModeSettings {
  if (value === undefined) return {};
  if (typeof value === "boolean" || value === "auto") return { enabled: value };
  if (!isRecord(value)) fail(path, 'must be true, false, "auto" or an object');

  rejectUnknownKeys(value, path, CODE_MODE_KEYS);
  const settings: CodeModeSettings = {};
  for (const key of Object.keys(value)) {
    const keyPath = configPath(path, key);
    const field = value[key];
    if (field === undefined) continue;

    if (key === "enabled") {
      if (typeof field !== "boolean" && field !== "auto") fail(keyPath, 'must be true, false or "auto"');
      settings.enabled = field;
    } else if (key === "runtime") {
      if (field !== "quickjs-wasi") fail(keyPath, 'must be "quickjs-wasi" (the only supported runtime)');
      settings.runtime = field;
    } else if (key === "mode") {
      if (field !== "only") fail(keyPath, 'must be "only" (the only supported mode)');
      settings.mode = field;
    } else if (key === "languages") {
      settings.languages = parseLanguages(field, keyPath);
    } else if (NUMERIC_KEYS.has(key)) {
      // NaN is rejected; ±Infinity is an out-of-range number and is clamped later like any other.
      if (typeof field !== "number" || Number.isNaN(field)) fail(keyPath, "must be a number");
      settings[key as (typeof CODE_MODE_NUMERIC_KEYS)[number]] = field;
    }
  }
  return settings;
}

function parseLanguages(value: unknown, path: string): CodeModeLanguage[] {
  if (!Array.isArray(value)) fail(path, 'must be an array of "javascript" and/or "typescript"');
  if (value.length === 0) fail(path, "must list at least one language");
  const languages: CodeModeLanguage[] = [];
  value.forEach((entry: unknown, index) => {
    if (!CODE_MODE_LANGUAGES.includes(entry as CodeModeLanguage)) {
      fail(configPath(path, index), 'must be "javascript" or "typescript"');
    }
    const language = entry as CodeModeLanguage;
    if (!languages.includes(language)) languages.push(language);
  });
  return languages;
}
