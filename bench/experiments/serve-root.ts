/**
 * One checkout's production build served as the bench serves it (bench/serve.mjs, a socket straight to
 * the worker), with the workerd process it runs in, for experiments that compare builds or read that
 * process's counters.
 */
import path from "node:path";
import { readWranglerConfig, serveBundle, type Server } from "../harness/workers.ts";
import { measureBundle } from "../harness/measure-bundle.ts";
import type { Gateway } from "../harness/http.ts";
import { startedWorkerd } from "./workerd-pid.ts";

export type ServedRoot = { server: Server; pid: number; gw: Gateway };

export async function serveRoot(root: string, tmpRoot: string, name: string, token: string): Promise<ServedRoot> {
  const paths = {
    root,
    wranglerJs: path.join(root, "node_modules", "wrangler", "bin", "wrangler.js"),
    serve: path.join(root, "bench", "serve.mjs"),
    tmpRoot,
  };
  const config = path.join(root, "wrangler.toml");
  const bundle = await measureBundle(paths, config, path.join(root, "bench", "stubs", "typescript-empty.mjs"), false, 120_000, () => {});
  const env = { GATEWAY_TOKENS: JSON.stringify({ [token]: name }) };
  const { started: server, pid } = await startedWorkerd(async () =>
    serveBundle(paths, name, bundle.withTs, await readWranglerConfig(config), env, "/healthz", 60_000),
  );
  const gw = { base: server.base, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, timeoutMs: 30_000 };
  return { server, pid, gw };
}
