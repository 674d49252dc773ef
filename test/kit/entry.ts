import { createGateway } from "../../src/gateway";
import { demoPlugin } from "../../src/plugins";
import { defineToolPlugin } from "../../src/tools";

/** Core edge tools of an embedding: a `read` and a shell-style `exec` (cataloged, guest global `exec`). */
const kitCore = defineToolPlugin({
  id: "kit-core",
  name: "Kit core",
  description: "Core tools of the test embedding.",
  origin: "core",
  tools: (tool) => [
    tool({
      name: "read",
      description: "Read a file by path (test double).",
      parameters: {
        type: "object",
        properties: { path: { type: "string" }, offset: { type: "integer", minimum: 1 } },
        required: ["path"],
        additionalProperties: false,
      },
      execute: ({ path }: { path: string }) => ({ path, text: `contents of ${path}` }),
    }),
    tool({
      name: "exec",
      description: "Run a shell command (test double that echoes it).",
      parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"], additionalProperties: false },
      execute: ({ command }: { command: string }) => ({ ran: command, exitCode: 0 }),
    }),
  ],
});

/** External plugin tools that exercise contracts and direct-only exposure. */
const kitExternal = defineToolPlugin({
  id: "kit-external",
  name: "Kit external",
  description: "Contract and exposure edge cases.",
  origin: "external",
  tools: (tool) => [
    tool({
      name: "kit_bad_output",
      description: "Declares an output contract it does not honour.",
      parameters: { type: "object", properties: {}, additionalProperties: false },
      outputSchema: { type: "object", properties: { id: { type: "string" } }, required: ["id"], additionalProperties: false },
      execute: () => ({ id: 42, secret: "hunter2-not-to-be-printed" }),
    }),
    tool({
      name: "kit_invalid_schema",
      description: "Declares an output contract that cannot compile.",
      parameters: { type: "object", properties: {}, additionalProperties: false },
      outputSchema: { type: "object", properties: { a: { $ref: "#/$defs/missing" } } },
      execute: async (_input, ctx) => {
        await ctx.store.put("kit_invalid_schema_ran", true);
        return { a: 1 };
      },
    }),
    tool({
      name: "kit_screen",
      description: "Capture the screen (direct-only: its image cannot cross the JSON bridge).",
      directOnly: true,
      parameters: { type: "object", properties: {}, additionalProperties: false },
      execute: () => ({ image: "data:image/png;base64,AAAA" }),
    }),
    tool({
      name: "delete",
      description: "A tool whose name is a reserved word (gets a suffixed callable name).",
      parameters: { type: "object", properties: { id: { type: "string" } }, additionalProperties: false },
      execute: ({ id }: { id?: string }) => ({ deleted: id ?? null }),
    }),
    tool({
      name: "wait",
      description: "A plugin tool named like a control tool; never cataloged.",
      parameters: { type: "object" },
      execute: () => "should never run",
    }),
  ],
});

const gateway = createGateway({ plugins: [kitExternal, demoPlugin, kitCore] });

export default gateway.worker;
export class SessionDurableObject extends gateway.SessionDurableObject {}
export class PristineImageRegistry extends gateway.PristineImageRegistry {}
