import type { JsonSchema, ToolDefinition } from "../tools";

/** Where a cataloged tool came from, in the seed's catalog order. */
export type ToolOrigin = "core" | "bundled" | "external" | "mcp" | "client";

/** A client-provided tool as the turn declared it (untrusted metadata). */
export type ClientToolSpec = { name: string; description?: string; parameters?: JsonSchema; outputSchema?: JsonSchema };

/**
 * One effective tool of a turn. `id` is the opaque host-only routing identity: it never
 * appears in the prompt, guest metadata, descriptions or errors.
 */
export type CatalogEntry = {
  id: string;
  toolName: string;
  callableName: string;
  origin: ToolOrigin;
  /** Guest-visible source value: plugins are "openclaw" too. */
  source: "openclaw" | "mcp" | "client";
  pluginId?: string;
  label?: string;
  description: string;
  parameters: JsonSchema;
  /** Trusted (core/plugin) output contract only. */
  outputSchema?: JsonSchema;
  /**
   * A client tool's declared output schema: untrusted, so never a quick-index hint or part of
   * `describe()`, but its results are checked against it before the guest sees them.
   */
  clientOutputSchema?: JsonSchema;
  directOnly: boolean;
  /** MCP tools: the server (configured name, guest identifier) and the tool (MCP name, guest identifier). */
  mcp?: McpEntryInfo;
};

export type McpEntryInfo = { server: string; serverIdent: string; tool: string; toolIdent: string; outputSchema?: JsonSchema };

/** One MCP server's listed tools, as turn opening found them. */
export type McpServerTools = {
  name: string;
  tools: ReadonlyArray<{ name: string; description?: string; inputSchema: JsonSchema; outputSchema?: JsonSchema }>;
};

/** The persisted projection of a turn's tools (no functions; re-linked to plugins on load). */
export type CatalogProjection = {
  /** Cataloged tools (hidden from the model in code mode), in catalog order. */
  entries: CatalogEntry[];
  /** Direct-only tools: stay model-visible, never in the catalog. */
  direct: CatalogEntry[];
  /**
   * Plugin namespaces visible in this turn (every tool they need is an effective tool of their
   * plugin), in catalog order. Absent when none is (and in turns of older builds).
   */
  namespaces?: NamespaceEntry[];
};

/** A visible plugin namespace: the guest global `name` (and `namespaces.<name>`), each method bound to one catalog tool. */
export type NamespaceEntry = {
  name: string;
  pluginId: string;
  /** `toolName`: the plugin tool the method calls (the catalog entry of that name, owned by `pluginId`). */
  methods: Array<{ name: string; toolName: string }>;
  description?: string;
};

export type ResolvedTool = { entry: CatalogEntry; definition?: ToolDefinition };

export type ToolCatalogMetadata = {
  callableName: string;
  toolName: string;
  label?: string;
  description: string;
  source: "openclaw" | "client";
  input?: string;
  output?: string;
};
