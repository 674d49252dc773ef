import type { CatalogEntry, CatalogProjection, NamespaceEntry } from "../catalog";
import type { CodeModeLanguage } from "../code-mode";
import { sanitizeUntrusted, sanitizeUntrustedIn, type JsonSchema } from "../tools";
import { toolSearchSurface } from "../tool-search";
import { renderQuickIndex } from "./quick-index";
import type { TurnToolSearch } from "./turn-spec";
import { SWARM_EXEC_LINE, swarmSpawnEntry } from "./swarm-surface";

/** A tool definition exactly as a provider would receive it. */
export type ModelTool = { name: string; description: string; parameters: JsonSchema };

function execDescription(entries: readonly CatalogEntry[], languages: readonly CodeModeLanguage[], namespaces: readonly NamespaceEntry[]): string {
  const { lines, omitted } = renderQuickIndex(entries);
  const parts = [
    `Run a short ${languages.map((l) => LANGUAGE_NAMES[l]).join(" or ")} program in a sandbox; ` +
      "its return value is the result. Top-level await and return work. Every tool below is an async global function " +
      "taking one object; await every call (a failed call throws an Error you can catch). text(value), json(value) " +
      "and console.log add output items. No import/require, filesystem, network or shell.",
    "When a line ends in -> ?, the output shape is unknown: return that call's raw value unchanged, observe it, " +
      "then filter or map it in a later exec. Declared outputs may feed later calls in the same program.",
    'If a result has status "waiting", call wait with its runId.',
  ];
  if (lines.length > 0) parts.push("Tools:\n" + lines.join("\n"));
  const servers = [...new Set(entries.flatMap((e) => (e.mcp ? [e.mcp.serverIdent] : [])))];
  if (servers.length > 0) {
    const shown = servers.slice(0, 20).map((s) => `MCP.${s}`);
    parts.push(
      `MCP servers: ${shown.join(", ")}${servers.length > shown.length ? ` and ${servers.length - shown.length} more` : ""}. ` +
        'Call MCP.<server>.<tool>({ ...input }); read the declarations first with await API.read("mcp/<server>.d.ts") (API.list("mcp") lists the files).',
    );
  }
  if (namespaces.length > 0) parts.push(namespaceLines(entries, namespaces));
  if (swarmSpawnEntry(entries)) parts.push(SWARM_EXEC_LINE);
  if (omitted > 0) parts.push(`${omitted} more tools are not listed: find them with await catalog.search("what you need"); results are callable.`);
  else parts.push('catalog.search("query") returns callable handles; handle.describe() gives the full schema.');
  return parts.join("\n\n");
}

/** How many namespaces the exec description names (each line is bounded by defineToolPlugin's limits). */
const MAX_PROMPT_NAMESPACES = 20;

/**
 * The turn's visible plugin namespaces (seed 000: their prompt text is added only when the
 * namespace is visible): each method with the callable name of the tool it runs, whose quick
 * index line gives the input hint, then the plugin's one-line description.
 */
function namespaceLines(entries: readonly CatalogEntry[], namespaces: readonly NamespaceEntry[]): string {
  const callable = new Map(entries.map((e) => [e.toolName, e.callableName]));
  const shown = namespaces.slice(0, MAX_PROMPT_NAMESPACES).map((ns) => {
    const methods = ns.methods.map((m) => `${ns.name}.${m.name}(input) runs ${callable.get(m.toolName) ?? m.toolName}`).join(", ");
    return `${methods}.${ns.description ? " " + ns.description.replace(/\s+/g, " ") : ""}`;
  });
  const more = namespaces.length - shown.length;
  return (
    "Namespaces (also namespaces.<Name>): each method takes the same one object as the tool it runs, with the same checks and result; " +
    'await API.read("namespaces.d.ts") has their declarations.\n' +
    shown.join("\n") +
    (more > 0 ? `\n${more} more namespaces: Object.keys(namespaces) lists them.` : "")
  );
}

const LANGUAGE_NAMES: Record<CodeModeLanguage, string> = { javascript: "JavaScript", typescript: "TypeScript" };

/**
 * The language of an `exec` that names none: the seed's `"javascript"` when it is enabled,
 * otherwise the one enabled language (`languages: ["typescript"]`).
 */
export function defaultExecLanguage(languages: readonly CodeModeLanguage[]): CodeModeLanguage {
  return languages.includes("javascript") ? "javascript" : (languages[0] ?? "javascript");
}

/** `exec` parameters: the seed's flat schema (language is a flat string enum, no oneOf/anyOf). */
function execParameters(languages: readonly CodeModeLanguage[]): JsonSchema {
  const names = languages.map((l) => LANGUAGE_NAMES[l]).join(" or ");
  return {
    type: "object",
    properties: {
      code: { type: "string", description: `${names} program (a function body).` },
      command: { type: "string", description: "Alias of code for exec-compatible callers; not a shell command." },
      language: {
        type: "string",
        enum: [...languages],
        description: `Source language; defaults to ${JSON.stringify(defaultExecLanguage(languages))}.`,
      },
      restartSafe: { type: "boolean", description: "Leave unset. Only for replay the gateway explicitly requests." },
    },
    additionalProperties: false,
  };
}

const WAIT_TOOL: ModelTool = {
  name: "wait",
  description: 'Resume a code-mode run whose exec or wait result had status "waiting". Pass its top-level runId.',
  parameters: {
    type: "object",
    properties: { runId: { type: "string", description: "runId from the waiting result." } },
    required: ["runId"],
    additionalProperties: false,
  },
};

/**
 * A tool the model calls directly. An MCP server's or a client's description and schema are their
 * writer's text, and a tool definition cannot be wrapped as untrusted: the wrapper's markers in
 * them (descriptions, titles, every string and key of the schema) are neutralized in place, with
 * the same sanitizer as wrapped content. The name stays: it is how the call is routed.
 */
function directTool(entry: CatalogEntry): ModelTool {
  if (entry.source === "openclaw") return { name: entry.toolName, description: entry.description, parameters: entry.parameters };
  return { name: entry.toolName, description: sanitizeUntrusted(entry.description), parameters: sanitizeUntrustedIn(entry.parameters) };
}

/** Which surface a turn gets (decided by config's `planSurface`, with the turn's own settings). */
export type SurfaceShape =
  | { kind: "none" }
  | { kind: "code_mode"; languages: readonly CodeModeLanguage[] }
  | { kind: "tool_search"; toolSearch: TurnToolSearch }
  | { kind: "direct" };

/**
 * What the model is sent: `exec` + `wait` + direct-only tools in code mode; Tool Search's
 * controls + direct-only tools in a Tool Search turn; the normal tools otherwise.
 */
export function modelSurface(catalog: CatalogProjection, shape: SurfaceShape): ModelTool[] {
  switch (shape.kind) {
    case "none":
      return [];
    case "direct":
      return [...catalog.entries, ...catalog.direct].map(directTool);
    case "tool_search": {
      const ts = shape.toolSearch;
      const controls = toolSearchSurface(ts.mode, {
        catalogSize: catalog.entries.length,
        codeTimeoutMs: ts.codeTimeoutMs,
        maxSearchLimit: ts.maxSearchLimit,
      });
      return [...controls, ...catalog.direct.map(directTool)];
    }
    case "code_mode":
      return [
        // Client tool names and MCP server names are listed in it: neutralized like a direct tool's text.
        {
          name: "exec",
          description: sanitizeUntrusted(execDescription(catalog.entries, shape.languages, catalog.namespaces ?? [])),
          parameters: execParameters(shape.languages),
        },
        WAIT_TOOL,
        ...catalog.direct.map(directTool),
      ];
  }
}
