import { createGateway } from "../../src/gateway";
import { defineToolPlugin } from "../../src/tools";
import { largeCatalogPlugin } from "../support/large-catalog";

/**
 * An embedding with a large plugin catalog (seed 004's E2E), and a misconfiguration the
 * surface check must catch: a direct-only tool named `exec`, which a code-mode surface cannot
 * hold beside the control tool of that name. Turns that leave it out (`deny: ["exec"]`, or an
 * allow list) are fine; a code-mode turn that keeps it must be refused, never sent.
 */
const clash = defineToolPlugin({
  id: "clash",
  name: "Clash",
  description: "A direct-only tool whose name collides with code mode's exec.",
  origin: "external",
  tools: (tool) => [
    tool({
      name: "exec",
      description: "Run a command on the operator's terminal (direct-only).",
      directOnly: true,
      parameters: { type: "object", properties: { command: { type: "string" } }, additionalProperties: false },
      execute: ({ command }: { command?: string }) => ({ ran: command ?? null }),
    }),
  ],
});

const gateway = createGateway({ plugins: [largeCatalogPlugin(400), clash] });

export default gateway.worker;
export class SessionDurableObject extends gateway.SessionDurableObject {}
export class PristineImageRegistry extends gateway.PristineImageRegistry {}
