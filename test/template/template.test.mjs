// templates/starter, the folder a user copies: it builds against the package by name
// (`wrangler deploy --dry-run`), and under `wrangler dev` a cell writes a note through its D1 tool,
// reads it back, and round-trips a setting through its KV tool. The template resolves
// `codemode-edge` through node_modules/codemode-edge, linked here to this repo (what
// `npm install` makes of its `file:../..` dependency). Runs under node's test runner.
import { execFileSync } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { gatewayProcess } from "../restart/gateway-process.mjs";

const root = fileURLToPath(new URL("../..", import.meta.url));
const template = join(root, "templates/starter");
const wrangler = join(root, "node_modules/.bin/wrangler");
const link = join(template, "node_modules/codemode-edge");
const TOKEN = "template-test-token";
const scratch = mkdtempSync(join(tmpdir(), "codemode-template-"));
const env = { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH}`, WRANGLER_SEND_METRICS: "false" };
process.env.PATH = env.PATH;
let linked = false;
let createdModules = false;
let running = null;

function run(args) {
  return execFileSync(wrangler, args, { cwd: template, env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

before(() => {
  // The package's TypeScript compiler module is generated (git-ignored); the repo builds it before its tests.
  execFileSync(process.execPath, [join(root, "scripts/build-typescript-module.mjs")], { cwd: root, env });
  if (!existsSync(link)) {
    createdModules = !existsSync(dirname(link));
    mkdirSync(dirname(link), { recursive: true });
    symlinkSync("../../..", link, "dir");
    linked = true;
  }
  assert.ok(lstatSync(link).isSymbolicLink() || existsSync(join(link, "package.json")), "codemode-edge is installed in the template");
});

after(async () => {
  await running?.stop();
  if (linked) rmSync(link);
  if (createdModules) rmSync(dirname(link), { recursive: true, force: true });
  rmSync(scratch, { recursive: true, force: true });
});

test("the template builds for deploy against the package by name, with its D1 and KV bindings", { timeout: 60_000 }, () => {
  const out = join(scratch, "dist");
  const log = run(["deploy", "--dry-run", "--outdir", out]);
  assert.match(log, /env\.DB \(starter-db\)\s+D1 Database/);
  assert.match(log, /env\.KV \(\w+\)\s+KV Namespace/);
  assert.match(log, /env\.SESSIONS \(SessionDurableObject\)\s+Durable Object/);
  assert.ok(readdirSync(out).includes("index.js"), "the Worker bundle is written");
  assert.ok(
    readdirSync(out).some((f) => f.endsWith("quickjs.wasm")),
    "the QuickJS module ships with it",
  );
});

test("a cell in the template's gateway writes and reads a note in D1 and a setting in KV", { timeout: 120_000 }, async () => {
  const persist = join(scratch, "state");
  run(["d1", "migrations", "apply", "DB", "--local", "--persist-to", persist]);
  running = gatewayProcess({ cwd: template, port: await freePort(), persist, token: TOKEN, wrangler });
  await running.start();

  const turns = "/v1/sessions/starter/turns";
  const opened = await running.post(turns, {});
  assert.equal(opened.status, 201, JSON.stringify(opened.json));
  assert.equal(opened.json.codeModeEngaged, true);
  const cell = await running.post(`${turns}/${opened.json.turnId}/tools/exec`, {
    code:
      "const added = await notes_add({ text: 'buy milk' });" +
      "const listed = await notes_list({});" +
      "await setting_put({ key: 'theme', value: 'dark' });" +
      "const theme = await setting_get({ key: 'theme' });" +
      "const missing = await setting_get({ key: 'nope' });" +
      "return { added: { id: added.id, text: added.text }, listed: listed.map((n) => [n.id, n.text]), theme, missing };",
  });
  assert.equal(cell.status, 200, JSON.stringify(cell.json));
  assert.equal(cell.json.status, "completed", JSON.stringify(cell.json));
  assert.deepEqual(cell.json.value, {
    added: { id: 1, text: "buy milk" },
    listed: [[1, "buy milk"]],
    theme: { key: "theme", value: "dark" },
    missing: { key: "nope", value: null },
  });
});
