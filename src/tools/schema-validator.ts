import { Validator, type Schema } from "@cfworker/json-schema";
import { lintSchema, withBoundedPatterns } from "./schema-lint";
import type { JsonSchema } from "./types";

export type SchemaCheck = { ok: true } | { ok: false; message: string };

// Validators interpret schemas (no `new Function`, which workerd forbids); cache per schema object.
const cache = new WeakMap<JsonSchema, Validator | Error>();

function validatorFor(schema: JsonSchema): Validator | Error {
  let v = cache.get(schema);
  if (!v) {
    try {
      const problem = lintSchema(schema);
      if (problem) throw new Error(problem);
      v = new Validator(withBoundedPatterns(schema) as Schema, "2020-12", false);
    } catch (error) {
      v = new Error(error instanceof Error ? error.message : String(error));
    }
    cache.set(schema, v);
  }
  return v;
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
  const v = validatorFor(schema);
  if (v instanceof Error) return { ok: false, message: `invalid schema: ${v.message}` };
  const result = v.validate(value);
  if (result.valid) return { ok: true };
  const first = result.errors.filter((e) => e.keyword !== "properties" && e.keyword !== "items").at(-1) ?? result.errors[0];
  const where = first?.instanceLocation && first.instanceLocation !== "#" ? ` at ${first.instanceLocation.replace(/^#/, "")}` : "";
  if (explain && first?.error) return { ok: false, message: `${first.error.slice(0, 300)}${where ? ` (${where.trim()})` : ""}` };
  return { ok: false, message: `${first?.keyword ?? "schema"} check failed${where}` };
}
