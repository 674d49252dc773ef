/**
 * The tool schema the AI SDK's Chat Completions model sends (@ai-sdk/openai 4.0.118,
 * normalizeOpenAIJsonSchema): `propertyNames` dropped, a `pattern` with regex lookaround dropped,
 * a lone `allOf: [{ $ref }]` turned into the reference (at the root, the referenced definition
 * merged in), everywhere a subschema can sit. Every schema passes through it, rewritten or not, so
 * this keeps its exact operations (spreads, entries, in-place reassignment) and with them its key
 * order and its treatment of malformed schemas an MCP server may send (a primitive where a
 * subschema belongs becomes `{}` or an object of its characters, as the spread makes it).
 * Where the SDK throws instead (a non-string `propertyNames` schema, `null` or a non-array where
 * it maps), this gives `null` and the call is left to the SDK, which fails it its own way.
 */
export function openAIToolSchema(schema: unknown): unknown {
  try {
    return normalize(schema as Schema, true);
  } catch {
    return null;
  }
}

/** The SDK walks schemas untyped; so does this, to fail (and not fail) where it does. */
type Schema = Record<string, any>;

function normalize(schema: Schema, isRoot = false): Schema {
  const propertyNames = schema.propertyNames;
  if (propertyNames != null && (typeof propertyNames === "boolean" || (propertyNames.type != null && propertyNames.type !== "string")))
    throw new Error("propertyNames that does not use a string schema");
  const out: Schema = { ...schema };
  delete out.propertyNames;
  if (out.pattern != null && hasLookaround(out.pattern)) delete out.pattern;
  if (out.properties != null) out.properties = record(out.properties);
  if (out.patternProperties != null) out.patternProperties = record(out.patternProperties);
  if (out.additionalProperties != null) out.additionalProperties = definition(out.additionalProperties);
  if (out.additionalItems != null) out.additionalItems = definition(out.additionalItems);
  if (out.items != null) out.items = Array.isArray(out.items) ? out.items.map(definition) : definition(out.items);
  if (out.contains != null) out.contains = definition(out.contains);
  if (out.not != null) out.not = definition(out.not);
  if (out.allOf != null) out.allOf = out.allOf.map(definition);
  if (out.anyOf != null) out.anyOf = out.anyOf.map(definition);
  if (out.oneOf != null) out.oneOf = out.oneOf.map(definition);
  if (out.definitions != null) out.definitions = record(out.definitions);
  if (out.$defs != null) out.$defs = record(out.$defs);
  if (out.dependencies != null)
    out.dependencies = Object.fromEntries(Object.entries(out.dependencies).map(([k, d]) => [k, Array.isArray(d) ? d : definition(d)]));
  for (const keyword of ["if", "then", "else"]) if (out[keyword] != null) out[keyword] = definition(out[keyword]);
  const reference = singletonReference(out);
  if (reference === undefined) return out;
  const { allOf: _allOf, ...rest } = out;
  if (!isRoot) return { ...rest, $ref: reference };
  const referenced = localReference(reference, out);
  return referenced === undefined ? out : { ...referenced, ...rest };
}

function singletonReference(schema: Schema): string | undefined {
  if (schema.allOf?.length !== 1) return undefined;
  const [only] = schema.allOf;
  return typeof only === "object" && only != null && Object.keys(only).length === 1 && typeof only.$ref === "string" ? only.$ref : undefined;
}

function localReference(reference: string, schema: Schema): Schema | undefined {
  const match = /^#\/(definitions|\$defs)\/(.+)$/.exec(reference);
  if (match == null) return undefined;
  const name = match[2]!.replace(/~1/g, "/").replace(/~0/g, "~");
  const found = match[1] === "definitions" ? schema.definitions?.[name] : schema.$defs?.[name];
  return typeof found === "object" && found != null ? found : undefined;
}

function record(schemas: Schema): Schema {
  return Object.fromEntries(Object.entries(schemas).map(([k, s]) => [k, definition(s)]));
}

function definition(d: unknown): unknown {
  return typeof d === "boolean" ? d : normalize(d as Schema);
}

/** `(?=`, `(?!`, `(?<=`, `(?<!` outside a character class and not escaped. */
function hasLookaround(pattern: string): boolean {
  let escaped = false;
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (escaped) escaped = false;
    else if (c === "\\") escaped = true;
    else if (c === "[") inClass = true;
    else if (c === "]") inClass = false;
    else if (!inClass && c === "(" && pattern[i + 1] === "?") {
      const p = pattern[i + 2];
      if (p === "=" || p === "!" || (p === "<" && (pattern[i + 3] === "=" || pattern[i + 3] === "!"))) return true;
    }
  }
  return false;
}
