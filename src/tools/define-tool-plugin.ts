import { isProtocolName, isReservedGuestName, SPECIALIZED_GLOBALS } from "../guest-names";
import type { ToolDefinition, ToolHooks, ToolNamespace, ToolNamespaceSpec, ToolPlugin } from "./types";

export type ToolPluginSpec<Env = unknown> = {
  id: string;
  name: string;
  description: string;
  origin?: ToolPlugin["origin"];
  tools: (tool: (definition: ToolDefinition<Env>) => ToolDefinition<Env>) => ToolDefinition<Env>[];
  hooks?: ToolHooks;
  /**
   * Guest namespaces over this plugin's tools, by global name: `{ Issues: { methods: { list: "issues_list" } } }`
   * gives cells `Issues.list(input)` and `namespaces.Issues.list(input)` in turns where every tool it needs is visible.
   */
  namespaces?: Record<string, ToolNamespaceSpec>;
};

/** Bounds that keep a namespace's line in the exec description short. */
const MAX_NAMESPACE_METHODS = 64;
const MAX_NAMESPACE_DESCRIPTION = 300;
const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/**
 * Declare a tool plugin (the seed's `defineToolPlugin` shape). Plugins are code registered
 * in the Worker entry; configuration only decides policy. Names must be unique in a plugin.
 * `Env` types the Worker bindings its tools read from `ctx.env`: `defineToolPlugin<Env>({ ... })`.
 */
export function defineToolPlugin<Env = unknown>(spec: ToolPluginSpec<Env>): ToolPlugin<Env> {
  const tools = spec.tools((definition) => definition);
  const seen = new Set<string>();
  for (const t of tools) {
    if (typeof t.name !== "string" || t.name.length === 0) throw new Error(`plugin ${spec.id}: a tool has no name`);
    if (seen.has(t.name)) throw new Error(`plugin ${spec.id}: duplicate tool name ${t.name}`);
    seen.add(t.name);
  }
  const namespaces = spec.namespaces === undefined ? [] : checkNamespaces(spec.id, spec.namespaces, tools);
  return Object.freeze({
    id: spec.id,
    name: spec.name,
    description: spec.description,
    origin: spec.origin ?? "external",
    tools: Object.freeze(tools),
    ...(spec.hooks ? { hooks: Object.freeze({ ...spec.hooks }) } : {}),
    ...(namespaces.length > 0 ? { namespaces: Object.freeze(namespaces) } : {}),
  });
}

/**
 * A namespace is checked when it is defined, never when a turn runs: its global name may not
 * take a code-mode global, a built-in or a JavaScript word (the seed's serializer rejects those);
 * its method names may not be names the engine reads and calls on any object (`then`, `toJSON`,
 * `constructor`, `__proto__`, …); each method calls a cataloged tool of this plugin only.
 */
function checkNamespaces(pluginId: string, specs: Record<string, ToolNamespaceSpec>, tools: readonly ToolDefinition<any>[]): ToolNamespace[] {
  if (typeof specs !== "object" || specs === null || Array.isArray(specs))
    throw new Error(`plugin ${pluginId}: namespaces must be an object keyed by global name`);
  const byName = new Map(tools.map((t) => [t.name, t]));
  const out: ToolNamespace[] = [];
  for (const name of Object.keys(specs)) {
    const where = `plugin ${pluginId}: namespace ${JSON.stringify(name)}`;
    if (!IDENT.test(name)) throw new Error(`${where}: the name must be a JavaScript identifier`);
    if (isReservedGuestName(name) || SPECIALIZED_GLOBALS.has(name))
      throw new Error(`${where}: the name is reserved (a code-mode global, a built-in or a JavaScript word); pick another`);
    const ns = specs[name]!;
    if (typeof ns !== "object" || ns === null || typeof ns.methods !== "object" || ns.methods === null || Array.isArray(ns.methods))
      throw new Error(`${where}: methods must be an object of method name → tool name`);
    const methodNames = Object.keys(ns.methods);
    if (methodNames.length === 0) throw new Error(`${where}: declares no methods`);
    if (methodNames.length > MAX_NAMESPACE_METHODS) throw new Error(`${where}: more than ${MAX_NAMESPACE_METHODS} methods`);
    const required = new Set<string>();
    const methods: Array<{ name: string; tool: string }> = [];
    for (const method of methodNames) {
      if (!IDENT.test(method) || isProtocolName(method) || method === "prototype")
        throw new Error(`${where}: method ${JSON.stringify(method)} is not allowed (an identifier that is no object protocol name)`);
      const tool = ns.methods[method];
      const definition = typeof tool === "string" ? byName.get(tool) : undefined;
      if (!definition) throw new Error(`${where}: method ${method} names ${JSON.stringify(tool)}, which is no tool of this plugin`);
      if (definition.directOnly === true) throw new Error(`${where}: method ${method} names the direct-only tool ${tool}, which cells cannot call`);
      methods.push({ name: method, tool: definition.name });
      required.add(definition.name);
    }
    if (ns.requiredTools !== undefined) {
      if (!Array.isArray(ns.requiredTools)) throw new Error(`${where}: requiredTools must be an array of tool names`);
      for (const tool of ns.requiredTools) {
        if (typeof tool !== "string" || !byName.has(tool))
          throw new Error(`${where}: requiredTools names ${JSON.stringify(tool)}, which is no tool of this plugin`);
        required.add(tool);
      }
    }
    if (ns.description !== undefined && (typeof ns.description !== "string" || ns.description.length > MAX_NAMESPACE_DESCRIPTION))
      throw new Error(`${where}: description must be a string of at most ${MAX_NAMESPACE_DESCRIPTION} characters`);
    out.push(
      Object.freeze({
        name,
        methods: Object.freeze(methods.map((m) => Object.freeze(m))),
        requiredTools: Object.freeze([...required]),
        ...(ns.description ? { description: ns.description } : {}),
      }),
    );
  }
  return out;
}
