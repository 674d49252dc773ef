import { CODE_MODE_CONTROL_TOOLS, type ClientToolSpec } from "../catalog";
import { compileSchema } from "../tools";
import type { JsonSchema } from "../tools";
import { GatewayError } from "../errors";
import { MAX_DESCRIPTION_CHARS } from "../limits";

/** Client tool names: what the client calls them, 1-128 characters, no control characters (C0, DEL, C1). */
const CLIENT_TOOL_NAME = /^[^\u0000-\u001f\u007f-\u009f]{1,128}$/;

/** The same schema under the spellings clients use: ours/OpenAI, MCP, Anthropic. */
const INPUT_SPELLINGS = ["parameters", "inputSchema", "input_schema"] as const;
const OUTPUT_SPELLINGS = ["outputSchema", "output_schema"] as const;
/**
 * Metadata of MCP (`title`, `annotations`, `icons`, `_meta`), Anthropic (`cache_control`) and OpenAI
 * (`type`, `strict`) tool objects: accepted so their tool lists can be passed through, not used.
 * Any other key is refused: a misspelt schema key must not leave the model with `input: unknown`.
 */
const IGNORED_KEYS = new Set(["title", "annotations", "icons", "_meta", "cache_control", "type", "strict"]);
const KNOWN_KEYS = new Set<string>(["name", "description", ...INPUT_SPELLINGS, ...OUTPUT_SPELLINGS, ...IGNORED_KEYS]);

function fail(path: string, message: string): never {
  throw new GatewayError("invalid_request", message, path);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** JSON text with object keys sorted: two spellings of one schema compare equal whatever their key order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (isObject(value)) {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/**
 * One schema declared under any of `spellings`: each must be a usable JSON Schema object, and two
 * spellings given at once must say the same thing (otherwise which one applies would be a guess).
 */
function oneSchema(tool: Record<string, unknown>, path: string, spellings: readonly string[], what: string): JsonSchema | undefined {
  let chosen: { key: string; schema: JsonSchema } | undefined;
  for (const key of spellings) {
    const schema = tool[key];
    if (schema === undefined) continue;
    const at = `${path}.${key}`;
    if (!isObject(schema)) fail(at, `${at} must be a JSON Schema object`);
    const compiled = compileSchema(schema);
    if (!compiled.ok) fail(at, `${at} is not a usable JSON Schema (${compiled.message})`);
    if (chosen && canonical(chosen.schema) !== canonical(schema)) {
      fail(at, `${at} differs from ${path}.${chosen.key}; declare the ${what} schema once (${spellings.join(", ")} are the same field)`);
    }
    chosen ??= { key, schema };
  }
  return chosen?.schema;
}

/**
 * One `clientTools[i]` entry. Names follow the seed's "Tool names and collisions": any name of 1-128
 * characters without control characters is accepted (the guest callable name is normalized later);
 * the code-mode control names are refused rather than silently dropped.
 */
export function validateClientTool(t: unknown, path: string, seen: Set<string>): ClientToolSpec {
  if (!isObject(t)) fail(path, `${path} must be an object`);
  for (const key of Object.keys(t)) {
    if (!KNOWN_KEYS.has(key)) {
      fail(
        `${path}.${key}`,
        `${path}.${key} is not a client tool field; use name, description, parameters (or inputSchema / input_schema) and outputSchema`,
      );
    }
  }
  const namePath = `${path}.name`;
  if (typeof t.name !== "string" || !CLIENT_TOOL_NAME.test(t.name)) fail(namePath, `${namePath} must be 1-128 characters without control characters`);
  const name = t.name;
  if (CODE_MODE_CONTROL_TOOLS.includes(name)) {
    fail(
      namePath,
      `${namePath} ${JSON.stringify(name)} is the name of a code-mode control tool (${CODE_MODE_CONTROL_TOOLS.join(", ")}); give the client tool another name`,
    );
  }
  if (seen.has(name)) fail(namePath, `duplicate client tool ${JSON.stringify(name)}`);
  seen.add(name);
  if (t.description !== undefined && (typeof t.description !== "string" || t.description.length > MAX_DESCRIPTION_CHARS)) {
    fail(`${path}.description`, `${path}.description must be a string of at most ${MAX_DESCRIPTION_CHARS} characters`);
  }
  const parameters = oneSchema(t, path, INPUT_SPELLINGS, "input");
  const outputSchema = oneSchema(t, path, OUTPUT_SPELLINGS, "output");
  return {
    name,
    ...(t.description !== undefined ? { description: t.description as string } : {}),
    ...(parameters !== undefined ? { parameters } : {}),
    ...(outputSchema !== undefined ? { outputSchema } : {}),
  };
}
