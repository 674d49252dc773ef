/**
 * Where workerd's CPU goes for `exec` and for a refused `wait`, by `perf` (Linux): an unminified
 * production build served by Miniflare with V8's perf map on, warmed up, then `perf record` of the
 * workerd process over N back-to-back execs and over N refused waits (same session, alternating
 * phases). Prints self time per symbol, per request, for both and the difference: what an exec
 * adds, JIT code, wasm, builtins and the runtime's C++ alike, without the inspector's distortion.
 *
 *   node bench/experiments/perf-exec.mjs [--n=3000] [--top=50] [--code='return 1 + 2']
 */
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Agent, request } from "node:http";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const arg = (name, dflt) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? dflt;
const N = Number(arg("n", "3000"));
const TOP = Number(arg("top", "50"));
const CODE = arg("code", "return 1 + 2");

const outdir = fs.mkdtempSync(path.join(os.tmpdir(), "perfexec-"));
const built = spawnSync(
  process.execPath,
  [path.join(ROOT, "node_modules/wrangler/bin/wrangler.js"), "deploy", "--dry-run", "--outdir", outdir, "--minify=false"],
  { cwd: ROOT, encoding: "utf8", env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "1" } },
);
if (built.status !== 0) throw new Error(`dry run failed:\n${built.stdout}\n${built.stderr}`);
// The log sink writes through workerd's console to this process: not what a deployed Worker pays.
const entry = path.join(outdir, "index.js");
const src = fs.readFileSync(entry, "utf8");
const quiet = src.replace(/(consoleSink = )\(line, level\) => level === "error" \? console\.error\(line\) : console\.log\(line\);/, "$1() => {};");
if (quiet === src) throw new Error("consoleSink not found in the build");
fs.writeFileSync(entry, quiet);

process.env.MINIFLARE_WORKERD_V8_FLAGS = "--perf-basic-prof";
const requireFromWrangler = createRequire(path.join(ROOT, "node_modules", "wrangler", "package.json"));
const { Miniflare, convertV4MiniflareOptions } = await import(pathToFileURL(requireFromWrangler.resolve("miniflare")).href);
const modules = [{ type: "ESModule", path: entry }];
for (const f of fs.readdirSync(outdir, { recursive: true }).map(String)) {
  if (f.endsWith(".wasm")) modules.push({ type: "CompiledWasm", path: path.join(outdir, f) });
  else if (f.endsWith(".mjs")) modules.push({ type: "ESModule", path: path.join(outdir, f) });
}
const workerds = () =>
  new Set(
    fs
      .readdirSync("/proc")
      .filter((p) => /^\d+$/.test(p) && fs.existsSync(`/proc/${p}/comm`) && fs.readFileSync(`/proc/${p}/comm`, "utf8").trim() === "workerd"),
  );
const before = workerds();
const mf = new Miniflare(
  convertV4MiniflareOptions({
    host: "127.0.0.1",
    port: 0,
    name: "gateway",
    unsafeDirectSockets: [{ host: "127.0.0.1", port: 0 }],
    modulesRoot: outdir,
    modules,
    compatibilityDate: "2026-11-01",
    compatibilityFlags: ["enable_request_signal"],
    bindings: { GATEWAY_TOKENS: JSON.stringify({ "perf-token": "perf" }) },
    durableObjects: {
      SESSIONS: { className: "SessionDurableObject", useSQLite: true },
      PRISTINE_IMAGES: { className: "PristineImageRegistry", useSQLite: true },
    },
    handleStructuredLogs: () => {},
  }),
);
const perfOut = [];
try {
  await mf.ready;
  const url = new URL((await mf.unsafeGetDirectURL("gateway")).href);
  const pid = [...workerds()].find((p) => !before.has(p));
  if (!pid) throw new Error("workerd not found");
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const headers = { authorization: "Bearer perf-token", "content-type": "application/json" };
  const send = (method, p, body) =>
    new Promise((resolve, reject) => {
      const req = request({ host: url.hostname, port: url.port, path: p, method, headers, agent }, (res) => {
        let data = "";
        res.setEncoding("utf8");
        res.on("data", (c) => (data += c));
        res.on("end", () => resolve(JSON.parse(data)));
      });
      req.on("error", reject);
      req.end(body);
    });
  const post = (p, body) => send("POST", p, body);
  const del = (p) => send("DELETE", p);
  const sid = `perf-${Date.now()}`;
  let turn = await post(`/v1/sessions/${sid}/turns`, "{}");
  const tools = () => `/v1/sessions/${sid}/turns/${turn.turnId}/tools`;
  const exec = async () => {
    const r = await post(`${tools()}/exec`, JSON.stringify({ code: CODE }));
    if (r.status !== "completed") throw new Error(JSON.stringify(r));
  };
  const wait = async () => {
    const r = await post(`${tools()}/wait`, "{}");
    if (r.status !== "failed") throw new Error(JSON.stringify(r));
  };
  for (let i = 0; i < 300; i++) {
    await exec();
    await wait();
  }
  // `--open`: a turn's opening (POST …/turns, then its DELETE, untimed by the bench but recorded here) in place of exec.
  const open = async () => {
    const t = await post(`/v1/sessions/${sid}/turns`, "{}");
    if (typeof t.turnId !== "string") throw new Error(JSON.stringify(t));
    const d = await del(`/v1/sessions/${sid}/turns/${t.turnId}`);
    if (d.deleted !== true && d.status !== undefined) throw new Error(JSON.stringify(d));
  };
  const phases = process.argv.includes("--open") ? { exec: open, wait } : { exec, wait };
  const selfs = {};
  for (const [name, fn] of Object.entries(phases)) {
    turn = await post(`/v1/sessions/${sid}/turns`, JSON.stringify({}));
    const file = path.join(outdir, `${name}.data`);
    perfOut.push(file);
    const rec = spawn(
      "perf",
      ["record", "-k", "CLOCK_MONOTONIC", "-F", "20000", ...(process.argv.includes("--graph") ? ["-g"] : []), "-p", String(pid), "-o", file],
      {
        stdio: "ignore",
      },
    );
    await new Promise((r) => setTimeout(r, 300));
    const t0 = performance.now();
    // Each request's span on CLOCK_MONOTONIC (perf's clock with -k): `--spans` keeps them beside the data.
    const spans = [];
    for (let i = 0; i < N; i++) {
      const a = process.hrtime.bigint();
      await fn();
      spans.push(`${a} ${process.hrtime.bigint()}`);
    }
    const wall = performance.now() - t0;
    if (process.argv.includes("--spans")) fs.writeFileSync(path.join(outdir, `${name}.spans`), spans.join("\n"));
    rec.kill("SIGINT");
    await new Promise((r) => rec.on("exit", r));
    const rep = spawnSync(
      "perf",
      ["report", "-i", file, "--no-children", "--sort", "dso,sym", "--stdio", "-F", "period,dso,sym", "--percent-limit", "0", "-t", "|"],
      {
        encoding: "utf8",
        maxBuffer: 1 << 28,
      },
    );
    const self = new Map();
    let total = 0;
    for (const line of rep.stdout.split("\n")) {
      const m = /^\s*(\d+)\s*\|([^|]*)\|\s*\[[^\]]+\]\s+(.*)$/.exec(line);
      if (!m) continue;
      m[2] = m[2].trim().replace(/^\[JIT\].*/, "JIT");
      const period = Number(m[1]);
      // Ticks in ns (cpu-clock) or cycles: turned into ms per request below by the total's share.
      const sym = `${m[3]
        .trim()
        .replace(/^JS:[*~^+]?'?/, "")
        .slice(0, 90)} [${m[2].replace(/.*\//, "")}]`;
      self.set(sym, (self.get(sym) ?? 0) + period);
      total += period;
    }
    selfs[name] = { self, total, wall };
    console.log(`${name}: ${N} in ${wall.toFixed(0)} ms wall (${(wall / N).toFixed(3)} ms each), ${total} samples period`);
  }
  // Periods are cycles: scale both to ms by the exec phase's cycles per ms of workerd CPU is unknown,
  // so report shares of each request in "units per request" normalized to the wait's total per request.
  const per = (name, sym) => (selfs[name].self.get(sym) ?? 0) / N;
  const unit = selfs.wait.total / N; // one refused wait = 1.000
  console.log(`\nper request, in refused waits (1.000 = one wait's workerd CPU); exec total ${(selfs.exec.total / N / unit).toFixed(3)}`);
  const syms = new Set([...selfs.exec.self.keys(), ...selfs.wait.self.keys()]);
  const rows = [...syms].map((s) => [s, per("exec", s) / unit, per("wait", s) / unit]);
  rows.sort((a, b) => b[1] - b[2] - (a[1] - a[2]));
  console.log("  exec    wait    diff  symbol");
  for (const [s, e, w] of rows.slice(0, TOP))
    console.log(`${e.toFixed(3).padStart(6)} ${w.toFixed(3).padStart(7)} ${(e - w).toFixed(3).padStart(7)}  ${s}`);
  const byDso = (name) => {
    const m = new Map();
    for (const [s, v] of selfs[name].self) {
      const d = s.replace(/.*\[(.*)\]$/, "$1");
      m.set(d, (m.get(d) ?? 0) + v / N / unit);
    }
    return m;
  };
  const de = byDso("exec");
  const dw = byDso("wait");
  console.log("\nby object:");
  for (const d of new Set([...de.keys(), ...dw.keys()]))
    console.log(
      `${(de.get(d) ?? 0).toFixed(3).padStart(6)} ${(dw.get(d) ?? 0).toFixed(3).padStart(7)} ${((de.get(d) ?? 0) - (dw.get(d) ?? 0)).toFixed(3).padStart(7)}  ${d}`,
    );
} finally {
  await mf.dispose();
  if (process.argv.includes("--keep")) console.log(`kept ${outdir}`);
  else fs.rmSync(outdir, { recursive: true, force: true });
}
