/**
 * Startup CPU A/B across builds: each argument is a `wrangler deploy --dry-run --outdir` output.
 * Every round starts a fresh workerd with one worker per build (each its own isolate) importing
 * that build's entry on its first request, plus a one-line module as floor, in an order that
 * rotates each round. CPU is the workerd process's (measure-startup.ts's way). Linux only.
 *
 *   node --experimental-strip-types bench/experiments/startup-ab.ts [--rounds=12] <outdir> [<outdir> …]
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { cpuMs, loadMiniflare, workerdPid } from "../harness/measure-startup.ts";
import { summarize } from "../harness/stats.ts";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const arg = (name: string, dflt: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? dflt;
const ROUNDS = Number(arg("rounds", "12"));
const outdirs = process.argv.slice(2).filter((a) => !a.startsWith("--"));
if (outdirs.length === 0) throw new Error("usage: startup-ab.ts [--rounds=N] <outdir> [<outdir> …]");

function modulesOf(outdir: string): { entry: string; modules: { type: string; path: string; contents: Uint8Array }[] } {
  const files = (fs.readdirSync(outdir, { recursive: true }) as unknown[])
    .map(String)
    .filter((f) => /\.(m?js|wasm)$/.test(f))
    .sort();
  const entry = files.find((f) => f.endsWith(".js") && !f.includes("/"));
  if (!entry) throw new Error(`${outdir}: no entry`);
  const modules = files.map((f) => ({
    type: f.endsWith(".wasm") ? "CompiledWasm" : "ESModule",
    path: f,
    contents: fs.readFileSync(path.join(outdir, f)),
  }));
  return { entry, modules };
}

const variants = [
  {
    label: "floor",
    entry: "floor.mjs",
    modules: [{ type: "ESModule", path: "floor.mjs", contents: new TextEncoder().encode("export const floor = 1;") }],
  },
  ...outdirs.map((d) => ({ label: path.basename(d), ...modulesOf(d) })),
];
const entryModule = (target: string) => ({
  type: "ESModule",
  path: "startup-entry.mjs",
  contents: new TextEncoder().encode(
    `export default { async fetch() { await import(${JSON.stringify(`./${target}`)}); return new Response("ok"); } };`,
  ),
});

const { Miniflare, convertV4MiniflareOptions } = await loadMiniflare(ROOT);
const samples = variants.map(() => [] as number[]);
const known = new Set<number>();
for (let round = 0; round < ROUNDS; round++) {
  const mf = new Miniflare(
    convertV4MiniflareOptions({
      workers: variants.map((v, i) => ({
        name: `v${i}`,
        compatibilityDate: "2026-11-01",
        compatibilityFlags: ["enable_request_signal"],
        modulesRoot: "/",
        modules: [entryModule(v.entry), ...v.modules],
      })),
      handleStructuredLogs: () => undefined,
    }),
  );
  try {
    await mf.ready;
    const pid = workerdPid(known);
    known.add(pid);
    const order = variants.map((_, i) => (i + round) % variants.length);
    for (const i of order) {
      const worker = await mf.getWorker(`v${i}`);
      const before = cpuMs(pid);
      const res = await worker.fetch("http://startup.ab/");
      const text = await res.text();
      if (res.status !== 200) throw new Error(`${variants[i]!.label}: ${res.status} ${text.slice(0, 300)}`);
      samples[i]!.push(cpuMs(pid) - before);
    }
  } finally {
    await mf.dispose();
  }
  process.stderr.write(`round ${round + 1}/${ROUNDS}\n`);
}
for (const [i, v] of variants.entries()) {
  const s = summarize(samples[i]!);
  const diff = i > 1 ? summarize(samples[i]!.map((x, r) => x - samples[1]![r]!)) : null;
  console.log(
    `${v.label.padEnd(28)} median ${s.median.toFixed(1)} ms (IQR ${s.q1.toFixed(1)}–${s.q3.toFixed(1)})` +
      (diff ? `; vs first build ${diff.median >= 0 ? "+" : ""}${diff.median.toFixed(1)} ms (IQR ${diff.q1.toFixed(1)}–${diff.q3.toFixed(1)})` : ""),
  );
}
