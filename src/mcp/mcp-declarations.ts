/**
 * The virtual declaration files of the `MCP` namespace (seed 002: `API.read("mcp/<server>.d.ts")`
 * and `MCP.<server>.$api()`), rendered from tool metadata. Pure and deterministic.
 *
 * RULES:
 * - `mcp/index.d.ts` holds the shared result types and the list of this turn's servers;
 *   `mcp/<server>.d.ts` holds `declare namespace MCP.<server> { … }` with `$api`, `resources`,
 *   `prompts` and one `function <tool>(input: {…}): Promise<McpToolResult>` per tool, in the
 *   server's listing order. Input types come from each tool's input schema
 *   (mcp-schema-types.ts); an input with no required property is optional (`input?:`).
 * - Server and tool identifiers are the normalized ones (mcp-names.ts); a tool whose MCP name
 *   differs says so in its JSDoc.
 * - Descriptions, property names, defaults and MCP names are the server's untrusted text: they
 *   appear only inside JSDoc made by mcp-jsdoc.ts (cannot close the comment, forge tags or hide
 *   text), each description cut to `MAX_DECLARATION_TEXT_CHARS` (1000, src/limits.ts) code points.
 * - Bounds: one tool's declaration is at most `MAX_TOOL_DECLARATION_CHARS` (8000): past it the
 *   input type becomes `Record<string, unknown>` with a pointer to `$api(…, { schema: true })`.
 *   A file is at most `MAX_DTS_FILE_CHARS` (32000, so a whole file fits the default 64 KiB
 *   output budget when a cell returns it): tools that do not fit are named in a closing comment
 *   (itself bounded) and stay reachable through `$api(name)`.
 */
import { commentLines, jsdocBlock } from "./mcp-jsdoc";
import { inputProperties, propertyKey, schemaType } from "./mcp-schema-types";

export const MAX_TOOL_DECLARATION_CHARS = 8_000;
export const MAX_DTS_FILE_CHARS = 32_000;
/** Room kept at the end of a file for the closing lines and the omitted-tools comment. */
const FILE_TAIL_RESERVE = 1_500;

/** One tool as the declarations see it. `name` is the guest identifier, `mcpName` the server's. */
export type McpDeclaredTool = { name: string; mcpName: string; description?: string; inputSchema: unknown; outputSchema?: unknown };

/** One server: `name` is the guest identifier (`MCP.<name>`), `mcpName` its configured name. */
export type McpDeclaredServer = { name: string; mcpName: string; tools: McpDeclaredTool[] };

export const MCP_INDEX_DTS = "mcp/index.d.ts";

export function serverDtsPath(server: McpDeclaredServer): string {
  return `mcp/${server.name}.d.ts`;
}

const SHARED_TYPES = `type McpToolResult = {
  content: unknown[];
  structuredContent?: unknown;
  isError?: boolean;
};
type McpResourcesListResult = { resources: unknown[]; nextCursor?: string };
type McpResourcesReadResult = { contents: unknown[] };
type McpPromptsListResult = { prompts: unknown[]; nextCursor?: string };
type McpPromptsGetResult = { messages: unknown[]; description?: string };
/**
 * What MCP.<server>.$api() returns: the TypeScript-style header, and raw schemas when asked. Over
 * maxOutputBytes it is shortened and omitted says how: schemas (largest first) replaced by
 * { omitted: true, bytes }, tools left out at the end, header characters cut.
 */
type McpApiHeader = {
  server: string;
  header: string;
  tools: Array<{ name: string; mcpName: string; inputSchema?: unknown; outputSchema?: unknown }>;
  omitted?: { schemas?: number; tools?: number; headerChars?: number };
};
`;

/** `mcp/index.d.ts`: shared types and this turn's servers (identifiers only: nothing untrusted). */
export function renderMcpIndexDts(servers: readonly McpDeclaredServer[]): string {
  const list = servers.map((s) => `//   MCP.${s.name}: ${s.tools.length} tool${s.tools.length === 1 ? "" : "s"}, see ${serverDtsPath(s)}`);
  return [
    "// mcp/index.d.ts: types shared by every MCP server file.",
    "// Call a tool as MCP.<server>.<tool>({ ...input }); isError: true is a result, not an exception.",
    "",
    SHARED_TYPES,
    servers.length > 0 ? "// Servers of this turn:" : "// This turn has no MCP servers.",
    ...list,
    `type McpServerName = ${servers.map((s) => JSON.stringify(s.name)).join(" | ") || "never"};`,
    "",
  ].join("\n");
}

function toolDoc(tool: McpDeclaredTool, indent: string): string {
  const lines = tool.description ? commentLines(tool.description) : [];
  if (tool.mcpName !== tool.name) lines.push(...commentLines(`MCP tool name: ${tool.mcpName}`, 200));
  for (const p of inputProperties(tool.inputSchema) ?? []) {
    const description = typeof p.schema.description === "string" ? p.schema.description : "";
    const dflt = "default" in p.schema ? `(default ${JSON.stringify(p.schema.default) ?? "null"})` : "";
    if (description === "" && dflt === "") continue;
    const [first = "", ...rest] = commentLines([p.key, description, dflt].filter((part) => part !== "").join(" "));
    lines.push(`@param ${first}`, ...rest);
  }
  if (tool.outputSchema !== undefined) {
    const [first = "", ...rest] = commentLines(`structuredContent: ${schemaType(tool.outputSchema)} (declared by the server)`, 2_000);
    lines.push(`@returns ${first}`, ...rest);
  }
  return jsdocBlock(lines, indent);
}

function inputType(tool: McpDeclaredTool, indent: string): { text: string; optional: boolean } {
  const props = inputProperties(tool.inputSchema);
  if (props === undefined) return { text: schemaType(tool.inputSchema), optional: false };
  if (props.length === 0) return { text: "{}", optional: true };
  const fields = props.map((p) => `${indent}  ${propertyKey(p.key)}${p.required ? "" : "?"}: ${p.type};`);
  return { text: `{\n${fields.join("\n")}\n${indent}}`, optional: props.every((p) => !p.required) };
}

/** One tool's JSDoc and function declaration, bounded by MAX_TOOL_DECLARATION_CHARS. */
export function renderToolDeclaration(server: McpDeclaredServer, tool: McpDeclaredTool, indent = "  "): string {
  const doc = toolDoc(tool, indent);
  const input = inputType(tool, indent);
  const full = `${doc}${indent}function ${tool.name}(input${input.optional ? "?" : ""}: ${input.text}): Promise<McpToolResult>;\n`;
  if (full.length <= MAX_TOOL_DECLARATION_CHARS) return full;
  const pointer = `${indent}// Input type too large to show: MCP.${server.name}.$api(${JSON.stringify(tool.name)}, { schema: true }) has the schema.\n`;
  const shortDoc = doc.length <= MAX_TOOL_DECLARATION_CHARS / 2 ? doc : jsdocBlock(commentLines(tool.description ?? "", 500), indent);
  return `${shortDoc}${pointer}${indent}function ${tool.name}(input: Record<string, unknown>): Promise<McpToolResult>;\n`;
}

const NAMESPACE_MEMBERS = `  /** Return this TypeScript-style API header: one tool's, or every tool's when no name is given. */
  function $api(toolName?: string, options?: { schema?: boolean }): Promise<McpApiHeader>;
  /** The server's resources (MCP resources/list and resources/read). */
  const resources: {
    list(input?: { cursor?: string }): Promise<McpResourcesListResult>;
    read(input: { uri: string }): Promise<McpResourcesReadResult>;
  };
  /** The server's prompts (MCP prompts/list and prompts/get); prompt arguments are strings. */
  const prompts: {
    list(input?: { cursor?: string }): Promise<McpPromptsListResult>;
    get(input: { name: string; arguments?: Record<string, string> }): Promise<McpPromptsGetResult>;
  };
`;

/** The `declare namespace MCP.<server> { … }` block, bounded by MAX_DTS_FILE_CHARS as a whole file. */
export function renderServerNamespace(server: McpDeclaredServer, budget = MAX_DTS_FILE_CHARS): string {
  let body = `declare namespace MCP.${server.name} {\n${NAMESPACE_MEMBERS}`;
  const omitted: string[] = [];
  for (const tool of server.tools) {
    const decl = renderToolDeclaration(server, tool);
    if (omitted.length === 0 && body.length + decl.length <= budget - FILE_TAIL_RESERVE) body += decl;
    else omitted.push(tool.name);
  }
  if (omitted.length > 0) {
    let names = omitted.join(", ");
    if (names.length > FILE_TAIL_RESERVE - 300) names = names.slice(0, FILE_TAIL_RESERVE - 300).replace(/,[^,]*$/, ", …");
    body += `  // ${omitted.length} more tool${omitted.length === 1 ? "" : "s"} not shown (file limit ${MAX_DTS_FILE_CHARS} chars); MCP.${server.name}.$api("<tool>") shows one: ${names}\n`;
  }
  return `${body}}\n`;
}

/** `mcp/<server>.d.ts`. */
export function renderServerDts(server: McpDeclaredServer): string {
  const head = [
    `// ${serverDtsPath(server)}: the tools of MCP server "${server.name}" (${server.tools.length}), from its own metadata.`,
    "// Descriptions are the server's text, not ours. Shared types: mcp/index.d.ts.",
    `/// <reference path="index.d.ts" />`,
    "",
  ].join("\n");
  return head + renderServerNamespace(server, MAX_DTS_FILE_CHARS - head.length);
}
