import { PristineImageRegistry } from "../durable-objects/images";
import { createSessionObject } from "../durable-objects/session";
import { createApp, type GatewayEnv } from "./http";
import { handleMcpRequest } from "./mcp-server";
import { facades } from "./facades";
import { MemoryLedger } from "./runtime";
import { VmPool } from "./runtime";
import type { ToolPlugin } from "./tools";
import { checkConfigModule, type CodemodeConfig } from "./config";
import { systemClock, type Clock } from "./runtime";

export type GatewayOptions = {
  plugins: readonly ToolPlugin[];
  /**
   * The config module (`defineConfig({...})`), bundled with the Worker: laid over the defaults, with
   * `CODEMODE_CONFIG` (when set) laid over it key by key. Checked here: an invalid one fails the Worker at start-up.
   */
  config?: CodemodeConfig;
  /**
   * QuickJS VM memory all session objects of one isolate may hold at once, in bytes: an
   * integer from 4 MiB to 128 MiB (the platform's isolate limit); default 80 MiB, which
   * leaves 48 MiB for the host. See MemoryLedger.
   */
  isolateVmMemoryBytes?: number;
  /** Where session objects read time (deadlines, TTLs, idle expiry); the system clock by default. Tests pass a frozen or manual one. */
  clock?: Clock;
  /** How often a quiet `/chat` event stream gets a comment line, in ms (default 15000; 100–60000). */
  sseHeartbeatMs?: number;
};

/**
 * Assemble a gateway from tool plugins: the Worker's fetch handler, the session Durable
 * Object class bound to the same plugin set, and the image registry object (parked runs
 * survive deploys through it). Users embedding the gateway write their own entry with their
 * own plugins (tools are code; config is policy) and export both classes, as src/index.ts does.
 */
export function createGateway(options: GatewayOptions) {
  // Validated before anything else: a bad budget fails the Worker at start-up.
  const ledger = new MemoryLedger({ budgetBytes: options.isolateVmMemoryBytes });
  const config = options.config;
  if (config !== undefined) {
    const checked = checkConfigModule(config);
    if (!checked.ok) throw new Error(`invalid config module (createGateway config): ${checked.error.message}`);
  }
  // Plugin conflicts are enforced at start-up; only client tools may shadow a name per turn.
  const owners = new Map<string, string>();
  for (const p of options.plugins) {
    for (const t of p.tools) {
      const other = owners.get(t.name);
      if (other !== undefined) throw new Error(`tool ${t.name} is defined by both plugin ${other} and plugin ${p.id}`);
      owners.set(t.name, p.id);
    }
  }
  // A namespace is one guest global: two plugins may not both register it.
  const namespaceOwners = new Map<string, string>();
  for (const p of options.plugins) {
    for (const ns of p.namespaces ?? []) {
      const other = namespaceOwners.get(ns.name);
      if (other !== undefined) throw new Error(`namespace ${ns.name} is registered by both plugin ${other} and plugin ${p.id}`);
      namespaceOwners.set(ns.name, p.id);
    }
  }
  const app = createApp({ sseHeartbeatMs: options.sseHeartbeatMs, mcp: handleMcpRequest, facades, config });
  return {
    worker: { fetch: (req: Request, env: GatewayEnv, ctx: ExecutionContext) => app.fetch(req, env, ctx) } satisfies ExportedHandler<GatewayEnv>,
    // Module state of this gateway instance, so one ledger and pool per isolate: every
    // session object the isolate hosts shares them.
    SessionDurableObject: createSessionObject(options.plugins, new VmPool(ledger), { clock: options.clock ?? systemClock, config }),
    PristineImageRegistry,
  };
}

/** What `createGateway` returns: the Worker's handler and the two Durable Object classes its entry exports. */
export type Gateway = ReturnType<typeof createGateway>;
