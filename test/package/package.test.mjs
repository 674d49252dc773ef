// The npm package: what `npm pack` ships (what a Worker needs, nothing else) and that the package's
// `exports` entry resolves, in this repo and from a consumer's node_modules. Runs under node's test
// runner; that the entry's names load in workerd is test/unit/package-surface.test.ts.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { after, before, test } from "node:test";
import assert from "node:assert/strict";

const root = fileURLToPath(new URL("../..", import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const scratch = mkdtempSync(join(tmpdir(), "codemode-pack-"));
after(() => rmSync(scratch, { recursive: true, force: true }));
// dist/client.mjs and dist/ai.mjs (the ./client and ./ai exports) are built, git-ignored: prepack builds them.
before(async () => (await import("../../scripts/build-client.mjs")).buildClient());

/** `npm pack` without lifecycle scripts (`prepare` writes this repo's .dev.vars; its output is not JSON). */
function pack(...args) {
  const out = execFileSync("npm", ["pack", "--json", "--ignore-scripts", ...args], {
    cwd: root,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
  return JSON.parse(out)[0];
}

test("the package is publishable under the MIT license", () => {
  assert.equal(pkg.name, "codemode-edge");
  assert.notEqual(pkg.private, true);
  assert.equal(pkg.license, "MIT");
  const license = readFileSync(join(root, "LICENSE"), "utf8");
  assert.match(license, /^MIT License/);
  assert.match(license, /Copyright \(c\) 2026 codemode-edge contributors/);
});

test("installing the package runs none of this repo's dev setup", () => {
  // npm runs preinstall/install/postinstall in a consumer's install; `prepare` only runs here.
  for (const script of ["preinstall", "install", "postinstall"]) assert.equal(pkg.scripts?.[script], undefined, script);
  assert.equal(pkg.scripts.prepare, "node scripts/setup-dev.mjs");
});

test("npm pack ships the Worker's sources, the engine and its loader, the compiler module, the config schema, the license, the README and docs, and no tests, benchmarks or scripts", () => {
  const files = pack("--dry-run").files.map((f) => f.path);
  for (const needed of [
    "package.json",
    "LICENSE",
    "README.md",
    "src/public.ts",
    "src/gateway.ts",
    "src/index.ts",
    "wasm/quickjs.ts",
    "wasm/wasm.d.ts",
    // The engine with its stack low-water mark (scripts/instrument-quickjs.mjs).
    "wasm/quickjs.wasm",
    "docs/README.md",
    // The TypeScript compiler's own module (generated, git-ignored; prepack and npm test build it).
    "src/generated/typescript.mjs",
    "schema/codemode-config.schema.json",
  ])
    assert.ok(files.includes(needed), `${needed} is packed`);
  assert.ok(
    files.some((f) => f.startsWith("durable-objects/session/")),
    "the session object is packed",
  );
  assert.ok(
    files.some((f) => f.startsWith("durable-objects/images/")),
    "the image registry is packed",
  );
  for (const built of ["dist/client.mjs", "dist/ai.mjs", "src/client/index.ts", "src/ai/index.ts", "docs/client.md"])
    assert.ok(files.includes(built), `${built} is packed`);
  const stray = files.filter(
    (f) => !/^(src|dist|durable-objects|wasm|docs|schema)\//.test(f) && !["package.json", "LICENSE", "README.md"].includes(f),
  );
  assert.deepEqual(stray, []);
  for (const dir of ["test/", "bench/", "scripts/", "node_modules/", ".wrangler/"])
    assert.deepEqual(
      files.filter((f) => f.startsWith(dir)),
      [],
      dir,
    );
  assert.ok(!files.includes(".dev.vars") && !files.includes("wrangler.toml"));
});

test("the package name resolves to the public entry inside this repo (self-reference through exports)", () => {
  assert.deepEqual(pkg.exports["."], { types: "./src/public.ts", default: "./src/public.ts" });
  assert.equal(import.meta.resolve("codemode-edge"), pathToFileURL(join(root, "src/public.ts")).href);
});

test("a consumer that installs the tarball resolves the package name to a file the tarball holds", () => {
  const { filename } = pack("--pack-destination", scratch);
  const installed = join(scratch, "consumer", "node_modules", "codemode-edge");
  mkdirSync(installed, { recursive: true });
  execFileSync("tar", ["-xzf", join(scratch, filename), "-C", installed, "--strip-components=1"]);
  writeFileSync(join(scratch, "consumer", "package.json"), JSON.stringify({ name: "consumer", type: "module", private: true }));
  const probe = join(scratch, "consumer", "probe.mjs");
  writeFileSync(probe, 'process.stdout.write(import.meta.resolve("codemode-edge"));');
  const resolved = execFileSync(process.execPath, [probe], { cwd: join(scratch, "consumer"), encoding: "utf8" });
  assert.equal(resolved, pathToFileURL(join(installed, "src/public.ts")).href);
  assert.ok(existsSync(fileURLToPath(resolved)));
  const entry = readFileSync(fileURLToPath(resolved), "utf8");
  assert.match(entry, /export \{ createGateway\b/);
  assert.match(entry, /export \{ defineToolPlugin\b/);
});

test("./client and ./ai are exports with their types, and ai is an optional peer dependency of ./ai", () => {
  assert.deepEqual(pkg.exports["./client"], { types: "./src/client/index.ts", default: "./dist/client.mjs" });
  assert.deepEqual(pkg.exports["./ai"], { types: "./src/ai/index.ts", default: "./dist/ai.mjs" });
  assert.equal(pkg.peerDependencies.ai, ">=7.0.173 <8");
  assert.deepEqual(pkg.peerDependenciesMeta.ai, { optional: true });
  assert.equal(pkg.dependencies.ai, undefined);
});

test("the client bundle holds no server code and imports nothing; the ai bundle imports only the ai package", () => {
  const client = readFileSync(join(root, "dist/client.mjs"), "utf8");
  assert.doesNotMatch(client, /^\s*import\b/m);
  assert.doesNotMatch(client, /\bimport\(|require\(/);
  for (const server of ["quickjs", "DurableObject", "cloudflare:", "node:", "createGateway", "hono"]) assert.ok(!client.includes(server), server);
  const ai = readFileSync(join(root, "dist/ai.mjs"), "utf8");
  assert.deepEqual(
    [...ai.matchAll(/^import .* from "([^"]+)";$/gm)].map((m) => m[1]),
    ["ai"],
  );
  assert.ok(!ai.includes("quickjs") && !ai.includes("DurableObject"));
});

test("a consumer's plain Node runs codemode-edge/client from the tarball (no TypeScript step), failures as values", () => {
  const { filename } = pack("--pack-destination", scratch);
  const dir = join(scratch, "client-consumer");
  const installed = join(dir, "node_modules", "codemode-edge");
  mkdirSync(installed, { recursive: true });
  execFileSync("tar", ["-xzf", join(scratch, filename), "-C", installed, "--strip-components=1"]);
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "client-consumer", type: "module", private: true }));
  const probe = join(dir, "probe.mjs");
  writeFileSync(
    probe,
    `import { createClient } from "codemode-edge/client";
     const seen = [];
     const fetch = async (url, init) => {
       seen.push([init.method, url, init.headers.authorization]);
       return url.endsWith("/healthz")
         ? Response.json({ ok: true, runtime: "quickjs-wasi", version: "x" })
         : Response.json({ error: { code: "rate_limited", message: "slow down" } }, { status: 429, headers: { "retry-after": "3" } });
     };
     const c = createClient({ baseUrl: "https://gw.example/", token: "t", fetch });
     const health = await c.health();
     const refused = await c.openTurn("s1");
     process.stdout.write(JSON.stringify({ health, refused, seen }));`,
  );
  const out = JSON.parse(execFileSync(process.execPath, [probe], { cwd: dir, encoding: "utf8" }));
  assert.deepEqual(out.health, { ok: true, value: { ok: true, runtime: "quickjs-wasi", version: "x" } });
  assert.deepEqual(out.refused, { ok: false, error: { code: "rate_limited", status: 429, message: "slow down", retryAfter: 3 } });
  assert.deepEqual(out.seen, [
    ["GET", "https://gw.example/healthz", "Bearer t"],
    ["POST", "https://gw.example/v1/sessions/s1/turns", "Bearer t"],
  ]);
});
