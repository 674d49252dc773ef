#!/usr/bin/env node
/**
 * `npm run bench`: entry of the codemode-edge benchmark harness (bench/harness/main.ts has the
 * map of the sections and modules). This file only makes sure the harness can run: wrangler
 * needs Node >= 22, and the harness modules are TypeScript run by Node's own type stripping
 * (on by default from Node 22.18; behind --experimental-strip-types from 22.6). `npm run`
 * puts the bundled node_modules/.bin/node (22.23) first on PATH.
 *
 *   npm run bench                     prints the report, writes bench/out/BENCHMARKS.md (git-ignored)
 *   npm run bench -- --write          also rewrites BENCHMARKS.md (full runs only)
 *   npm run bench -- --quick          smoke run with few samples
 *   npm run bench -- --only=exec      only some sections (exec, vm, bundle, suspend, catalog, toolsearch, mcp, chat, capacity, startup, swarm)
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const SELF = fileURLToPath(import.meta.url);
const BUNDLED_NODE = path.resolve(path.dirname(SELF), "..", "node_modules", ".bin", "node");
const STRIP_FLAG = "--experimental-strip-types";

function rerun(node, flags) {
  const r = spawnSync(node, [...flags, SELF, ...process.argv.slice(2)], { stdio: "inherit" });
  process.exit(r.status ?? 1);
}

const [major, minor] = process.versions.node.split(".").map(Number);
// process.features.typescript exists from Node 22.10; before that, the flag is the only sign.
const strips = Boolean(process.features.typescript) || process.execArgv.includes(STRIP_FLAG);
if (strips) {
  const { main } = await import("./harness/main.ts");
  main(process.argv.slice(2));
} else if (major >= 23 || (major === 22 && minor >= 6)) {
  rerun(process.execPath, [STRIP_FLAG, "--disable-warning=ExperimentalWarning"]);
} else if (fs.existsSync(BUNDLED_NODE) && fs.realpathSync(BUNDLED_NODE) !== fs.realpathSync(process.execPath)) {
  rerun(BUNDLED_NODE, []);
} else {
  console.error(`bench: Node ${process.versions.node} is too old (the harness needs >= 22.6, wrangler >= 22); run it with \`npm run bench\`.`);
  process.exit(1);
}
