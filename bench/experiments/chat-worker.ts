/**
 * Section 8's bench worker for the experiments in this folder: built from `root` by
 * `wrangler deploy --dry-run` and served by that root's Miniflare (one workerd), configured with
 * the fake provider's models, the chat key and a bearer token. `inspectorPort` turns the V8
 * inspector on (profile-chat.ts); without it nothing but the worker runs (chat-cpu-ab.ts). `quiet`
 * drops the gateway's info log lines in the build (each is a write to this process through
 * workerd's console, not what a deployed Worker pays; perf-chat.ts).
 */
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { dryRun, readWranglerConfig, type Paths } from "../harness/workers.ts";
import { chatProviders, CHAT_KEY, CHAT_KEY_BINDING } from "../harness/chat-task.ts";

export type ChatWorker = { mf: any; base: string };

export async function serveChatWorker(
  root: string,
  tmpRoot: string,
  opts: { label: string; token: string; tenant: string; providerBase: string; minify: boolean; inspectorPort?: number; quiet?: boolean },
): Promise<ChatWorker> {
  const paths: Paths = {
    root,
    wranglerJs: path.join(root, "node_modules", "wrangler", "bin", "wrangler.js"),
    serve: path.join(root, "bench", "serve.mjs"),
    tmpRoot,
  };
  const benchConfig = path.join(root, "bench", "wrangler.bench.toml");
  const bundle = await dryRun(paths, opts.label, benchConfig, opts.minify ? [] : ["--minify=false"], 300_000);
  const config = await readWranglerConfig(benchConfig);
  if (opts.quiet) {
    const entry = path.join(bundle.outdir, bundle.entry);
    const src = fs.readFileSync(entry, "utf8");
    const quiet = src.replace(
      /(consoleSink = )\(line, level\) => level === "error" \? console\.error\(line\) : console\.log\(line\);/,
      "$1() => {};",
    );
    if (quiet === src) throw new Error("consoleSink not found in the build (an unminified one is needed)");
    fs.writeFileSync(entry, quiet);
  }
  const requireFromWrangler = createRequire(path.join(root, "node_modules", "wrangler", "package.json"));
  const { Miniflare, convertV4MiniflareOptions } = await import(pathToFileURL(requireFromWrangler.resolve("miniflare")).href);
  const modules: Array<{ type: string; path: string }> = [{ type: "ESModule", path: path.join(bundle.outdir, bundle.entry) }];
  for (const f of fs.readdirSync(bundle.outdir, { recursive: true }).map(String)) {
    if (f.endsWith(".wasm")) modules.push({ type: "CompiledWasm", path: path.join(bundle.outdir, f) });
    else if (f.endsWith(".mjs") && f !== bundle.entry) modules.push({ type: "ESModule", path: path.join(bundle.outdir, f) });
  }
  const durableObjects: Record<string, unknown> = {};
  for (const [binding, className] of Object.entries(config.durableObjects)) durableObjects[binding] = { className, useSQLite: true };
  const mf = new Miniflare(
    convertV4MiniflareOptions({
      host: "127.0.0.1",
      port: 0,
      ...(opts.inspectorPort !== undefined ? { inspectorPort: opts.inspectorPort } : {}),
      name: "gateway",
      modulesRoot: bundle.outdir,
      modules,
      compatibilityDate: config.compatibilityDate,
      compatibilityFlags: config.compatibilityFlags,
      bindings: {
        GATEWAY_TOKENS: JSON.stringify({ [opts.token]: opts.tenant }),
        CODEMODE_CONFIG: JSON.stringify({ mcp: { allowPrivateAddresses: true }, models: { providers: chatProviders(opts.providerBase) } }),
        [CHAT_KEY_BINDING]: CHAT_KEY,
      },
      durableObjects,
    }),
  );
  return { mf, base: (await mf.ready).href.replace(/\/$/, "") };
}
