/**
 * Where an `exec` of a trivial cell spends its CPU inside workerd: serves an unminified
 * `wrangler deploy --dry-run` build of the production worker with Miniflare and the V8 inspector
 * on, warms the session up, then takes a sampling CPU profile over N back-to-back execs (the
 * bench's own load: one session, one turn, keep-alive fetch) and prints self and inclusive time
 * per function, per exec. workerd's clock only advances on I/O in production, but the inspector's
 * sampler uses the real clock, so this is the in-isolate breakdown the bench cannot take.
 *
 * With the inspector attached, every console line also goes to it, which costs more than the
 * request: `--nolog` builds with the log sink a no-op, to see the rest.
 *
 *   node bench/experiments/profile-exec.mjs [--n=400] [--code='return 1 + 2'] [--keep=/tmp/exec.cpuprofile] [--refused] [--nolog] [--alloc]
 *
 * `--alloc`: the V8 heap's sampled allocations instead (collected ones too), by allocating function.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const arg = (name, dflt) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? dflt;
const N = Number(arg("n", "400"));
const CODE = arg("code", "return 1 + 2");
const KEEP = arg("keep", "");
const TOP = Number(arg("top", "45"));

const outdir = fs.mkdtempSync(path.join(os.tmpdir(), "execprof-"));
const built = spawnSync(
  process.execPath,
  [path.join(ROOT, "node_modules/wrangler/bin/wrangler.js"), "deploy", "--dry-run", "--outdir", outdir, "--minify=false"],
  {
    cwd: ROOT,
    encoding: "utf8",
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "1" },
  },
);
if (built.status !== 0) throw new Error(`dry run failed:\n${built.stdout}\n${built.stderr}`);
if (process.argv.includes("--nolog")) {
  const entry = path.join(outdir, "index.js");
  const src = fs.readFileSync(entry, "utf8");
  const quiet = src.replace(/(consoleSink = )\(line, level\) => level === "error" \? console\.error\(line\) : console\.log\(line\);/, "$1() => {};");
  if (quiet === src) throw new Error("--nolog: consoleSink not found in the build");
  fs.writeFileSync(entry, quiet);
}

const requireFromWrangler = createRequire(path.join(ROOT, "node_modules", "wrangler", "package.json"));
const { Miniflare, convertV4MiniflareOptions } = await import(pathToFileURL(requireFromWrangler.resolve("miniflare")).href);
const modules = [{ type: "ESModule", path: path.join(outdir, "index.js") }];
for (const f of fs.readdirSync(outdir, { recursive: true }).map(String)) {
  if (f.endsWith(".wasm")) modules.push({ type: "CompiledWasm", path: path.join(outdir, f) });
  else if (f.endsWith(".mjs")) modules.push({ type: "ESModule", path: path.join(outdir, f) });
}
const inspectorPort = 9229 + Math.floor(Math.random() * 500);
const mf = new Miniflare(
  convertV4MiniflareOptions({
    host: "127.0.0.1",
    port: 0,
    inspectorPort,
    name: "gateway",
    modulesRoot: outdir,
    modules,
    compatibilityDate: "2026-11-01",
    compatibilityFlags: ["enable_request_signal"],
    bindings: { GATEWAY_TOKENS: JSON.stringify({ "prof-token": "prof" }) },
    durableObjects: {
      SESSIONS: { className: "SessionDurableObject", useSQLite: true },
      PRISTINE_IMAGES: { className: "PristineImageRegistry", useSQLite: true },
    },
  }),
);
try {
  const base = (await mf.ready).href.replace(/\/$/, "");
  const headers = { authorization: "Bearer prof-token", "content-type": "application/json" };
  const sid = `prof-${Date.now()}`;
  const opened = await (await fetch(`${base}/v1/sessions/${sid}/turns`, { method: "POST", headers, body: "{}" })).json();
  if (typeof opened.turnId !== "string") throw new Error(`open turn: ${JSON.stringify(opened)}`);
  const execUrl = `${base}/v1/sessions/${sid}/turns/${opened.turnId}/tools/exec`;
  // `--refused`: a refused `wait` instead (the Durable Object round trip without a VM), to subtract.
  const exec = process.argv.includes("--refused")
    ? async () => {
        const r = await (await fetch(execUrl.replace(/exec$/, "wait"), { method: "POST", headers, body: "{}" })).json();
        if (r.status !== "failed") throw new Error(JSON.stringify(r));
      }
    : async () => {
        const r = await (await fetch(execUrl, { method: "POST", headers, body: JSON.stringify({ code: CODE }) })).json();
        if (r.status !== "completed") throw new Error(JSON.stringify(r));
      };
  for (let i = 0; i < 100; i++) await exec();

  const targets = await (await fetch(`http://127.0.0.1:${inspectorPort}/json`)).json();
  const target = targets.find((t) => /gateway/.test(t.id ?? t.title ?? "")) ?? targets[0];
  const ws = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise((r, j) => ((ws.onopen = r), (ws.onerror = j)));
  let seq = 0;
  const waiting = new Map();
  ws.onmessage = (m) => {
    const msg = JSON.parse(String(m.data));
    if (msg.id && waiting.has(msg.id)) waiting.get(msg.id)(msg);
  };
  const send = (method, params = {}) =>
    new Promise((r) => {
      const id = ++seq;
      waiting.set(id, r);
      ws.send(JSON.stringify({ id, method, params }));
    });
  if (process.argv.includes("--alloc")) {
    // What the requests allocate on the V8 heap (collected or not), by the allocating function: what drives scavenges.
    await send("HeapProfiler.enable");
    await send("HeapProfiler.startSampling", {
      samplingInterval: 256,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
    for (let i = 0; i < N; i++) await exec();
    const { result } = await send("HeapProfiler.stopSampling");
    ws.close();
    reportAlloc(result.profile);
  } else {
    await send("Profiler.enable");
    await send("Profiler.setSamplingInterval", { interval: 50 });
    await send("Profiler.start");
    const t0 = performance.now();
    for (let i = 0; i < N; i++) await exec();
    const wall = performance.now() - t0;
    const { result } = await send("Profiler.stop");
    ws.close();
    const profile = result.profile;
    if (KEEP) fs.writeFileSync(KEEP, JSON.stringify(profile));
    report(profile, wall);
  }
} finally {
  await mf.dispose();
  fs.rmSync(outdir, { recursive: true, force: true });
}

function report(profile, wall) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const dt = new Map();
  for (let i = 0; i < profile.samples.length; i++) dt.set(i, (profile.timeDeltas[i + 1] ?? 0) / 1000);
  const self = new Map();
  const incl = new Map();
  const key = (n) => {
    const f = n.callFrame;
    return `${f.functionName || "(anon)"} ${path.basename(f.url || "")}:${f.lineNumber + 1}`;
  };
  let total = 0;
  let idle = 0;
  profile.samples.forEach((id, i) => {
    const ms = dt.get(i);
    const n = byId.get(id);
    const k = key(n);
    if (/\(idle\)|\(program\)/.test(k)) idle += ms;
    total += ms;
    self.set(k, (self.get(k) ?? 0) + ms);
    const seen = new Set();
    for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
      const kk = key(byId.get(cur));
      if (seen.has(kk)) continue;
      seen.add(kk);
      incl.set(kk, (incl.get(kk) ?? 0) + ms);
    }
  });
  const per = (ms) => (ms / N).toFixed(3);
  console.log(`${N} execs, wall ${wall.toFixed(0)} ms (${per(wall)} ms/exec); sampled ${per(total)} ms/exec, of which idle/program ${per(idle)}`);
  console.log("\nself time (ms per exec):");
  for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, TOP)) console.log(`${per(v).padStart(8)}  ${k}`);
  console.log("\ninclusive time (ms per exec):");
  for (const [k, v] of [...incl].sort((a, b) => b[1] - a[1]).slice(0, TOP * 2)) console.log(`${per(v).padStart(8)}  ${k}`);
}

function reportAlloc(profile) {
  const self = new Map();
  const incl = new Map();
  let total = 0;
  const key = (f) => `${f.functionName || "(anon)"} ${path.basename(f.url || "")}:${f.lineNumber + 1}`;
  const walk = (node, stack) => {
    const k = key(node.callFrame);
    const bytes = node.selfSize;
    total += bytes;
    self.set(k, (self.get(k) ?? 0) + bytes);
    const seen = new Set([...stack, k]);
    for (const s of seen) incl.set(s, (incl.get(s) ?? 0) + bytes);
    for (const c of node.children ?? []) walk(c, seen);
  };
  walk(profile.head, new Set());
  const per = (b) => (b / N / 1024).toFixed(2);
  console.log(`${N} requests: ${per(total)} KiB allocated per request (sampled)`);
  console.log("\nself (KiB per request):");
  for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, TOP)) console.log(`${per(v).padStart(8)}  ${k}`);
  console.log("\ninclusive (KiB per request):");
  for (const [k, v] of [...incl].sort((a, b) => b[1] - a[1]).slice(0, TOP)) console.log(`${per(v).padStart(8)}  ${k}`);
}
