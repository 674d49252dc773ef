#!/usr/bin/env node
/**
 * The layer check `npm test` runs: data flows one way (README, "Layout"). It reads every import of
 * src/ and durable-objects/ as text and fails, naming file and line, on:
 *  - an import against the declared layer order (a lower folder importing a higher one),
 *  - a deep import across folders (another folder's module instead of its index.ts),
 *  - `export *` in an index file (a folder's surface lists its names),
 *  - src/ importing durable-objects/ (only the composition root, src/gateway.ts, assembles the two),
 *  - an import cycle between folders.
 * `--list` prints the folders with their layer.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const root = resolve(dirname(new URL(import.meta.url).pathname), "..");

/**
 * Top to bottom. A folder may import folders of lower layers only (same line = peers that must not
 * import each other). The Worker edge calls the session Durable Object through the contract in
 * src/session; the object delegates to the turn service and the agent loop, which run cells; cells
 * run VMs; VMs reach tools through the bridge.
 */
const LAYERS = [
  ["src/ai"],
  ["src/client"],
  ["src/index.ts"],
  ["src/public.ts"],
  ["src/gateway.ts"],
  ["src/mcp-server", "src/facades"],
  ["src/http"],
  ["durable-objects/session", "durable-objects/images"],
  ["durable-objects/sql.ts"],
  ["src/session"],
  ["src/swarm"],
  ["src/agent"],
  ["src/runs"],
  ["src/providers"],
  ["src/turns"],
  ["src/cell", "src/policy", "src/tool-search", "src/plugins"],
  ["src/catalog", "src/config"],
  ["src/mcp", "src/snapshot-store", "src/source"],
  ["src/bridge", "src/tools"],
  ["src/runtime"],
  ["src/observability", "src/quota"],
  [
    "src/code-mode",
    "src/js-tokens",
    "src/errors",
    "src/guest-names.ts",
    "src/limits.ts",
    "src/version.ts",
    "src/typescript-module.ts",
    "wasm/quickjs.ts",
  ],
];
/**
 * Client-side folders (the package's `./client` and `./ai` exports, bundled into browsers and apps):
 * they may import the rest of src/ for its types only (`import type`), so no server code reaches a
 * client bundle; runtime imports only of the folders listed.
 */
const TYPE_ONLY = new Map([
  ["src/client", []],
  ["src/ai", ["src/client"]],
]);
/** The composition root: it wires the Worker and the Durable Object classes together. */
const COMPOSITION_ROOT = "src/gateway.ts";

function walk(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...walk(p));
    else if (/\.(ts|mts)$/.test(name) && !/\.d\.m?ts$/.test(name)) out.push(p);
  }
  return out;
}

const rank = new Map();
LAYERS.forEach((layer, i) => layer.forEach((m) => rank.set(m, i)));

/** The module (folder or single file) a repo-relative path belongs to. */
function moduleOf(rel) {
  for (const m of rank.keys()) if (rel === m || rel.startsWith(m + "/")) return m;
  return undefined;
}

const IMPORT = /^\s*(?:import|export)\s[^;]*?\sfrom\s+["']([^"']+)["']|^\s*import\s+["']([^"']+)["']/gm;

const problems = [];
const edges = new Map();
const files = [...walk(join(root, "src")), ...walk(join(root, "durable-objects"))];
for (const file of files) {
  const rel = relative(root, file);
  const from = moduleOf(rel);
  const text = readFileSync(file, "utf8");
  if (from === undefined) {
    problems.push(`${rel}: not in any declared layer (add its folder to LAYERS in scripts/check-boundaries.mjs)`);
    continue;
  }
  if (/\/index\.ts$/.test(rel) && /^\s*export\s*\*\s*from/m.test(text)) problems.push(`${rel}: \`export *\` — an index lists its names`);
  for (const m of text.matchAll(IMPORT)) {
    const spec = m[1] ?? m[2];
    if (!spec.startsWith(".")) continue;
    const line = text.slice(0, m.index).split("\n").length + (m[0].match(/^\s*/)[0].split("\n").length - 1);
    const target = relative(root, resolve(dirname(file), spec));
    const to = moduleOf(target) ?? moduleOf(target + ".ts");
    if (to === undefined || to === from) continue;
    const where = `${rel}:${line}`;
    if (from.startsWith("src/") && to.startsWith("durable-objects/") && from !== COMPOSITION_ROOT)
      problems.push(`${where}: src/ imports ${to} (only ${COMPOSITION_ROOT} may)`);
    const single = to.endsWith(".ts");
    if (!single && target !== to && target !== `${to}/index` && target !== `${to}/index.ts`)
      problems.push(`${where}: deep import of ${target} (import from ${to}, its index)`);
    if (TYPE_ONLY.has(from) && !TYPE_ONLY.get(from).includes(to) && !/^\s*(?:import|export)\s+type\s/.test(m[0]))
      problems.push(`${where}: ${from} imports ${to} at run time (client code imports the server's types only: \`import type\`)`);
    if (rank.get(to) <= rank.get(from))
      problems.push(`${where}: ${from} (layer ${rank.get(from)}) imports ${to} (layer ${rank.get(to)}): against the layer order`);
    if (!edges.has(from)) edges.set(from, new Set());
    edges.get(from).add(to);
  }
}

// Cycles between modules (whatever the layers say).
const state = new Map();
const stack = [];
function visit(m) {
  state.set(m, 1);
  stack.push(m);
  for (const n of edges.get(m) ?? []) {
    if (state.get(n) === 1) problems.push(`import cycle: ${[...stack.slice(stack.indexOf(n)), n].join(" → ")}`);
    else if (!state.has(n)) visit(n);
  }
  stack.pop();
  state.set(m, 2);
}
for (const m of edges.keys()) if (!state.has(m)) visit(m);

if (process.argv.includes("--list")) LAYERS.forEach((l, i) => console.log(`${i}: ${l.join(", ")}`));
if (problems.length > 0) {
  console.error(`check-boundaries: ${problems.length} problem(s)\n` + problems.map((p) => `  ${p}`).join("\n"));
  process.exit(1);
}
