#!/usr/bin/env node
/**
 * Runs one experiment of this folder in Node: bundles `<name>.ts` (it imports the project's
 * TypeScript sources and JSON fixtures) with esbuild into bench/out/ and executes it.
 *
 *   node bench/experiments/run.mjs static-vectors [args…]
 */
import { spawnSync } from "node:child_process";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const name = process.argv[2];
if (!name || !/^[a-z0-9-]+$/.test(name)) {
  console.error("usage: node bench/experiments/run.mjs <experiment> [args…]");
  process.exit(2);
}
const outfile = resolve(here, "../out", `experiment-${name}.mjs`);
await build({ entryPoints: [join(here, `${name}.ts`)], bundle: true, platform: "node", format: "esm", outfile, logLevel: "warning" });
const child = spawnSync(process.execPath, [outfile, ...process.argv.slice(3)], { stdio: "inherit", cwd: resolve(here, "../..") });
process.exit(child.status ?? 1);
