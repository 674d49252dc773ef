/**
 * The read-only virtual file table behind the guest's `API.list(prefix?)` / `API.read(path)`,
 * and the `MCP.<server>.$api()` header. Pure: built once per turn from the visible servers, then
 * answered without any bridge or tool call.
 *
 * PATH RULES: a path is relative (`mcp/index.d.ts`), `/`-separated, with no empty, `.` or `..`
 * segment and no backslash; anything else is rejected with a message saying what is wrong, and
 * so is a well-formed path that is not in the table. `list(prefix)` takes the same rules
 * (a trailing `/` is allowed) and keeps the paths that start with the prefix.
 * Sizes are UTF-8 bytes. Guest-given paths appear in messages JSON-quoted and cut to 100 chars.
 */
import {
  MCP_INDEX_DTS,
  renderMcpIndexDts,
  renderServerDts,
  renderServerNamespace,
  renderToolDeclaration,
  serverDtsPath,
  type McpDeclaredServer,
  type McpDeclaredTool,
} from "./mcp-declarations";
import { assignMcpNames } from "./mcp-names";

export type ApiFileInfo = { path: string; bytes: number; description?: string };
/**
 * `untrusted`: the content holds server-written text (descriptions, schemas, tool names); the
 * guest reports reading it, so the cell's result reaches the model as network-derived.
 */
export type ApiFile = ApiFileInfo & { content: string; untrusted?: true };
/** Path → file, in path order. */
export type ApiFileTable = ReadonlyMap<string, ApiFile>;

export type ApiReadResult = { ok: true; content: string } | { ok: false; message: string };
export type ApiListResult = { ok: true; files: ApiFileInfo[] } | { ok: false; message: string };
export type McpApiHeader = {
  server: string;
  header: string;
  tools: Array<{ name: string; mcpName: string; inputSchema?: unknown; outputSchema?: unknown }>;
  /** Set only when the answer was shortened to fit maxOutputBytes (bounded-api-header.ts). */
  omitted?: { schemas?: number; tools?: number; headerChars?: number };
};
export type McpApiHeaderResult = { ok: true; value: McpApiHeader } | { ok: false; message: string };

const encoder = new TextEncoder();

/**
 * Guest identifiers for servers and their tools (mcp-names.ts), servers sorted by identifier,
 * tools in listing order. `servers` holds each server's configured name and listed tools.
 */
export function declareMcpServers(
  servers: ReadonlyArray<{
    name: string;
    tools: ReadonlyArray<{ name: string; description?: string; inputSchema: unknown; outputSchema?: unknown }>;
  }>,
): McpDeclaredServer[] {
  const serverNames = assignMcpNames(
    servers.map((s) => s.name),
    "server",
  );
  return servers
    .map((s) => {
      const toolNames = assignMcpNames(
        s.tools.map((t) => t.name),
        "tool",
      );
      const tools: McpDeclaredTool[] = s.tools.map((t) => ({
        name: toolNames.get(t.name)!,
        mcpName: t.name,
        ...(t.description !== undefined ? { description: t.description } : {}),
        inputSchema: t.inputSchema,
        ...(t.outputSchema !== undefined ? { outputSchema: t.outputSchema } : {}),
      }));
      return { name: serverNames.get(s.name)!, mcpName: s.name, tools };
    })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function file(path: string, content: string, description: string, untrusted: boolean): [string, ApiFile] {
  return [path, { path, bytes: encoder.encode(content).length, description, content, ...(untrusted ? { untrusted: true as const } : {}) }];
}

/** `mcp/index.d.ts` plus one `mcp/<server>.d.ts` per server. */
export function buildApiFiles(servers: readonly McpDeclaredServer[]): ApiFileTable {
  const entries = [
    // The index holds gateway text and configured server identifiers only; server files hold what the server wrote.
    file(MCP_INDEX_DTS, renderMcpIndexDts(servers), "Types shared by the MCP server files, and this turn's MCP servers", false),
    ...servers.map((s) =>
      file(
        serverDtsPath(s),
        renderServerDts(s),
        `MCP.${s.name}: ${s.tools.length} tool${s.tools.length === 1 ? "" : "s"}, resources and prompts`,
        true,
      ),
    ),
  ];
  return new Map(entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function quoted(path: string): string {
  return JSON.stringify(path.length > 100 ? path.slice(0, 100) + "…" : path);
}

/** Why `path` is not a well-formed virtual path, or undefined when it is. */
function pathProblem(path: string, allowTrailingSlash: boolean): string | undefined {
  if (path.startsWith("/")) return `${quoted(path)} is absolute; API paths are relative, like "mcp/index.d.ts"`;
  if (path.includes("\\")) return `${quoted(path)} contains a backslash; API paths use "/"`;
  const segments = (allowTrailingSlash && path.endsWith("/") ? path.slice(0, -1) : path).split("/");
  if (segments.some((s) => s === "." || s === "..")) return `${quoted(path)} has a "." or ".." segment; those are not allowed`;
  if (segments.some((s) => s === "")) return `${quoted(path)} has an empty segment`;
  return undefined;
}

/** `API.read(path)`. */
export function readApiFile(files: ApiFileTable, path: unknown): ApiReadResult {
  if (typeof path !== "string" || path === "") return { ok: false, message: 'API.read needs a path, like "mcp/index.d.ts"' };
  const problem = pathProblem(path, false);
  if (problem) return { ok: false, message: `API.read: ${problem}` };
  const found = files.get(path);
  if (!found) return { ok: false, message: `API.read: no file ${quoted(path)}; API.list() shows the files` };
  return { ok: true, content: found.content };
}

/** `API.list(prefix?)`: metadata of the files whose path starts with `prefix`. */
export function listApiFiles(files: ApiFileTable, prefix?: unknown): ApiListResult {
  if (prefix !== undefined && typeof prefix !== "string") return { ok: false, message: "API.list: the prefix must be a string" };
  if (prefix) {
    const problem = pathProblem(prefix, true);
    if (problem) return { ok: false, message: `API.list: ${problem}` };
  }
  const infos = [...files.values()]
    .filter((f) => !prefix || f.path.startsWith(prefix))
    .map(({ path, bytes, description }) => ({ path, bytes, ...(description !== undefined ? { description } : {}) }));
  return { ok: true, files: infos };
}

/**
 * `MCP.<server>.$api(toolName?, { schema? })`: one tool's header (found by identifier, then by
 * MCP name) or the whole namespace; `schema: true` adds the raw input and output schemas.
 */
export function apiHeader(server: McpDeclaredServer, toolName?: string, options: { schema?: boolean } = {}): McpApiHeaderResult {
  let tools = server.tools;
  let header: string;
  if (toolName !== undefined) {
    const tool = server.tools.find((t) => t.name === toolName) ?? server.tools.find((t) => t.mcpName === toolName);
    if (!tool) return { ok: false, message: `MCP.${server.name} has no tool ${quoted(toolName)}; MCP.${server.name}.$api() lists them all` };
    tools = [tool];
    header = renderToolDeclaration(server, tool, "");
  } else {
    header = renderServerNamespace(server);
  }
  return {
    ok: true,
    value: {
      server: server.name,
      header,
      tools: tools.map((t) => ({
        name: t.name,
        mcpName: t.mcpName,
        ...(options.schema ? { inputSchema: t.inputSchema, ...(t.outputSchema !== undefined ? { outputSchema: t.outputSchema } : {}) } : {}),
      })),
    },
  };
}
