import type { ClientToolSpec } from "../catalog";
import type { JsonSchema } from "../tools";
import { GatewayError } from "../errors";
import { ClientToolSchema } from "./request-schemas";
import { CLIENT_TOOL_SPELLINGS } from "./request-patterns";
import { checkRequest } from "./schema-issues";

/** The schema under whichever spelling the client used (request-schemas.ts checked that two spellings agree). */
function oneSchema(tool: Record<string, unknown>, spellings: readonly string[]): JsonSchema | undefined {
  for (const key of spellings) if (tool[key] !== undefined) return tool[key] as JsonSchema;
  return undefined;
}

/** A checked client tool as the turn keeps it: one input and one output schema, the metadata dropped. */
export function clientToolSpec(tool: Record<string, unknown>): ClientToolSpec {
  const parameters = oneSchema(tool, CLIENT_TOOL_SPELLINGS.input);
  const outputSchema = oneSchema(tool, CLIENT_TOOL_SPELLINGS.output);
  return {
    name: tool.name as string,
    ...(tool.description !== undefined ? { description: tool.description as string } : {}),
    ...(parameters !== undefined ? { parameters } : {}),
    ...(outputSchema !== undefined ? { outputSchema } : {}),
  };
}

/** One `clientTools[i]` entry at `path`, checked by ClientToolSchema; `seen`: the names before it. */
export function validateClientTool(t: unknown, path: string, seen: Set<string>): ClientToolSpec {
  checkRequest(ClientToolSchema, t, path);
  const tool = clientToolSpec(t as Record<string, unknown>);
  if (seen.has(tool.name)) throw new GatewayError("invalid_request", `duplicate client tool ${JSON.stringify(tool.name)}`, `${path}.name`);
  seen.add(tool.name);
  return tool;
}
