import type { CodeModeLanguage } from "../code-mode";

/** `false` (default) = off, `true` = on for tool-capable runs, `"auto"` = on only for catalog-preferred models. */
export type CodeModeEnabled = boolean | "auto";

/** The limits a code-mode run actually uses: every field present, every number clamped. */
export type ResolvedCodeModeOptions = {
  enabled: CodeModeEnabled;
  runtime: "quickjs-wasi";
  mode: "only";
  languages: CodeModeLanguage[];
  timeoutMs: number;
  memoryLimitBytes: number;
  maxOutputBytes: number;
  maxSnapshotBytes: number;
  maxPendingToolCalls: number;
  snapshotTtlSeconds: number;
  searchDefaultLimit: number;
  maxSearchLimit: number;
};

/** Numeric option names, in the order of the seed's configuration table. */
export const CODE_MODE_NUMERIC_KEYS = [
  "timeoutMs",
  "memoryLimitBytes",
  "maxOutputBytes",
  "maxSnapshotBytes",
  "maxPendingToolCalls",
  "snapshotTtlSeconds",
  "searchDefaultLimit",
  "maxSearchLimit",
] as const;

export type CodeModeNumericKey = (typeof CODE_MODE_NUMERIC_KEYS)[number];

/**
 * One `tools.codeMode` block (global or per agent) after validation, before merging and clamping.
 * Every field is optional: an absent field inherits from the enclosing level, then from the defaults.
 * Numbers are kept as written (validated to be numbers); `resolveCodeModeOptions` rounds down and clamps.
 */
export type CodeModeSettings = {
  enabled?: CodeModeEnabled;
  runtime?: "quickjs-wasi";
  mode?: "only";
  languages?: CodeModeLanguage[];
} & Partial<Record<CodeModeNumericKey, number>>;

export const CODE_MODE_LANGUAGES: readonly CodeModeLanguage[] = Object.freeze(["javascript", "typescript"]);

/**
 * Seed 002 "Configuration" table. Out-of-range values are clamped into [min, max], never rejected.
 * `searchDefaultLimit` is additionally clamped to the resolved `maxSearchLimit`.
 */
export const CODE_MODE_LIMITS: Readonly<Record<CodeModeNumericKey, Readonly<{ min: number; max: number }>>> = Object.freeze({
  timeoutMs: Object.freeze({ min: 100, max: 60_000 }),
  memoryLimitBytes: Object.freeze({ min: 1_048_576, max: 1_073_741_824 }),
  maxOutputBytes: Object.freeze({ min: 1024, max: 10_485_760 }),
  maxSnapshotBytes: Object.freeze({ min: 1024, max: 268_435_456 }),
  maxPendingToolCalls: Object.freeze({ min: 1, max: 128 }),
  snapshotTtlSeconds: Object.freeze({ min: 1, max: 86_400 }),
  searchDefaultLimit: Object.freeze({ min: 1, max: 50 }),
  maxSearchLimit: Object.freeze({ min: 1, max: 50 }),
});

/** Seed 002 defaults. Frozen: copy before changing (resolveCodeModeOptions always returns a fresh object). */
export const CODE_MODE_DEFAULTS: ResolvedCodeModeOptions = Object.freeze({
  enabled: false,
  runtime: "quickjs-wasi",
  mode: "only",
  languages: Object.freeze(["javascript", "typescript"]) as CodeModeLanguage[],
  timeoutMs: 10_000,
  memoryLimitBytes: 67_108_864,
  maxOutputBytes: 65_536,
  maxSnapshotBytes: 10_485_760,
  maxPendingToolCalls: 16,
  snapshotTtlSeconds: 900,
  searchDefaultLimit: 8,
  maxSearchLimit: 50,
}) as ResolvedCodeModeOptions;
