import type { McpApiHeader } from "./mcp-api-files";

/**
 * `MCP.<server>.$api()` answers the McpApiHeader it declares, within maxOutputBytes, whatever the
 * server listed: never the generic truncation marker (`{ truncated, prefix, … }`), whose shape a
 * program reading `.tools` or `.header` cannot use. Over the bound it is shortened in its own
 * terms, in this order, only as far as needed, and says so in `omitted`:
 * 1. schemas, largest first, each replaced by `{ omitted: true, bytes }` (its JSON size);
 * 2. the header text, cut at a character with a closing comment saying how much was cut;
 * 3. only when even an empty header leaves no room: tools at the end of the list.
 * BOUND: the JSON is at most `maxBytes` for any maxBytes of 1024 or more (identifiers are short).
 */
export type McpOmittedSchema = { omitted: true; bytes: number };
export type McpApiHeaderOmitted = { schemas?: number; tools?: number; headerChars?: number };

const encoder = new TextEncoder();
const bytesOf = (value: unknown): number => encoder.encode(JSON.stringify(value) ?? "null").length;

type Tool = McpApiHeader["tools"][number];
type SchemaKey = "inputSchema" | "outputSchema";

export function boundedApiHeader(header: McpApiHeader, maxBytes: number): McpApiHeader {
  if (bytesOf(header) <= maxBytes) return header;
  const omitted: McpApiHeaderOmitted = {};
  const tools: Tool[] = header.tools.map((t) => ({ ...t }));
  const out = (): McpApiHeader & { omitted: McpApiHeaderOmitted } => ({ server: header.server, header: text, tools, omitted });
  let text = header.header;

  // 1. Schemas, largest first. Replacing one value changes the compact JSON by exactly the difference.
  const schemas: Array<{ tool: Tool; key: SchemaKey; bytes: number }> = [];
  for (const tool of tools)
    for (const key of ["inputSchema", "outputSchema"] as const) if (key in tool) schemas.push({ tool, key, bytes: bytesOf(tool[key]) });
  schemas.sort((a, b) => b.bytes - a.bytes);
  // `omitted` is counted at its largest (three counts) so the estimate never undershoots.
  let total = bytesOf({ ...out(), omitted: { schemas: 1e6, tools: 1e6, headerChars: 1e9 } });
  for (const s of schemas) {
    if (total <= maxBytes) break;
    const marker: McpOmittedSchema = { omitted: true, bytes: s.bytes };
    s.tool[s.key] = marker;
    total -= s.bytes - bytesOf(marker);
    omitted.schemas = (omitted.schemas ?? 0) + 1;
  }

  if (total <= maxBytes && bytesOf(out()) <= maxBytes) return out();

  // 2. The header text: the longest prefix whose JSON fits the room left.
  const full = text;
  if (cutHeader(full, maxBytes, out, (t, n) => ((text = t), (omitted.headerChars = n)))) return out();

  // 3. No room even for an empty header: tools from the end (each costs its JSON and a comma), then the header again.
  let over = bytesOf(out()) - maxBytes;
  while (over > 0 && tools.length > 0) {
    over -= bytesOf(tools.pop()) + 1;
    omitted.tools = (omitted.tools ?? 0) + 1;
  }
  while (tools.length > 0 && bytesOf(out()) > maxBytes) {
    tools.pop();
    omitted.tools = (omitted.tools ?? 0) + 1;
  }
  cutHeader(full, maxBytes, out, (t, n) => ((text = t), (omitted.headerChars = n)));
  return out();
}

/**
 * Sets the longest prefix of `full` (with its note) for which `out()` fits `maxBytes`, by binary
 * search on characters; false when even the empty prefix does not fit (it is left set then).
 */
function cutHeader(full: string, maxBytes: number, out: () => unknown, set: (text: string, cut: number) => void): boolean {
  const fits = (n: number): boolean => {
    const end = charBoundary(full, n);
    set(`${full.slice(0, end)}\n// …[${full.length - end} more characters: the header is over maxOutputBytes]\n`, full.length - end);
    return bytesOf(out()) <= maxBytes;
  };
  let lo = 0;
  let hi = full.length - 1;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  return fits(lo);
}

/** `n`, or one less where `n` would split a surrogate pair. */
function charBoundary(full: string, n: number): number {
  const code = n > 0 ? full.charCodeAt(n - 1) : 0;
  return code >= 0xd800 && code <= 0xdbff ? n - 1 : n;
}
