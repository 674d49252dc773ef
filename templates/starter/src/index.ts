// Your gateway: the codemode-edge package plus your tools. Tools are code (this file); policy is
// config (codemode.config.json). Guest code never sees `ctx`: it gets only what a tool returns.
import { createGateway, defineToolPlugin, type GatewayEnv } from "codemode-edge";
import config from "../codemode.config.json";

/** The bindings your tools use (wrangler.toml). */
interface Env {
  DB: D1Database;
  KV: KVNamespace;
}

const starter = defineToolPlugin<Env>({
  id: "starter",
  name: "Starter",
  description: "Notes in a D1 table and settings in a KV namespace.",
  tools: (tool) => [
    tool({
      name: "notes_add",
      description: "Add a note. Returns the stored note with its id.",
      parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"], additionalProperties: false },
      execute: async ({ text }: { text: string }, ctx) =>
        ctx.env.DB.prepare("INSERT INTO notes (text) VALUES (?) RETURNING id, text, created_at").bind(text).first(),
    }),
    tool({
      name: "notes_list",
      description: "List the notes, newest first.",
      parameters: { type: "object", properties: {}, additionalProperties: false },
      execute: async (_input, ctx) => (await ctx.env.DB.prepare("SELECT id, text, created_at FROM notes ORDER BY id DESC").all()).results,
    }),
    tool({
      name: "setting_put",
      description: "Store a setting (a text under a key).",
      parameters: {
        type: "object",
        properties: { key: { type: "string" }, value: { type: "string" } },
        required: ["key", "value"],
        additionalProperties: false,
      },
      execute: async ({ key, value }: { key: string; value: string }, ctx) => {
        await ctx.env.KV.put(key, value);
        return { stored: key };
      },
    }),
    tool({
      name: "setting_get",
      description: "Read a setting (null when absent).",
      parameters: { type: "object", properties: { key: { type: "string" } }, required: ["key"], additionalProperties: false },
      execute: async ({ key }: { key: string }, ctx) => ({ key, value: await ctx.env.KV.get(key) }),
    }),
  ],
});

const gateway = createGateway({ plugins: [starter] });

// codemode.config.json is bundled into the Worker; a CODEMODE_CONFIG var or secret, when set, wins.
function withConfig<E extends { CODEMODE_CONFIG?: string }>(env: E): E {
  return env.CODEMODE_CONFIG ? env : { ...env, CODEMODE_CONFIG: JSON.stringify(config) };
}

export default {
  fetch: (req: Request, env: GatewayEnv & Env, ctx: ExecutionContext) => gateway.worker.fetch(req, withConfig(env), ctx),
} satisfies ExportedHandler<GatewayEnv & Env>;

export class SessionDurableObject extends gateway.SessionDurableObject {
  constructor(state: DurableObjectState, env: GatewayEnv & Env) {
    super(state, withConfig(env));
  }
}
export class PristineImageRegistry extends gateway.PristineImageRegistry {}
