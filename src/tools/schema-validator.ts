import { Validator, type Schema } from "@cfworker/json-schema";
import {
  lintSchema,
  patternCost,
  patternSteps,
  patternSubjectLimit,
  schemaPatterns,
  STEPS_PER_VALUE,
  withBoundedPatterns,
  type PatternCost,
} from "./schema-lint";
import type { JsonSchema } from "./types";

export type SchemaCheck = { ok: true } | { ok: false; message: string };

/** A compiled schema, and what its patterns may cost per string (empty: no pattern). */
type Compiled = { validator: Validator; patterns: Array<PatternCost & { limit: number }> };

// Validators interpret schemas (no `new Function`, which workerd forbids); cache per schema object.
const cache = new WeakMap<JsonSchema, Compiled | Error>();

function compiledFor(schema: JsonSchema): Compiled | Error {
  let v = cache.get(schema);
  if (!v) {
    try {
      const problem = lintSchema(schema);
      if (problem) throw new Error(problem);
      const patterns = schemaPatterns(schema).map((p) => ({ ...patternCost(p), limit: patternSubjectLimit(p) ?? 64 }));
      v = { validator: new Validator(withBoundedPatterns(schema) as Schema, "2020-12", false), patterns };
    } catch (error) {
      v = new Error(error instanceof Error ? error.message : String(error));
    }
    cache.set(schema, v);
  }
  return v;
}

function validatorFor(schema: JsonSchema): Validator | Error {
  const c = compiledFor(schema);
  return c instanceof Error ? c : c.validator;
}

/**
 * Patterns run in the host, outside any budget: before a value is checked, what all its strings
 * (and keys) could cost against the schema's costliest pattern is added up, and more than
 * STEPS_PER_VALUE fails closed. A walk of the value, no recursion.
 */
function patternWorkTooLarge(c: Compiled, value: unknown): boolean {
  if (c.patterns.length === 0) return false;
  const steps = (n: number) => {
    let worst = 0;
    for (const p of c.patterns) worst = Math.max(worst, patternSteps(p, Math.min(n, p.limit + 1)));
    return worst;
  };
  let total = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === "string") total += steps(v.length);
    else if (Array.isArray(v)) for (const x of v) stack.push(x);
    else if (v !== null && typeof v === "object")
      for (const [k, x] of Object.entries(v)) {
        total += steps(k.length);
        stack.push(x);
      }
    if (total > STEPS_PER_VALUE) return true;
  }
  return false;
}

/** Compile (once) and report whether the schema itself is usable. */
export function compileSchema(schema: JsonSchema): SchemaCheck {
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) return { ok: false, message: "schema must be an object" };
  const v = validatorFor(schema);
  return v instanceof Error ? { ok: false, message: v.message } : { ok: true };
}

/**
 * Validate a value. By default the message names only the failing keyword and location
 * (output contracts must not print the value); `explain` adds the validator's own text,
 * which is fine for a model's own tool input.
 */
export function checkValue(schema: JsonSchema, value: unknown, explain = false): SchemaCheck {
  const c = compiledFor(schema);
  if (c instanceof Error) return { ok: false, message: `invalid schema: ${c.message}` };
  if (patternWorkTooLarge(c, value))
    return { ok: false, message: "pattern check refused: the value holds more text than the schema's patterns can check in bounded time" };
  const result = c.validator.validate(value);
  if (result.valid) return { ok: true };
  const first = result.errors.filter((e) => e.keyword !== "properties" && e.keyword !== "items").at(-1) ?? result.errors[0];
  const where = first?.instanceLocation && first.instanceLocation !== "#" ? ` at ${first.instanceLocation.replace(/^#/, "")}` : "";
  if (explain && first?.error) return { ok: false, message: `${first.error.slice(0, 300)}${where ? ` (${where.trim()})` : ""}` };
  return { ok: false, message: `${first?.keyword ?? "schema"} check failed${where}` };
}
