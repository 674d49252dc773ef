import { fail, isRecord, own, rejectUnknownKeys } from "./config-validation-error";
import { configPath } from "./config-path";

/**
 * `approvals` (top level and `agents.entries.<id>.approvals`): which tools need an operator's
 * decision before they run, and how long a decision may take. `require` holds tool names with
 * `*` globs (`notes_*`, `*__delete`, `*`); an agent's list is added to the global one, its
 * `timeoutSeconds` replaces the global one. Unset: no tool needs approval (plugins may still mark
 * a tool `requiresApproval`), 300 s.
 */
export type ApprovalSettings = { require: string[]; timeoutSeconds: number };

export const APPROVAL_TIMEOUT_DEFAULT_SECONDS = 300;
export const APPROVAL_TIMEOUT_RANGE = Object.freeze({ min: 1, max: 3600 });
export const MAX_APPROVAL_PATTERNS = 256;
export const APPROVALS_KEYS = ["require", "timeoutSeconds"];

export const APPROVALS_OFF: ApprovalSettings = Object.freeze({ require: [], timeoutSeconds: APPROVAL_TIMEOUT_DEFAULT_SECONDS }) as ApprovalSettings;

/** Parsed settings; `timeoutSeconds` undefined when the section does not set it (an agent inherits the global value). */
export function parseApprovals(value: unknown, path: string): { require: string[]; timeoutSeconds?: number } | undefined {
  if (value === undefined) return undefined;
  if (!isRecord(value)) fail(path, "must be an object { require, timeoutSeconds }");
  rejectUnknownKeys(value, path, APPROVALS_KEYS);
  const out: { require: string[]; timeoutSeconds?: number } = { require: [] };
  const require = own(value, "require");
  if (require !== undefined) {
    const p = configPath(path, "require");
    if (!Array.isArray(require)) fail(p, "must be an array of tool names (`*` globs allowed)");
    if (require.length > MAX_APPROVAL_PATTERNS) fail(p, `has ${require.length} entries; at most ${MAX_APPROVAL_PATTERNS} are allowed`);
    require.forEach((name, i) => {
      if (typeof name !== "string" || name.length === 0 || name.length > 128 || /[\u0000-\u001f\u007f]/.test(name))
        fail(`${p}[${i}]`, "must be a tool name of 1-128 characters (`*` matches any run of characters)");
    });
    out.require = [...(require as string[])];
  }
  const timeout = own(value, "timeoutSeconds");
  if (timeout !== undefined) {
    if (typeof timeout !== "number" || !Number.isFinite(timeout)) fail(configPath(path, "timeoutSeconds"), "must be a number of seconds");
    // Clamped like the seed's numeric settings, never rejected.
    out.timeoutSeconds = Math.min(APPROVAL_TIMEOUT_RANGE.max, Math.max(APPROVAL_TIMEOUT_RANGE.min, Math.floor(timeout)));
  }
  return out;
}

/** The effective settings of a turn: the global list plus the agent's, the agent's timeout over the global one. */
export function resolveApprovals(
  global: { require: string[]; timeoutSeconds?: number } | undefined,
  agent: { require: string[]; timeoutSeconds?: number } | undefined,
): ApprovalSettings {
  return {
    require: [...new Set([...(global?.require ?? []), ...(agent?.require ?? [])])],
    timeoutSeconds: agent?.timeoutSeconds ?? global?.timeoutSeconds ?? APPROVAL_TIMEOUT_DEFAULT_SECONDS,
  };
}

/** `*` globs over a tool name (no other wildcard); linear, no regex built from config text. */
export function matchesToolPattern(pattern: string, name: string): boolean {
  const parts = pattern.split("*");
  if (parts.length === 1) return pattern === name;
  if (!name.startsWith(parts[0]!) || !name.endsWith(parts[parts.length - 1]!)) return false;
  let at = parts[0]!.length;
  const end = name.length - parts[parts.length - 1]!.length;
  if (end < at) return false;
  for (let i = 1; i < parts.length - 1; i++) {
    const found = name.indexOf(parts[i]!, at);
    if (found < 0 || found + parts[i]!.length > end) return false;
    at = found + parts[i]!.length;
  }
  return true;
}
