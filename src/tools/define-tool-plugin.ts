import type { ToolDefinition, ToolHooks, ToolPlugin } from "./types";

export type ToolPluginSpec<Env = unknown> = {
  id: string;
  name: string;
  description: string;
  origin?: ToolPlugin["origin"];
  tools: (tool: (definition: ToolDefinition<Env>) => ToolDefinition<Env>) => ToolDefinition<Env>[];
  hooks?: ToolHooks;
};

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
  return Object.freeze({
    id: spec.id,
    name: spec.name,
    description: spec.description,
    origin: spec.origin ?? "external",
    tools: Object.freeze(tools),
    ...(spec.hooks ? { hooks: Object.freeze({ ...spec.hooks }) } : {}),
  });
}
