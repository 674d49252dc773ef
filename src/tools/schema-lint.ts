import type { JsonSchema } from "./types";

const TYPES = new Set(["string", "number", "integer", "boolean", "object", "array", "null"]);
const SCHEMA_MAPS = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"];
const SCHEMA_LISTS = ["anyOf", "oneOf", "allOf", "prefixItems"];
const SCHEMA_ONE = [
  "items",
  "additionalProperties",
  "not",
  "contains",
  "if",
  "then",
  "else",
  "propertyNames",
  "unevaluatedProperties",
  "unevaluatedItems",
  "additionalItems",
];
const NUMBERS = [
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "minLength",
  "maxLength",
  "minItems",
  "maxItems",
  "minProperties",
  "maxProperties",
];

/**
 * "Compile" a schema: the validator interprets schemas lazily, so structural errors (bad
 * types, unresolvable local `$ref`s, invalid patterns) are found here, before a tool runs.
 * Returns the first problem with its JSON pointer, or undefined.
 */
export function lintSchema(root: unknown): string | undefined {
  const visit = (s: unknown, at: string): string | undefined => {
    if (typeof s === "boolean") return undefined;
    if (s === null || typeof s !== "object" || Array.isArray(s)) return `${at || "/"}: a schema must be an object or boolean`;
    const o = s as JsonSchema;
    if (o.type !== undefined) {
      const types = Array.isArray(o.type) ? o.type : [o.type];
      if (types.length === 0 || types.some((t) => typeof t !== "string" || !TYPES.has(t))) return `${at}/type: unknown type`;
    }
    for (const k of NUMBERS) if (o[k] !== undefined && typeof o[k] !== "number") return `${at}/${k}: must be a number`;
    if (o.required !== undefined && (!Array.isArray(o.required) || o.required.some((r) => typeof r !== "string")))
      return `${at}/required: must be an array of strings`;
    if (o.enum !== undefined && !Array.isArray(o.enum)) return `${at}/enum: must be an array`;
    if (o.pattern !== undefined) {
      if (typeof o.pattern !== "string") return `${at}/pattern: must be a string`;
      try {
        new RegExp(o.pattern, "u");
      } catch {
        return `${at}/pattern: invalid regular expression`;
      }
      const risk = backtrackingRisk(o.pattern);
      if (risk) return `${at}/pattern: ${risk}`;
    }
    if (o.patternProperties !== null && typeof o.patternProperties === "object") {
      for (const key of Object.keys(o.patternProperties)) {
        const risk = backtrackingRisk(key);
        if (risk) return `${at}/patternProperties: ${risk}`;
      }
    }
    if (o.$ref !== undefined) {
      if (typeof o.$ref !== "string") return `${at}/$ref: must be a string`;
      if (o.$ref.startsWith("#") && resolvePointer(root, o.$ref.slice(1)) === undefined) return `${at}/$ref: ${o.$ref} does not resolve`;
      if (!o.$ref.startsWith("#")) return `${at}/$ref: only local references are supported`;
    }
    for (const k of SCHEMA_MAPS) {
      const m = o[k];
      if (m === undefined) continue;
      if (m === null || typeof m !== "object" || Array.isArray(m)) return `${at}/${k}: must be an object`;
      for (const [name, sub] of Object.entries(m)) {
        const e = visit(sub, `${at}/${k}/${name}`);
        if (e) return e;
      }
    }
    for (const k of SCHEMA_LISTS) {
      const l = o[k];
      if (l === undefined) continue;
      if (!Array.isArray(l) || (k !== "prefixItems" && l.length === 0)) return `${at}/${k}: must be a non-empty array`;
      for (let i = 0; i < l.length; i++) {
        const e = visit(l[i], `${at}/${k}/${i}`);
        if (e) return e;
      }
    }
    for (const k of SCHEMA_ONE) {
      if (o[k] === undefined) continue;
      if (k === "items" && Array.isArray(o[k])) {
        for (let i = 0; i < (o[k] as unknown[]).length; i++) {
          const e = visit((o[k] as unknown[])[i], `${at}/${k}/${i}`);
          if (e) return e;
        }
        continue;
      }
      const e = visit(o[k], `${at}/${k}`);
      if (e) return e;
    }
    return undefined;
  };
  return visit(root, "");
}

function resolvePointer(root: unknown, pointer: string): unknown {
  if (pointer === "") return root;
  let cur: unknown = root;
  for (const raw of pointer.split("/").slice(1)) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    // Own properties only: a pointer segment like "constructor" must not reach a prototype.
    if (cur === null || typeof cur !== "object" || !Object.hasOwn(cur, key)) return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

/** Patterns longer than this are refused: a schema pattern is a shape, not a program. */
const MAX_PATTERN_CHARS = 512;
/** Unbounded repeats (`*`, `+`, `{n,}`, `{n,m}` past 32) a pattern may hold. */
export const MAX_PATTERN_REPEATS = 2;

/**
 * Schema patterns run in the host's own regex engine, on strings the guest program (or an MCP
 * server) chooses, outside any cell budget: a pattern that backtracks badly hangs the isolate
 * and every session in it. Refused here: a repeated group whose body repeats or alternates
 * (`(a+)+`, `(\w*)*`, `(a|aa)+`: exponential), more than MAX_PATTERN_REPEATS unbounded
 * repeats (`a*a*a*…`: polynomial, n^k), and long patterns. The length of the strings a pattern
 * meets is bounded too (patternSubjectLimit). Conservative by design; a schema can say the same
 * with a flat pattern or `maxLength`.
 */
export function backtrackingRisk(pattern: string): string | undefined {
  if (pattern.length > MAX_PATTERN_CHARS) return `longer than ${MAX_PATTERN_CHARS} characters`;
  if (unboundedRepeats(pattern) > MAX_PATTERN_REPEATS)
    return `more than ${MAX_PATTERN_REPEATS} unbounded repeats (*, +, {n,}) can backtrack polynomially; use a flatter pattern or maxLength`;
  if (patternSubjectLimit(pattern) === undefined)
    return "its repeats ({n,m}, ?, *, +) can backtrack through too many choices to check even 64 characters in bounded time; use a flatter pattern or maxLength";
  // For each open group: does its body contain a quantifier or an alternation?
  const stack: Array<{ risky: boolean }> = [];
  let risk: string | undefined;
  forEachSyntax(pattern, (c, i) => {
    if (risk !== undefined) return;
    if (c === "(") stack.push({ risky: false });
    else if (c === "|" && stack.length > 0) stack[stack.length - 1]!.risky = true;
    // `?` is a choice too (`(aa?)+` splits a run of a's exponentially), unless it is group syntax `(?`.
    else if ((c === "*" || c === "+" || c === "{" || (c === "?" && pattern[i - 1] !== "(")) && stack.length > 0)
      stack[stack.length - 1]!.risky = true;
    else if (c === ")") {
      const group = stack.pop();
      const next = pattern[i + 1];
      // An exact count (`(\d{1,3}\.){3}`) is not a repeat here: patternCost multiplies the group's choices by it.
      const repeated = next === "*" || next === "+" || (next === "{" && !/^\{\d+\}/.test(pattern.slice(i + 1)));
      if (group?.risky && repeated)
        risk = "a repeated group that itself repeats or alternates can backtrack exponentially; use a flat pattern or maxLength";
      // A group's quantifiers make its enclosing group risky too.
      if (group?.risky && stack.length > 0) stack[stack.length - 1]!.risky = true;
    }
  });
  return risk;
}

/**
 * Calls `visit` for each syntax character of a pattern, in order; an escape (`\\x`) and a whole
 * character class (`[...]`) are one atom each, seen as `"\\"` and `"["` without their contents.
 * `visit` may return how many following characters to skip (a `{n,m}` it has read).
 */
function forEachSyntax(pattern: string, visit: (c: string, i: number) => number | void): void {
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (inClass) {
      if (c === "\\") i++;
      else if (c === "]") inClass = false;
      continue;
    }
    if (c === "[") inClass = true;
    i += visit(c, i) ?? 0;
    if (c === "\\") i++;
  }
}

/** `*`, `+`, `{n,}` and `{n,m}` with m over 32, outside character classes and escapes. */
export function unboundedRepeats(pattern: string): number {
  return repeatShape(pattern).unbounded;
}

/** Steps one pattern check may cost (V8's backtracking engine does roughly 10^8–10^9 a second). */
const STEPS_PER_STRING = 2e7;
/** Steps all the pattern checks of one value may cost together; more text than that fails closed. */
export const STEPS_PER_VALUE = 1e8;
const MAX_SUBJECT = 4096;
const MIN_SUBJECT = 64;

/**
 * What a pattern's backtracking can cost on a string of n characters, as `n^exponent × choices`:
 * each unbounded repeat (`*`, `+`, `{n,}`) can split the string anew (a factor n), so can the start
 * position of an unanchored pattern; a bounded repeat `{n,m}` multiplies by its m−n+1 choices and
 * `?` by 2. An upper bound, conservative for repeats that cannot overlap.
 */
export type PatternCost = { exponent: number; choices: number };

export function patternCost(pattern: string): PatternCost {
  const { unbounded, choices, anchored } = repeatShape(pattern);
  return { exponent: unbounded + (anchored ? 0 : 1), choices };
}

function repeatShape(pattern: string): { unbounded: number; choices: number; anchored: boolean } {
  const cap = (x: number) => Math.min(Number.MAX_SAFE_INTEGER, x);
  // One frame per open group (index 0: the whole pattern): its unbounded repeats, its choices, its
  // `|` branches. A closed group adds to its parent, multiplied by an exact count that follows it:
  // `(a|aa){30}` has 2^30 ways, `(?:a+){12}` twelve unbounded repeats.
  type Frame = { unbounded: number; choices: number; branches: number };
  const frames: Frame[] = [{ unbounded: 0, choices: 1, branches: 1 }];
  const top = () => frames[frames.length - 1]!;
  let afterQuantifier = false;
  forEachSyntax(pattern, (c, i) => {
    const quantified = afterQuantifier;
    afterQuantifier = false;
    if (c === "(") frames.push({ unbounded: 0, choices: 1, branches: 1 });
    else if (c === ")") {
      if (frames.length === 1) return;
      const g = frames.pop()!;
      let unbounded = g.unbounded;
      let choices = cap(g.choices * g.branches);
      const exact = /^\{(\d+)\}/.exec(pattern.slice(i + 1));
      if (exact) {
        const n = Math.max(1, Number(exact[1]));
        unbounded *= n;
        choices = cap(choices ** n);
      }
      top().unbounded += unbounded;
      top().choices = cap(top().choices * choices);
      return exact ? exact[0].length : 0;
    } else if (c === "|") top().branches++;
    else if (c === "*" || c === "+") {
      top().unbounded++;
      afterQuantifier = true;
    } else if (c === "?") {
      // `(?:`, `(?=`, `(?<name>` are group syntax; `*?`, `+?`, `??`, `}?` make a repeat lazy.
      if (pattern[i - 1] !== "(" && !quantified) {
        top().choices = cap(top().choices * 2);
        afterQuantifier = true;
      }
    } else if (c === "{") {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i));
      if (!m) return 0;
      if (m[2] !== undefined && (m[3] === "" || Number(m[3]) > 32)) top().unbounded++;
      else if (m[2] !== undefined) top().choices = cap(top().choices * Math.max(1, Number(m[3]) - Number(m[1]) + 1));
      afterQuantifier = true;
      return m[0].length - 1;
    }
    return 0;
  });
  while (frames.length > 1) {
    const g = frames.pop()!;
    top().unbounded += g.unbounded;
    top().choices = cap(top().choices * g.choices * g.branches);
  }
  const root = frames[0]!;
  return { unbounded: root.unbounded, choices: cap(root.choices * root.branches), anchored: pattern.startsWith("^") && root.branches === 1 };
}

/**
 * The longest string a pattern is checked against: as long as its cost stays within
 * STEPS_PER_STRING, at most 4096 characters. A longer string fails the check (closed): a schema
 * that expects long text says so with maxLength, not pattern. Undefined when even 64 characters
 * would cost too much: such a pattern is refused (backtrackingRisk).
 */
export function patternSubjectLimit(pattern: string): number | undefined {
  const { exponent, choices } = patternCost(pattern);
  if (choices > STEPS_PER_STRING) return undefined;
  if (exponent === 0) return MAX_SUBJECT;
  const limit = Math.min(MAX_SUBJECT, Math.floor((STEPS_PER_STRING / choices) ** (1 / exponent)));
  return limit >= MIN_SUBJECT ? limit : undefined;
}

/** What checking a string of `n` characters against patterns of `cost` may take, in steps. */
export function patternSteps(cost: PatternCost, n: number): number {
  return Math.max(n, n ** cost.exponent * cost.choices);
}

/**
 * The schema the validator runs: every `pattern` (and `patternProperties` key) wrapped so it
 * never meets a string longer than its patternSubjectLimit, with the same meaning otherwise (a
 * search anywhere in the string, as JSON Schema's `pattern` is):
 * `^(?=[\s\S]{0,N}$)[\s\S]*?(?:P)` adds no capturing group, so backreferences keep their numbers.
 * Only schema positions are rewritten (never `const`, `enum`, `default` or `examples` values).
 */
/** Every `pattern` and `patternProperties` key of a schema (schema positions only). */
export function schemaPatterns(schema: unknown): string[] {
  const out: string[] = [];
  const visit = (s: unknown): void => {
    if (s === null || typeof s !== "object" || Array.isArray(s)) return;
    const o = s as Record<string, unknown>;
    if (typeof o.pattern === "string") out.push(o.pattern);
    if (o.patternProperties !== null && typeof o.patternProperties === "object" && !Array.isArray(o.patternProperties)) {
      for (const [k, v] of Object.entries(o.patternProperties)) {
        out.push(k);
        visit(v);
      }
    }
    for (const k of SCHEMA_MAPS) {
      const m = o[k];
      if (k === "patternProperties" || m === null || typeof m !== "object" || Array.isArray(m)) continue;
      for (const sub of Object.values(m)) visit(sub);
    }
    for (const k of SCHEMA_LISTS) if (Array.isArray(o[k])) (o[k] as unknown[]).forEach(visit);
    for (const k of SCHEMA_ONE) if (o[k] !== undefined) (Array.isArray(o[k]) ? (o[k] as unknown[]) : [o[k]]).forEach(visit);
  };
  visit(schema);
  return out;
}

export function withBoundedPatterns(schema: unknown): unknown {
  const wrap = (p: string) => `^(?=[\\s\\S]{0,${patternSubjectLimit(p) ?? MIN_SUBJECT}}$)[\\s\\S]*?(?:${p})`;
  const visit = (s: unknown): unknown => {
    if (s === null || typeof s !== "object" || Array.isArray(s)) return s;
    const o = { ...(s as Record<string, unknown>) };
    if (typeof o.pattern === "string") o.pattern = wrap(o.pattern);
    if (o.patternProperties !== null && typeof o.patternProperties === "object" && !Array.isArray(o.patternProperties)) {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(o.patternProperties))
        Object.defineProperty(out, wrap(k), { value: visit(v), enumerable: true, writable: true, configurable: true });
      o.patternProperties = out;
    }
    for (const k of SCHEMA_MAPS) {
      if (k === "patternProperties") continue;
      const m = o[k];
      if (m === null || typeof m !== "object" || Array.isArray(m)) continue;
      const out: Record<string, unknown> = {};
      for (const [name, sub] of Object.entries(m))
        Object.defineProperty(out, name, { value: visit(sub), enumerable: true, writable: true, configurable: true });
      o[k] = out;
    }
    for (const k of SCHEMA_LISTS) if (Array.isArray(o[k])) o[k] = (o[k] as unknown[]).map(visit);
    for (const k of SCHEMA_ONE) if (o[k] !== undefined) o[k] = Array.isArray(o[k]) ? (o[k] as unknown[]).map(visit) : visit(o[k]);
    return o;
  };
  return visit(schema);
}
