/**
 * TypeScript-style types from MCP tool JSON Schemas, for the virtual `.d.ts` files. Pure.
 *
 * RULES (what is understood; everything else is `unknown`, never a guess):
 * - `type`: `string`, `number`/`integer` → `number`, `boolean`, `null`, a list of types → union;
 * - `enum` (up to 50 JSON literals) and `const` → literal unions; `anyOf`/`oneOf` → union;
 * - `array` → `Array<items>` (`Array<unknown>` for tuples or missing `items`);
 * - `object` (or `properties` without `type`) → `{ key: T; key?: T }` by `required`, keys that
 *   are not identifiers quoted; no properties → `Record<string, T>` from `additionalProperties`
 *   (`unknown` when absent or `true`, `{}` when `false`);
 * - `$ref`, `allOf`, `not`, `if`, boolean schemas, more than 6 levels deep → `unknown`.
 * The output is type syntax only: literals and keys are JSON-quoted, so schema text can never
 * become a comment or a declaration. Descriptions are the caller's business (mcp-jsdoc.ts).
 */

type Schema = Record<string, unknown>;

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const MAX_DEPTH = 6;
const MAX_ENUM_MEMBERS = 50;

function isSchema(v: unknown): v is Schema {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function isLiteral(v: unknown): boolean {
  return v === null || typeof v === "string" || typeof v === "boolean" || (typeof v === "number" && Number.isFinite(v));
}

/** `key` as a property name in a type literal. */
export function propertyKey(key: string): string {
  return IDENT.test(key) ? key : JSON.stringify(key);
}

function union(parts: string[]): string {
  const unique = [...new Set(parts)];
  return unique.includes("unknown") ? "unknown" : unique.join(" | ") || "never";
}

function objectType(schema: Schema, depth: number): string {
  if (isSchema(schema.properties)) {
    const required = new Set(Array.isArray(schema.required) ? schema.required.filter((k) => typeof k === "string") : []);
    const fields = Object.entries(schema.properties).map(
      ([key, sub]) => `${propertyKey(key)}${required.has(key) ? "" : "?"}: ${schemaType(sub, depth + 1)}`,
    );
    return fields.length > 0 ? `{ ${fields.join("; ")} }` : "{}";
  }
  const extra = schema.additionalProperties;
  if (extra === false) return "{}";
  return `Record<string, ${isSchema(extra) ? schemaType(extra, depth + 1) : "unknown"}>`;
}

function typeName(type: unknown, schema: Schema, depth: number): string {
  switch (type) {
    case "string":
    case "boolean":
    case "null":
      return type;
    case "number":
    case "integer":
      return "number";
    case "array":
      return isSchema(schema.items) ? `Array<${schemaType(schema.items, depth + 1)}>` : "Array<unknown>";
    case "object":
      return objectType(schema, depth);
    default:
      return "unknown";
  }
}

/** The TypeScript-style type of one JSON Schema (single line). */
export function schemaType(schema: unknown, depth = 0): string {
  if (!isSchema(schema) || depth > MAX_DEPTH) return "unknown";
  if ("$ref" in schema || "allOf" in schema || "not" in schema || "if" in schema) return "unknown";
  if (Array.isArray(schema.enum)) {
    if (schema.enum.length > MAX_ENUM_MEMBERS || !schema.enum.every(isLiteral)) return "unknown";
    return union(schema.enum.map((v) => JSON.stringify(v)));
  }
  if ("const" in schema) return isLiteral(schema.const) ? JSON.stringify(schema.const) : "unknown";
  const variants = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(variants)) return union(variants.map((v) => schemaType(v, depth + 1)));
  if (Array.isArray(schema.type)) return union(schema.type.map((t) => typeName(t, schema, depth)));
  if (schema.type === undefined) return isSchema(schema.properties) ? objectType(schema, depth) : "unknown";
  return typeName(schema.type, schema, depth);
}

/** The top-level properties of an object input schema, in declaration order. */
export function inputProperties(schema: unknown): Array<{ key: string; type: string; required: boolean; schema: Schema }> | undefined {
  if (!isSchema(schema) || !isSchema(schema.properties)) return undefined;
  if (schema.type !== undefined && schema.type !== "object") return undefined;
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((k) => typeof k === "string") : []);
  return Object.entries(schema.properties).map(([key, sub]) => ({
    key,
    type: schemaType(sub, 1),
    required: required.has(key),
    schema: isSchema(sub) ? sub : {},
  }));
}
