/**
 * Building and serving the workers the bench measures. `dryRun` builds a worker with
 * `wrangler deploy --dry-run --outdir` (the artefact a deploy would upload; its sizes are
 * section 3). `serveBundle` serves a built bundle with bench/serve.mjs (Miniflare → workerd,
 * the runtime `wrangler dev` uses) on 127.0.0.1 in its own process group, which pins the code
 * for the whole run (no file watching) and has no dev proxy in front of the worker.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { buildTypeScriptModule } from "../../scripts/build-typescript-module.mjs";
import { killGroup, sleep, tail, trackGroup, untrackGroup, wranglerEnv } from "./supervise.ts";
import type { ChildProcess } from "node:child_process";

export interface Paths {
  root: string;
  wranglerJs: string;
  serve: string;
  tmpRoot: string;
}

/** A `wrangler deploy --dry-run` output: where it is, its sizes, whether the TypeScript compiler is in it. */
export interface Bundle {
  outdir: string;
  entry: string;
  uploadKiB: number;
  gzipKiB: number;
  files: Record<string, number>;
  hasCompiler: boolean;
  /** The module holding the TypeScript compiler (generated/typescript.mjs), or the entry if it is inlined. */
  compilerModule: string | null;
  /** The main module alone, gzipped as wrangler and scripts/check-bundle-size.mjs gzip it. */
  mainGzipBytes: number;
}

export interface WorkerConfig {
  compatibilityDate: string;
  compatibilityFlags: string[];
  durableObjects: Record<string, string>;
}

export interface Server {
  base: string;
  child: ChildProcess;
  output: () => string;
}

export async function dryRun(paths: Paths, label: string, configPath: string, extraArgs: string[], timeoutMs: number): Promise<Bundle> {
  // The bench's configs have no custom build (wrangler.toml's runs this), and a fresh checkout has
  // no generated compiler module yet; a no-op when it is up to date.
  await buildTypeScriptModule();
  return new Promise((resolve, reject) => {
    const outdir = path.join(paths.tmpRoot, `bundle-${label}`);
    const child: ChildProcess = spawn(
      process.execPath,
      [paths.wranglerJs, "deploy", "--dry-run", "--outdir", outdir, "-c", configPath, ...extraArgs],
      {
        cwd: paths.root,
        env: wranglerEnv(),
        stdio: ["ignore", "pipe", "pipe"],
        detached: true,
      },
    );
    trackGroup(child);
    let out = "";
    child.stdout?.on("data", (d: unknown) => (out += String(d)));
    child.stderr?.on("data", (d: unknown) => (out += String(d)));
    const timer = setTimeout(() => killGroup(child), timeoutMs);
    child.on("error", reject);
    child.on("close", (code: number | null) => {
      clearTimeout(timer);
      untrackGroup(child);
      try {
        const m = /Total Upload:\s*([\d.]+)\s*KiB\s*\/\s*gzip:\s*([\d.]+)\s*KiB/.exec(out);
        if (code !== 0 || !m) throw new Error(`wrangler deploy --dry-run (${label}) failed (exit ${code}):\n${out.slice(-3000)}`);
        const files: Record<string, number> = {};
        let entry: string | undefined;
        let compilerModule: string | null = null;
        for (const f of (fs.readdirSync(outdir, { recursive: true }) as unknown[]).map(String).sort()) {
          if (!/\.(m?js|wasm)$/.test(f)) continue;
          if (f.endsWith(".js") && !f.includes("/")) entry = f;
          const key = f.endsWith(".wasm") ? "quickjs.wasm" : f.endsWith(".js") ? "entry.js" : path.basename(f);
          files[key] = fs.statSync(path.join(outdir, f)).size;
          // A TypeScript diagnostic key: survives minification, present only with the compiler.
          if (!f.endsWith(".wasm") && fs.readFileSync(path.join(outdir, f), "utf8").includes("ts_transpileModule_6153")) compilerModule = f;
        }
        if (!entry) throw new Error(`wrangler deploy --dry-run (${label}): no .js entry in ${outdir}`);
        const hasCompiler = compilerModule !== null;
        const mainGzipBytes = gzipSync(fs.readFileSync(path.join(outdir, entry))).length;
        resolve({ outdir, entry, uploadKiB: Number(m[1]), gzipKiB: Number(m[2]), files, hasCompiler, compilerModule, mainGzipBytes });
      } catch (error) {
        reject(error);
      }
    });
  });
}

/** Everything the server needs from a wrangler config (read by wrangler itself). */
export async function readWranglerConfig(configPath: string): Promise<WorkerConfig> {
  const wrangler = await import("wrangler");
  const c = wrangler.unstable_readConfig({ config: configPath });
  const durableObjects: Record<string, string> = {};
  for (const b of c.durable_objects?.bindings ?? []) durableObjects[b.name] = b.class_name;
  return { compatibilityDate: c.compatibility_date ?? "", compatibilityFlags: c.compatibility_flags ?? [], durableObjects };
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/**
 * Serve a built bundle on 127.0.0.1; resolves once `readyPath` answers 200. The server's stdin
 * stays open: if this process dies, it sees EOF and stops too.
 */
export async function serveBundle(
  paths: Paths,
  label: string,
  bundle: Bundle,
  config: WorkerConfig,
  bindings: Record<string, string>,
  readyPath: string,
  readyTimeoutMs: number,
): Promise<Server> {
  const port = await freePort();
  const opts = { name: label, outdir: bundle.outdir, entry: bundle.entry, port, ...config, bindings };
  const child: ChildProcess = spawn(process.execPath, [paths.serve, JSON.stringify(opts)], {
    cwd: paths.root,
    env: wranglerEnv(),
    stdio: ["pipe", "pipe", "pipe"],
    detached: true,
  });
  trackGroup(child);
  const output = tail(child);
  let exited: { code: number | null; signal: string | null } | null = null;
  child.on("exit", (code: number | null, signal: string | null) => {
    exited = { code, signal };
  });
  const base = `http://127.0.0.1:${port}`;
  const deadline = performance.now() + readyTimeoutMs;
  while (performance.now() < deadline) {
    if (exited) throw new Error(`server (${label}) exited early (${JSON.stringify(exited)}):\n${output()}`);
    try {
      const res = await fetch(base + readyPath, { signal: AbortSignal.timeout(5_000) });
      await res.arrayBuffer();
      if (res.status === 200) return { base, child, output };
    } catch {
      // not listening yet
    }
    await sleep(200);
  }
  throw new Error(`server (${label}) not ready after ${readyTimeoutMs} ms:\n${output()}`);
}

/** SIGTERM the server's group, then SIGKILL whatever is left (workerd included). */
export async function stopServer(server: Server): Promise<void> {
  const { child } = server;
  const gone = new Promise<void>((r) => (child.exitCode !== null || child.signalCode !== null ? r() : child.once("exit", () => r())));
  killGroup(child, "SIGTERM");
  const timedOut = await Promise.race([gone.then(() => false), sleep(5_000).then(() => true)]);
  killGroup(child);
  if (timedOut) await Promise.race([gone, sleep(2_000)]);
  untrackGroup(child);
}
