#!/usr/bin/env node
/**
 * `npm run bench`: the codemode-edge benchmark harness. Writes BENCHMARKS.md at the repo root.
 *
 *   1. exec of `return 1 + 2` over HTTP → Worker → session Durable Object → VM → JSON against a
 *      Node child process per cell (`node -e`).
 *   2. QuickJS-WASI VM create / eval / dispose inside workerd (bench/bench-worker.ts), raw and
 *      through the project's GuestVm (+ prelude).
 *   3. Bundle size of the production worker (`wrangler deploy --dry-run`) with and without the
 *      lazily loaded TypeScript compiler (`--alias typescript:bench/stubs/typescript-empty.mjs`).
 *
 * Workers are built once with `wrangler deploy --dry-run --outdir` (the production build of
 * 3. is the artefact 1. runs) and served by bench/serve.mjs (Miniflare → workerd, the runtime
 * `wrangler dev` uses) on 127.0.0.1, which pins the code for the whole run (no file watching)
 * and has no dev proxy in front of the worker.
 *
 * Every figure is reported as an absolute median/p90 and as a ratio against a baseline measured
 * in the same run. Every loop is bounded, every request has a timeout, children run in their
 * own process group and are killed on exit (normal, error, signal or watchdog), and a watchdog
 * stops the whole run after WATCHDOG_MS. Nothing binds outside 127.0.0.1.
 *
 * Options: --quick (fewer iterations, for trying the harness; figures not representative),
 *          --no-write (print the report, leave BENCHMARKS.md alone).
 */
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(BENCH_DIR, "..");
const WRANGLER_JS = path.join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js");
const BUNDLED_NODE = path.join(ROOT, "node_modules", ".bin", "node");
const OUTPUT = path.join(ROOT, "BENCHMARKS.md");
const STUB = path.join(BENCH_DIR, "stubs", "typescript-empty.mjs");
const SERVE = path.join(BENCH_DIR, "serve.mjs");
const BENCH_CONFIG = path.join(BENCH_DIR, "wrangler.bench.toml");
const ROOT_CONFIG = path.join(ROOT, "wrangler.toml");

const ARGS = new Set(process.argv.slice(2));
const QUICK = ARGS.has("--quick");
const WRITE = !ARGS.has("--no-write");

// ---------------------------------------------------------------------------------------------
// wrangler 4 needs Node >= 22. `npm run bench` puts node_modules/.bin/node (22) first on PATH;
// if we were started by an older node directly, re-run under the bundled one.
const nodeMajor = Number(process.versions.node.split(".")[0]);
if (nodeMajor < 22) {
  if (!fs.existsSync(BUNDLED_NODE)) {
    console.error(`bench: Node ${process.versions.node} is too old for wrangler (needs >= 22); run it with \`npm run bench\`.`);
    process.exit(1);
  }
  const r = spawnSync(BUNDLED_NODE, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: "inherit" });
  process.exit(r.status ?? 1);
}

const CONFIG = {
  token: "bench-token-123",
  tenant: "bench",
  execCode: "return 1 + 2",
  expectedValue: 3,
  // Interleaved rounds so background load hits the Worker path and the baseline alike.
  rounds: QUICK ? 2 : 10,
  execPerRound: QUICK ? 10 : 20, // >= 200 exec calls in total
  healthzPerRound: QUICK ? 10 : 20,
  nodePerRound: QUICK ? 3 : 20,
  execWarmup: QUICK ? 5 : 20,
  nodeWarmup: QUICK ? 1 : 3,
  vmIterations: QUICK ? 50 : 200,
  vmBatch: 10,
  vmWarmup: 20,
  requestTimeoutMs: 15_000,
  childTimeoutMs: 15_000,
  readyTimeoutMs: 60_000,
  dryRunTimeoutMs: 90_000,
};
const WATCHDOG_MS = 170_000;

// ---------------------------------------------------------------------------------------------
// Child process bookkeeping and cleanup.

/** @type {Set<import("node:child_process").ChildProcess>} process-group leaders (wrangler) */
const groups = new Set();
/** @type {Set<import("node:child_process").ChildProcess>} plain children (node -e baseline) */
const plain = new Set();
const TMP_PREFIX = "codemode-bench-";
// A run killed with SIGKILL cannot remove its temp dir; sweep such leftovers (older than any run can last).
for (const d of fs.readdirSync(os.tmpdir())) {
  if (!d.startsWith(TMP_PREFIX)) continue;
  try {
    const full = path.join(os.tmpdir(), d);
    if (Date.now() - fs.statSync(full).mtimeMs > 15 * 60_000) fs.rmSync(full, { recursive: true, force: true });
  } catch {
    // not ours to worry about
  }
}
const tmpRoot = fs.mkdtempSync(path.join(os.tmpdir(), TMP_PREFIX));

function killAllNow() {
  for (const child of groups) {
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  groups.clear();
  for (const child of plain) {
    try {
      child.kill("SIGKILL");
    } catch {
      // already gone
    }
  }
  plain.clear();
}

process.on("exit", () => {
  killAllNow();
  try {
    fs.rmSync(tmpRoot, { recursive: true, force: true });
  } catch {
    // best effort
  }
});
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(sig, () => {
    console.error(`\nbench: ${sig}, stopping children`);
    process.exit(130);
  });
}
const watchdog = setTimeout(() => {
  console.error(`bench: watchdog: still running after ${WATCHDOG_MS / 1000} s, giving up`);
  process.exit(2);
}, WATCHDOG_MS);
watchdog.unref();

function log(msg) {
  const t = ((performance.now() - START) / 1000).toFixed(1).padStart(5);
  console.log(`[bench ${t}s] ${msg}`);
}
const START = performance.now();
const LOAD_AT_START = os.loadavg();

// ---------------------------------------------------------------------------------------------
// Helpers.

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function stats(samples) {
  const s = [...samples].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return { n: s.length, median: q(0.5), p90: q(0.9), min: s[0], max: s[s.length - 1], mean: s.reduce((a, b) => a + b, 0) / s.length };
}

function wranglerEnv() {
  return { ...process.env, WRANGLER_SEND_METRICS: "false", FORCE_COLOR: "0", NO_COLOR: "1" };
}

/** Keep the last lines of a child's output for error reports. */
function tail(child, limit = 60) {
  const lines = [];
  const push = (chunk) => {
    for (const line of String(chunk).split("\n")) {
      if (line.trim() === "") continue;
      lines.push(line);
      if (lines.length > limit) lines.shift();
    }
  };
  child.stdout?.on("data", push);
  child.stderr?.on("data", push);
  return () => lines.join("\n");
}

/** Everything the server needs from a wrangler config (read by wrangler itself). */
async function readWranglerConfig(configPath) {
  const wrangler = await import("wrangler");
  const c = wrangler.unstable_readConfig({ config: configPath });
  const durableObjects = {};
  for (const b of c.durable_objects?.bindings ?? []) durableObjects[b.name] = b.class_name;
  return { compatibilityDate: c.compatibility_date, compatibilityFlags: c.compatibility_flags ?? [], durableObjects };
}

/**
 * Serve a built bundle (bench/serve.mjs: Miniflare → workerd) on 127.0.0.1 in its own process
 * group; resolves once `readyPath` answers 200. Its stdin stays open: if this process dies, the
 * server sees EOF and stops too.
 */
async function serveBundle(label, bundle, config, bindings, readyPath) {
  const { outdir } = bundle;
  const port = await freePort();
  const opts = { name: label, outdir, entry: bundle.entry, port, ...config, bindings };
  const child = spawn(process.execPath, [SERVE, JSON.stringify(opts)], { cwd: ROOT, env: wranglerEnv(), stdio: ["pipe", "pipe", "pipe"], detached: true });
  groups.add(child);
  const output = tail(child);
  let exited = null;
  child.on("exit", (code, signal) => {
    exited = { code, signal };
  });
  const base = `http://127.0.0.1:${port}`;
  const deadline = performance.now() + CONFIG.readyTimeoutMs;
  while (performance.now() < deadline) {
    if (exited) throw new Error(`server (${label}) exited early (${JSON.stringify(exited)}):\n${output()}`);
    try {
      const res = await fetch(base + readyPath, { signal: AbortSignal.timeout(5_000) });
      await res.arrayBuffer();
      if (res.status === 200) return { base, child, output, port };
    } catch {
      // not listening yet
    }
    await sleep(200);
  }
  throw new Error(`server (${label}) not ready after ${CONFIG.readyTimeoutMs} ms:\n${output()}`);
}

async function stopServer(server) {
  const { child } = server;
  if (!groups.has(child)) return;
  const gone = new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r() : child.once("exit", r)));
  try {
    process.kill(-child.pid, "SIGTERM");
  } catch {
    // already gone
  }
  const timedOut = await Promise.race([gone.then(() => false), sleep(5_000).then(() => true)]);
  try {
    process.kill(-child.pid, "SIGKILL"); // workerd and anything else left in the group
  } catch {
    // group already empty
  }
  if (timedOut) await Promise.race([gone, sleep(2_000)]);
  groups.delete(child);
}

async function getJson(url, init = {}) {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(CONFIG.requestTimeoutMs) });
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`${init.method ?? "GET"} ${url}: ${res.status}, not JSON: ${text.slice(0, 300)}`);
  }
  return { status: res.status, json };
}

// ---------------------------------------------------------------------------------------------
// 1. exec through the real path vs a Node process per cell.

const NODE_PROGRAM =
  `(async function () { ${CONFIG.execCode} })().then(` +
  `(value) => { process.stdout.write(JSON.stringify({ status: "completed", value })); },` +
  `(error) => { process.stdout.write(JSON.stringify({ status: "failed", error: String(error) })); process.exitCode = 1; });`;

function nodeCellOnce() {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, ["-e", NODE_PROGRAM], { stdio: ["ignore", "pipe", "pipe"] });
    plain.add(child);
    let out = "";
    let err = "";
    const timer = setTimeout(() => child.kill("SIGKILL"), CONFIG.childTimeoutMs);
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("error", (e) => {
      clearTimeout(timer);
      plain.delete(child);
      reject(e);
    });
    child.on("close", (code, signal) => {
      const ms = performance.now() - t0;
      clearTimeout(timer);
      plain.delete(child);
      let json;
      try {
        json = JSON.parse(out);
      } catch {
        return reject(new Error(`node -e: exit ${code ?? signal}, bad output ${JSON.stringify(out.slice(0, 200))} ${err.slice(0, 300)}`));
      }
      if (code !== 0 || json.status !== "completed" || json.value !== CONFIG.expectedValue) {
        return reject(new Error(`node -e: unexpected result ${JSON.stringify(json)} (exit ${code})`));
      }
      resolve(ms);
    });
  });
}

async function benchExec(bundle) {
  log("[1] exec: serving the production bundle");
  const config = await readWranglerConfig(ROOT_CONFIG);
  const tokens = JSON.stringify({ [CONFIG.token]: CONFIG.tenant });
  const server = await serveBundle("gateway", bundle, config, { GATEWAY_TOKENS: tokens }, "/healthz");
  try {
    const headers = { authorization: `Bearer ${CONFIG.token}`, "content-type": "application/json" };
    const session = `bench-${Date.now().toString(36)}`;
    const opened = await getJson(`${server.base}/v1/sessions/${session}/turns`, { method: "POST", headers, body: "{}" });
    if (opened.status !== 201 || typeof opened.json.turnId !== "string") {
      throw new Error(`open turn: ${opened.status} ${JSON.stringify(opened.json)}`);
    }
    const execUrl = `${server.base}/v1/sessions/${session}/turns/${opened.json.turnId}/tools/exec`;
    const execBody = JSON.stringify({ code: CONFIG.execCode });

    const execOnce = async () => {
      const t0 = performance.now();
      const r = await getJson(execUrl, { method: "POST", headers, body: execBody });
      const ms = performance.now() - t0;
      if (r.status !== 200 || r.json.status !== "completed" || r.json.value !== CONFIG.expectedValue) {
        throw new Error(`exec returned ${r.status} ${JSON.stringify(r.json).slice(0, 500)}`);
      }
      return ms;
    };
    // A DO round trip without a VM: `wait` with an empty body is refused inside the session
    // object after the turn lookup. Optional: if the reply ever changes shape, the row is dropped.
    const waitUrl = `${server.base}/v1/sessions/${session}/turns/${opened.json.turnId}/tools/wait`;
    const waitOnce = async () => {
      const t0 = performance.now();
      const r = await getJson(waitUrl, { method: "POST", headers, body: "{}" });
      const ms = performance.now() - t0;
      return r.status === 200 && r.json.status === "failed" && r.json.code === "invalid_input" ? ms : null;
    };
    const healthzOnce = async () => {
      const t0 = performance.now();
      const r = await getJson(`${server.base}/healthz`);
      const ms = performance.now() - t0;
      if (r.status !== 200 || r.json.ok !== true) throw new Error(`healthz returned ${r.status} ${JSON.stringify(r.json)}`);
      return ms;
    };

    log(`[1] exec: warm-up (${CONFIG.execWarmup} exec, ${CONFIG.nodeWarmup} node -e)`);
    for (let i = 0; i < CONFIG.execWarmup; i++) await execOnce();
    for (let i = 0; i < CONFIG.execWarmup; i++) await healthzOnce();
    let waitUsable = (await waitOnce()) !== null;
    for (let i = 0; waitUsable && i < CONFIG.execWarmup; i++) waitUsable = (await waitOnce()) !== null;
    for (let i = 0; i < CONFIG.nodeWarmup; i++) await nodeCellOnce();

    const exec = [];
    const healthz = [];
    const node = [];
    const wait = [];
    for (let round = 0; round < CONFIG.rounds; round++) {
      for (let i = 0; i < CONFIG.execPerRound; i++) exec.push(await execOnce());
      for (let i = 0; i < CONFIG.healthzPerRound; i++) healthz.push(await healthzOnce());
      for (let i = 0; waitUsable && i < CONFIG.healthzPerRound; i++) {
        const ms = await waitOnce();
        if (ms === null) waitUsable = false;
        else wait.push(ms);
      }
      for (let i = 0; i < CONFIG.nodePerRound; i++) node.push(await nodeCellOnce());
    }
    log(`[1] exec: ${exec.length} exec, ${healthz.length} healthz, ${waitUsable ? wait.length : 0} wait, ${node.length} node -e — all verified`);
    return { exec: stats(exec), healthz: stats(healthz), node: stats(node), wait: waitUsable && wait.length > 0 ? stats(wait) : null };
  } finally {
    await stopServer(server);
  }
}

// ---------------------------------------------------------------------------------------------
// 2. VM costs inside workerd.

async function benchVm() {
  log("[2] vm: building the bench worker (wrangler deploy --dry-run -c bench/wrangler.bench.toml)");
  const bundle = await dryRun("bench-worker", BENCH_CONFIG, []);
  log("[2] vm: serving the bench worker");
  const server = await serveBundle("vm", bundle, await readWranglerConfig(BENCH_CONFIG), {}, "/clock");
  try {
    const q = `n=${CONFIG.vmIterations}&batch=${CONFIG.vmBatch}&warmup=${CONFIG.vmWarmup}`;
    const get = async (route) => {
      const r = await getJson(`${server.base}${route}`);
      if (r.status !== 200 || r.json.error) throw new Error(`${route}: ${r.status} ${JSON.stringify(r.json)}`);
      return r.json;
    };
    const clock = await get("/clock");
    const raw = await get(`/raw?${q}`);
    const rawLimits = await get(`/raw-limits?${q}`);
    const guest = await get(`/guest?${q}`);
    log(`[2] vm: done (${raw.iterations} iterations per measure, batches of ${raw.batchSize})`);
    return { clock, raw, rawLimits, guest };
  } finally {
    await stopServer(server);
  }
}

// ---------------------------------------------------------------------------------------------
// 3. Bundle size.

function dryRun(label, configPath, extraArgs) {
  return new Promise((resolve, reject) => {
    const outdir = path.join(tmpRoot, `bundle-${label}`);
    const child = spawn(process.execPath, [WRANGLER_JS, "deploy", "--dry-run", "--outdir", outdir, "-c", configPath, ...extraArgs], {
      cwd: ROOT,
      env: wranglerEnv(),
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    groups.add(child);
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // gone
      }
    }, CONFIG.dryRunTimeoutMs);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      groups.delete(child);
      try {
        const m = /Total Upload:\s*([\d.]+)\s*KiB\s*\/\s*gzip:\s*([\d.]+)\s*KiB/.exec(out);
        if (code !== 0 || !m) throw new Error(`wrangler deploy --dry-run (${label}) failed (exit ${code}):\n${out.slice(-3000)}`);
        const files = {};
        let entry;
        for (const f of fs.readdirSync(outdir)) {
          if (f.endsWith(".map") || f === "README.md") continue;
          if (f.endsWith(".js")) entry = f;
          files[f.endsWith(".wasm") ? "quickjs.wasm" : f.endsWith(".js") ? "entry.js" : f] = fs.statSync(path.join(outdir, f)).size;
        }
        if (!entry) throw new Error(`wrangler deploy --dry-run (${label}): no .js entry in ${outdir}`);
        const js = fs.readFileSync(path.join(outdir, entry), "utf8");
        // A TypeScript diagnostic key: survives minification, present only with the compiler.
        const hasCompiler = js.includes("ts_transpileModule_6153");
        resolve({ outdir, entry, uploadKiB: Number(m[1]), gzipKiB: Number(m[2]), files, hasCompiler });
      } catch (error) {
        reject(error);
      }
    });
  });
}

async function benchBundle() {
  log("[3] bundle: wrangler deploy --dry-run (production build, with the TypeScript compiler)");
  const withTs = await dryRun("with-typescript", ROOT_CONFIG, []);
  log("[3] bundle: wrangler deploy --dry-run (typescript aliased to an empty stub)");
  const withoutTs = await dryRun("without-typescript", ROOT_CONFIG, ["--alias", `typescript:${STUB}`]);
  if (!withTs.hasCompiler) throw new Error("the production bundle does not contain the TypeScript compiler; the comparison is meaningless");
  if (withoutTs.hasCompiler) throw new Error("the stubbed bundle still contains the TypeScript compiler");
  return { withTs, withoutTs };
}

// ---------------------------------------------------------------------------------------------
// Report.

const ms = (v) => (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2));
const ratio = (a, b) => (b > 0 ? `${(a / b).toFixed(a / b >= 10 ? 0 : 1)}×` : "n/a");
const kib = (bytes) => (bytes / 1024).toFixed(1);
const met = (ok) => (ok ? "**met**" : "**not met**");

function machineNote() {
  const cpus = os.cpus();
  const fmt = (l) => l.map((x) => x.toFixed(2)).join(" / ");
  let workerd = "";
  // The workerd that wrangler's Miniflare runs (nested under wrangler when versions differ).
  for (const dir of [path.join(ROOT, "node_modules", "wrangler", "node_modules", "workerd"), path.join(ROOT, "node_modules", "workerd")]) {
    try {
      workerd = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")).version;
      break;
    } catch {
      // try the next one
    }
  }
  let wrangler = "";
  try {
    wrangler = JSON.parse(fs.readFileSync(path.join(ROOT, "node_modules", "wrangler", "package.json"), "utf8")).version;
  } catch {
    // unknown
  }
  return [
    `- Date: ${new Date().toISOString()}`,
    `- Machine: ${cpus.length} cores (${cpus[0]?.model?.trim() ?? "unknown CPU"}), ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM, ${os.platform()} ${os.release()}; load average (1/5/15 min) ${fmt(LOAD_AT_START)} at the start, ${fmt(os.loadavg())} at the end (other work may share the machine)`,
    `- Runtime: local workerd ${workerd} (Miniflare, as bundled with wrangler ${wrangler}) serving \`wrangler deploy --dry-run\` builds on 127.0.0.1; Node ${process.versions.node}`,
    QUICK ? "- **--quick run: reduced iteration counts, figures not representative.**" : "",
  ].filter(Boolean);
}

function report({ execR, vmR, bundleR, elapsedS }) {
  const e = execR;
  const execRatio = e.node.median / e.exec.median;
  const rawTotal = vmR.raw.phases.sequentialTotal;
  const guestTotal = vmR.guest.phases.sequentialTotal;
  const rp = vmR.raw.phases;
  const gp = vmR.guest.phases;
  const lp = vmR.rawLimits.phases;
  const preludeCost = gp.createWithPrelude.median - lp.create.median;
  const w = bundleR.withTs;
  const wo = bundleR.withoutTs;
  const lines = [];
  const L = (s = "") => lines.push(s);

  L("# Benchmarks");
  L();
  L("Generated by `npm run bench` (bench/run.mjs). Re-run to refresh; figures vary from run to run and with machine load,");
  L("so compare the ratios (baseline measured in the same run) rather than absolute times across runs.");
  L();
  for (const m of machineNote()) L(m);
  L(`- Run time: ${elapsedS.toFixed(0)} s`);
  L();
  L("## Goals");
  L();
  L("| goal | measured | status |");
  L("|---|---|---|");
  L(`| \`exec\` of a trivial cell ≥ 10× faster than a Node process per cell | ${ratio(e.node.median, e.exec.median)} (median ${ms(e.exec.median)} ms vs ${ms(e.node.median)} ms) | ${met(execRatio >= 10)} |`);
  L(`| QuickJS create + eval + dispose ≤ 2 ms inside workerd (median) | ${ms(rawTotal.median)} ms | ${met(rawTotal.median <= 2)} |`);
  L(`| (for reference) the project's path, GuestVm.create + prelude + run + dispose, against the same 2 ms | ${ms(guestTotal.median)} ms | ${guestTotal.median <= 2 ? "within" : "over"} |`);
  L();

  L("## 1. `exec` of a trivial cell: HTTP → Worker → session Durable Object → VM → JSON");
  L();
  L(`\`POST /v1/sessions/<sid>/turns/<turnId>/tools/exec\` with \`{"code":"${CONFIG.execCode}"}\`, sequential, one session and turn, keep-alive`);
  L(`\`fetch\` from Node; every response checked (\`status: "completed"\`, \`value: ${CONFIG.expectedValue}\`). The worker is the production build`);
  L("(`wrangler deploy --dry-run` of wrangler.toml, as measured in 3.) served by Miniflare/workerd on 127.0.0.1 with `GATEWAY_TOKENS` set;");
  L("`wrangler dev` is not used for timing because it reloads on source edits and adds a dev-only proxy worker (a second workerd hop).");
  L(`Baseline: a process per cell, \`node -e\` running the same code wrapped in an async function and printing JSON`);
  L(`(spawn → exit, output parsed and checked). Warm-up: ${CONFIG.execWarmup} exec, ${CONFIG.nodeWarmup} node. The measurements are interleaved in ${CONFIG.rounds} rounds`);
  L("so background load hits both sides. `GET /healthz` (HTTP → Worker, no Durable Object, no VM) and a refused `wait` (HTTP → Worker →");
  L("Durable Object, no VM) show the floors under an exec.");
  L();
  L("| measure | n | median (ms) | p90 (ms) | min (ms) | max (ms) | ratio vs Node process (median) |");
  L("|---|---|---|---|---|---|---|");
  const row1 = (name, s) => L(`| ${name} | ${s.n} | ${ms(s.median)} | ${ms(s.p90)} | ${ms(s.min)} | ${ms(s.max)} | ${ratio(e.node.median, s.median)} faster |`);
  row1("`exec` `return 1 + 2` (full path)", e.exec);
  row1("`GET /healthz` (HTTP + Worker only)", e.healthz);
  if (e.wait) row1("`POST …/tools/wait` `{}` (HTTP + Worker + Durable Object turn lookup, refused there: no VM)", e.wait);
  L(`| **baseline**: \`node -e\` process per cell | ${e.node.n} | ${ms(e.node.median)} | ${ms(e.node.p90)} | ${ms(e.node.min)} | ${ms(e.node.max)} | 1× |`);
  L();
  L(`Breakdown by difference of medians: Worker + HTTP ≈ ${ms(e.healthz.median)} ms (healthz)` +
    (e.wait
      ? `; Durable Object RPC + turn lookup ≈ ${ms(Math.max(0, e.wait.median - e.healthz.median))} ms (wait − healthz); cell (VM create + prelude + run + dispose, validation, telemetry) ≈ ${ms(Math.max(0, e.exec.median - e.wait.median))} ms (exec − wait).`
      : `; Durable Object + cell ≈ ${ms(Math.max(0, e.exec.median - e.healthz.median))} ms (exec − healthz).`));
  L();

  L("## 2. QuickJS-WASI VM inside workerd");
  L();
  L("A bench-only worker (bench/bench-worker.ts, bench/wrangler.bench.toml; not the production worker) with the engine imported as");
  L(`\`import quickjsModule from "quickjs-wasi/quickjs.wasm"\`. Each measure runs ${CONFIG.vmWarmup} warm-up iterations, then`);
  L(`${vmR.raw.iterations} iterations per measure in ${vmR.raw.batches} batches of ${vmR.raw.batchSize}. workerd's \`performance.now()\` has a ${vmR.clock.minStepMs ?? "?"} ms resolution here`);
  L("(coarser than one VM), so phases are timed per batch (K creates, then K evals, then K disposes, divided by K) and the");
  L("create+eval+dispose total is timed as K complete iterations one after the other (one VM alive at a time, as a request runs);");
  L("medians and p90 are over batches. Local workerd lets the clock advance during synchronous code; **production Workers freeze");
  L("`performance.now()`/`Date.now()` between I/O, so these in-isolate timings can only be taken locally.** `dispose` only drops the");
  L("instance; its memory is reclaimed by V8's GC later, inside whatever runs next.");
  L();
  L("| measure | median (ms) | p90 (ms) | min (ms) | max (ms) | ratio vs raw (median) |");
  L("|---|---|---|---|---|---|");
  const row2 = (name, s, base) =>
    L(`| ${name} | ${ms(s.median)} | ${ms(s.p90)} | ${ms(s.min)} | ${ms(s.max)} | ${base === undefined ? "1×" : base === null || base.median === 0 ? "—" : ratio(s.median, base.median)} |`);
  row2("**baseline** raw: `QuickJS.create({ wasm })`", rp.create);
  row2("**baseline** raw: `evalCode(\"1+2\")` + read + dispose handle", rp.eval);
  row2("raw: `vm.dispose()`", rp.dispose, null);
  row2("**baseline** raw: create + eval + dispose, sequential", rawTotal);
  row2("`QuickJS.create` with GuestVm's options (memory limit, stack limit, interrupt handler)", lp.create, rp.create);
  row2("`GuestVm.create` (options + host callbacks + prelude)", gp.createWithPrelude, rp.create);
  row2("GuestVm: `installTools(\"[]\")` + `start(\"return 1 + 2\")` + status + value", gp.run, rp.eval);
  row2("GuestVm: `dispose()`", gp.dispose, null);
  row2("GuestVm: create + prelude + run + dispose, sequential", guestTotal, rawTotal);
  L();
  L(`Prelude + host callbacks (GuestVm.create − QuickJS.create with the same options, medians): ~${ms(Math.max(0, preludeCost))} ms.`);
  L();

  L("## 3. Bundle size (production worker, `wrangler deploy --dry-run`)");
  L();
  L("Sizes as wrangler prints them (`Total Upload … / gzip …`, JavaScript + quickjs.wasm). \"Without\" is the same entry (wrangler.toml,");
  L(`src/index.ts) with \`--alias typescript:bench/stubs/typescript-empty.mjs\`, i.e. the lazily imported TypeScript compiler removed.`);
  L();
  L("| bundle | total upload (KiB) | gzip (KiB) | JavaScript (KiB) | quickjs.wasm (KiB) | ratio vs without (gzip) |");
  L("|---|---|---|---|---|---|");
  const row3 = (name, b, base) =>
    L(`| ${name} | ${b.uploadKiB.toFixed(2)} | ${b.gzipKiB.toFixed(2)} | ${kib(b.files["entry.js"] ?? 0)} | ${kib(b.files["quickjs.wasm"] ?? 0)} | ${base ? ratio(b.gzipKiB, base.gzipKiB) : "1×"} |`);
  row3("**baseline**: without the TypeScript compiler", wo);
  row3("with the TypeScript compiler (as deployed)", w, wo);
  L();
  L(`The TypeScript compiler adds ${(w.uploadKiB - wo.uploadKiB).toFixed(0)} KiB uncompressed and ${(w.gzipKiB - wo.gzipKiB).toFixed(0)} KiB gzip to the upload.`);
  L("For scale: Cloudflare's Worker size limit is 3 MB (Free) / 10 MB (Paid) after compression.");
  L();
  return lines.join("\n");
}

// ---------------------------------------------------------------------------------------------

async function main() {
  if (!fs.existsSync(WRANGLER_JS)) throw new Error(`wrangler not installed (${WRANGLER_JS}); run npm install`);
  log(`temp dir ${tmpRoot}${QUICK ? " (--quick)" : ""}`);
  // The production build first: its output is also what benchmark 1 serves.
  const bundleR = await benchBundle();
  const execR = await benchExec(bundleR.withTs);
  const vmR = await benchVm();
  const elapsedS = (performance.now() - START) / 1000;
  const md = report({ execR, vmR, bundleR, elapsedS });
  if (WRITE) {
    fs.writeFileSync(OUTPUT, md + "\n");
    log(`wrote ${path.relative(process.cwd(), OUTPUT) || OUTPUT}`);
  }
  console.log("\n" + md);
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(`bench: FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
  },
);
