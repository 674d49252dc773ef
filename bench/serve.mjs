/**
 * Serve a worker bundle built by `wrangler deploy --dry-run --outdir <dir>` with Miniflare
 * (workerd) on 127.0.0.1. Started by bench/harness/workers.ts as a child in its own process group, so
 * killing the group also stops workerd.
 *
 *   node bench/serve.mjs '<json options>'
 *     { "outdir": "...", "port": 0, "compatibilityDate": "...", "compatibilityFlags": [],
 *       "entry": "index.js", "bindings": { "K": "V" }, "durableObjects": { "SESSIONS": "SessionDurableObject" } }
 *
 * Prints `READY <url>` on stdout once the worker answers, then runs until killed (or until its
 * stdin closes, so it also stops when the parent dies).
 *
 * Why not `wrangler dev` for the measurements: it watches the sources (an edit elsewhere in the
 * tree reloads the worker mid-run) and puts a dev-only proxy worker (a second workerd process)
 * in front of the user worker. Serving the dry-run bundle times exactly the artefact that would
 * be deployed, through one workerd.
 *
 * `port` is a socket straight to the worker (Miniflare's `unsafeDirectSockets`), not Miniflare's
 * own entry worker: that entry worker is a local-only JavaScript hop (~0.3 ms of workerd CPU per
 * request here) that a deployed Worker does not have. Miniflare's entry listens on a free port,
 * unused.
 *
 * The gateway writes two info-level log lines per request. Forwarding them through this process
 * cost it ~0.2–0.4 ms of CPU per request, beside the workerd being measured on a 2-core machine;
 * only warnings and errors are forwarded.
 */
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
// The Miniflare that ships with (and matches the workerd of) the project's wrangler.
const requireFromWrangler = createRequire(path.join(ROOT, "node_modules", "wrangler", "package.json"));
const { Miniflare, convertV4MiniflareOptions } = await import(pathToFileURL(requireFromWrangler.resolve("miniflare")).href);

const opts = JSON.parse(process.argv[2] ?? "{}");
const durableObjects = {};
for (const [binding, className] of Object.entries(opts.durableObjects ?? {})) {
  durableObjects[binding] = { className, useSQLite: true };
}

// The bundle as wrangler wrote it: index.js (entry), the engine's .wasm next to it, and the
// additional modules (generated/typescript.mjs, the TypeScript compiler) under their upload names.
const entry = opts.entry ?? "index.js";
const modules = [{ type: "ESModule", path: path.join(opts.outdir, entry) }];
for (const f of fs.readdirSync(opts.outdir, { recursive: true })) {
  const file = String(f);
  if (file.endsWith(".wasm")) modules.push({ type: "CompiledWasm", path: path.join(opts.outdir, file) });
  else if (file.endsWith(".mjs") && file !== entry) modules.push({ type: "ESModule", path: path.join(opts.outdir, file) });
}

// Miniflare 5 takes a new option shape; it converts the classic (v4) one, which is simpler here.
const mf = new Miniflare(
  convertV4MiniflareOptions({
    host: "127.0.0.1",
    port: 0,
    unsafeDirectSockets: [{ host: "127.0.0.1", port: opts.port ?? 0 }],
    handleStructuredLogs: ({ level, message }) => {
      if (level === "error" || level === "warn") process.stdout.write(`${message}\n`);
    },
    name: opts.name ?? "worker",
    modulesRoot: opts.outdir,
    modules,
    compatibilityDate: opts.compatibilityDate,
    compatibilityFlags: opts.compatibilityFlags ?? [],
    bindings: opts.bindings ?? {},
    durableObjects,
  }),
);

let stopping = false;
async function stop(code) {
  if (stopping) return;
  stopping = true;
  try {
    await mf.dispose();
  } finally {
    process.exit(code);
  }
}
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(sig, () => void stop(0));
process.stdin.on("end", () => void stop(0));
process.stdin.on("close", () => void stop(0));
process.stdin.resume();

try {
  await mf.ready;
  const url = await mf.unsafeGetDirectURL(opts.name ?? "worker");
  process.stdout.write(`READY ${url.href}\n`);
} catch (error) {
  console.error(error);
  await stop(1);
}
