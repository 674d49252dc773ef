/**
 * Guest identifiers for MCP server and tool names (seed 002: `MCP.chromeDevtools.takeSnapshot`,
 * `MCP.github.createIssue`). Pure and deterministic: the same set of names always gives the same
 * identifiers, whatever order the names arrive in.
 *
 * NORMALIZATION RULE (one name):
 * 1. Every character outside ASCII `A-Z a-z 0-9 $` is a separator (`-`, `_`, `.`, `/`, space,
 *    and every non-ASCII character: no look-alike letters reach guest code). Runs of separators
 *    split the name into words; leading and trailing separators vanish.
 * 2. A name with no separator is kept as it is (`createIssue`, `listPRs`, `echo`).
 * 3. Otherwise the words are joined camelCase: the first word unchanged, every later word with
 *    its first letter upper-cased and the rest unchanged (`create_issue` → `createIssue`,
 *    `chrome-devtools` → `chromeDevtools`, `get HTTP status` → `getHTTPStatus`).
 * 4. No words at all (`""`, `"--"`, `"日本"`) gives `unnamed`.
 * 5. A result that starts with a digit, or is reserved, gets the prefix `_` (`2fa` → `_2fa`,
 *    `delete` → `_delete`). Reserved: JavaScript keywords and strict-mode reserved words,
 *    `async of undefined NaN Infinity eval arguments`, and the protocol names the engine calls
 *    on any object (`Object.prototype` members like `constructor`, `toString`, `hasOwnProperty`,
 *    and `then`, `toJSON`: `await MCP.<server>` or `JSON.stringify(MCP.<server>)` must never
 *    call a server) — the one rule of src/guest-names.ts, shared with catalog globals;
 *    for tools also the namespace's own members `$api resources prompts`; for servers also
 *    `index` (the shared file `mcp/index.d.ts`).
 *
 * COLLISIONS (within one server's tools, or within one turn's servers): names are grouped by
 * their normalized form. A form reached by one name is that name's identifier. In a group of
 * several, the name spelled exactly like the form (if any) comes first, then the others in
 * code-unit order of the original names; the first keeps the form, the k-th (k ≥ 2) gets the
 * first free `<form>_<n>` for n = 2, 3, … ("free": not the form of any name in the set and not
 * already assigned; a form has no `_` past its first character, so a suffixed name never
 * equals another name's form). Groups are processed in code-unit order of their form.
 */

import { isReservedGuestName } from "../guest-names";

/** Members of every `MCP.<server>` namespace object: a tool cannot take these names. */
export const MCP_NAMESPACE_MEMBERS: readonly string[] = ["$api", "resources", "prompts"];

/** `mcp/index.d.ts` is the shared file: a server cannot be called `index`. */
const SERVER_ONLY_RESERVED = ["index"];

export type McpNameKind = "server" | "tool";

function isReserved(name: string, kind: McpNameKind): boolean {
  if (isReservedGuestName(name)) return true;
  return kind === "tool" ? MCP_NAMESPACE_MEMBERS.includes(name) : SERVER_ONLY_RESERVED.includes(name);
}

/** The normalized form of one name (rule steps 1–5), before collisions are resolved. */
export function normalizeMcpName(raw: string, kind: McpNameKind): string {
  const words = raw.split(/[^A-Za-z0-9$]+/).filter((w) => w.length > 0);
  let out: string;
  if (words.length === 0) out = "unnamed";
  else if (words.length === 1 && words[0] === raw) out = raw;
  else out = words.map((w, i) => (i === 0 ? w : w[0]!.toUpperCase() + w.slice(1))).join("");
  if (/^[0-9]/.test(out) || isReserved(out, kind)) out = "_" + out;
  return out;
}

function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Identifiers for a set of names of one kind (one server's tools, or one turn's servers),
 * resolved for collisions as the module header states. Duplicate input names map to one entry.
 */
export function assignMcpNames(rawNames: Iterable<string>, kind: McpNameKind): Map<string, string> {
  const groups = new Map<string, string[]>();
  for (const raw of new Set(rawNames)) {
    const form = normalizeMcpName(raw, kind);
    const group = groups.get(form);
    if (group) group.push(raw);
    else groups.set(form, [raw]);
  }
  const taken = new Set(groups.keys());
  const names = new Map<string, string>();
  for (const form of [...groups.keys()].sort(byCodeUnits)) {
    const members = groups.get(form)!.sort((a, b) => (a === form ? -1 : b === form ? 1 : byCodeUnits(a, b)));
    names.set(members[0]!, form);
    let n = 2;
    for (const raw of members.slice(1)) {
      while (taken.has(`${form}_${n}`)) n++;
      const name = `${form}_${n}`;
      taken.add(name);
      names.set(raw, name);
    }
  }
  return names;
}
