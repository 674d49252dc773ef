import type { JsonSchema } from "../tools";
import { MAX_HINT_CHARS } from "../limits";

type Render = { text: string; complete: boolean };

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

function isObj(v: unknown): v is JsonSchema {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function numberBounds(s: JsonSchema): string {
  const parts: string[] = [];
  if (s.type === "integer") parts.push("integer");
  if (typeof s.minimum === "number") parts.push(`>= ${s.minimum}`);
  if (typeof s.exclusiveMinimum === "number") parts.push(`> ${s.exclusiveMinimum}`);
  if (typeof s.maximum === "number") parts.push(`<= ${s.maximum}`);
  if (typeof s.exclusiveMaximum === "number") parts.push(`< ${s.exclusiveMaximum}`);
  return parts.length ? ` /* ${parts.join(", ")} */` : "";
}

/**
 * Render a JSON Schema as a compact TypeScript-style type. `complete` is false when the
 * rendering had to guess (open objects, unknown keywords, unions it cannot express):
 * such output hints must not be promoted to the quick index.
 */
function render(schema: unknown, depth: number, withBounds: boolean): Render {
  if (!isObj(schema)) return { text: "unknown", complete: false };
  if (depth > 4) return { text: "unknown", complete: false };
  if (Array.isArray(schema.enum)) {
    const lits = schema.enum.map((v) => JSON.stringify(v));
    return { text: lits.join(" | ") || "never", complete: true };
  }
  if ("const" in schema) return { text: JSON.stringify(schema.const), complete: true };
  const variants = (schema.anyOf ?? schema.oneOf) as unknown;
  if (Array.isArray(variants)) {
    const parts = variants.map((v) => render(v, depth + 1, withBounds));
    return { text: parts.map((p) => p.text).join(" | "), complete: parts.every((p) => p.complete) };
  }
  const type = schema.type;
  if (Array.isArray(type)) {
    const parts = type.map((t) => render({ ...schema, type: t }, depth, withBounds));
    return { text: parts.map((p) => p.text).join(" | "), complete: parts.every((p) => p.complete) };
  }
  switch (type) {
    case "string":
      return { text: "string", complete: true };
    case "number":
    case "integer":
      return { text: "number" + (withBounds ? numberBounds(schema) : ""), complete: true };
    case "boolean":
      return { text: "boolean", complete: true };
    case "null":
      return { text: "null", complete: true };
    case "array": {
      const item = render(schema.items, depth + 1, withBounds);
      return { text: `Array<${item.text}>`, complete: item.complete };
    }
    case "object":
    case undefined: {
      if (type === undefined && !isObj(schema.properties)) return { text: "unknown", complete: false };
      const props = isObj(schema.properties) ? schema.properties : {};
      const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
      let complete = schema.additionalProperties === false;
      const fields = Object.entries(props).map(([key, sub]) => {
        const r = render(sub, depth + 1, withBounds);
        complete &&= r.complete;
        const k = IDENT.test(key) ? key : JSON.stringify(key);
        return `${k}${required.has(key) ? "" : "?"}: ${r.text}`;
      });
      return { text: fields.length ? `{ ${fields.join("; ")} }` : "{}", complete };
    }
    default:
      return { text: "unknown", complete: false };
  }
}

/** Compact input signature, numeric bounds kept as comments (seed: `offset?: number /* integer, >= 1 *\/`). */
export function inputHint(parameters: JsonSchema): string {
  const r = render(parameters, 0, true);
  if (r.text.length <= MAX_HINT_CHARS) return r.text;
  // Too long: keep whole top-level fields (required first as declared), then "…".
  const props = isObj(parameters.properties) ? parameters.properties : {};
  const required = new Set(Array.isArray(parameters.required) ? (parameters.required as string[]) : []);
  const fields: string[] = [];
  let len = 4;
  for (const [key, sub] of Object.entries(props)) {
    const k = IDENT.test(key) ? key : JSON.stringify(key);
    const f = `${k}${required.has(key) ? "" : "?"}: ${render(sub, 1, true).text}`;
    if (len + f.length + 2 > MAX_HINT_CHARS - 6) break;
    fields.push(f);
    len += f.length + 2;
  }
  return `{ ${[...fields, "…"].join("; ")} }`;
}

/** Output hint only for a complete, closed, bounded trusted schema; otherwise undefined (`-> ?`). */
export function outputHint(outputSchema: JsonSchema | undefined): string | undefined {
  if (!outputSchema) return undefined;
  const r = render(outputSchema, 0, false);
  if (!r.complete || r.text.length > MAX_HINT_CHARS) return undefined;
  return r.text;
}
