// A parked run survives a deploy that changes the prelude: park a cell on a client tool under
// `wrangler dev --persist-to DIR`, stop, then start a *rebuilt* gateway (a copy of the project
// whose guest prelude has one more statement, so its pristine image and digest differ) over the
// same storage, deliver the client result and `wait`: the old VM is rebuilt from the old build's
// image (kept in the image registry object), runs on, parks again under the new build, and
// completes with the values the original program computed. Runs under node's test runner.
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { gunzipSync } from "node:zlib";
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { durableObjectFiles, gatewayProcess } from "./gateway-process.mjs";

const TOKEN = "deploy-test-token";
const PORT = 8950 + Math.floor(Math.random() * 40);
const persist = mkdtempSync(join(tmpdir(), "codemode-deploy-"));
const rebuilt = mkdtempSync(join(tmpdir(), "codemode-rebuilt-"));
let running = null;

after(async () => {
  await running?.stop();
  rmSync(persist, { recursive: true, force: true });
  rmSync(rebuilt, { recursive: true, force: true });
});

/** The project as another build: same code, plus one harmless statement inside the prelude. */
function rebuildWithChangedPrelude() {
  for (const entry of ["src", "durable-objects", "wasm", "scripts", "wrangler.toml", "package.json", "tsconfig.json"]) {
    cpSync(join(process.cwd(), entry), join(rebuilt, entry), { recursive: true });
  }
  symlinkSync(join(process.cwd(), "node_modules"), join(rebuilt, "node_modules"), "dir");
  const file = join(rebuilt, "src/runtime/guest-prelude.ts");
  const source = readFileSync(file, "utf8");
  const start = "export const GUEST_PRELUDE = String.raw`";
  assert.ok(source.includes(start), "the prelude source moved; update this test");
  writeFileSync(file, source.replace(start, `${start}\nvoid ["rebuilt", "prelude"].join("-");`));
}

function readRows(file, query) {
  const db = new DatabaseSync(file, { readOnly: true });
  try {
    return db.prepare(query).all();
  } finally {
    db.close();
  }
}

/** Digests in the image registry object's SQLite (read with the gateway stopped). */
function registeredDigests() {
  const files = durableObjectFiles(persist, "PristineImageRegistry");
  assert.equal(files.length, 1, "one registry object");
  return readRows(files[0], "SELECT digest FROM images ORDER BY registered_at").map((r) => r.digest);
}

/** The stored snapshot header of the one parked run (read with the gateway stopped). */
function parkedHeader() {
  const files = durableObjectFiles(persist, "SessionDurableObject");
  assert.equal(files.length, 1, "one session object");
  const chunks = readRows(files[0], "SELECT data FROM run_chunks ORDER BY run_id, seq");
  const raw = gunzipSync(Buffer.concat(chunks.map((c) => Buffer.from(c.data))));
  return JSON.parse(raw.subarray(4, 4 + raw.readUInt32LE(0)).toString("utf8"));
}

async function run(cwd) {
  running = gatewayProcess({ cwd, port: PORT, persist, token: TOKEN });
  await running.start();
  return running;
}

test("a parked cell resumes after a deploy that changed the prelude", { timeout: 240_000 }, async () => {
  let gateway = await run(process.cwd());
  const turns = "/v1/sessions/deploy/turns";
  const opened = await gateway.post(turns, { clientTools: [{ name: "ask_user" }] });
  assert.equal(opened.status, 201);
  const turn = `${turns}/${opened.json.turnId}`;
  const parked = await gateway.post(`${turn}/tools/exec`, {
    code:
      "const before = [1, 2, 3].map((x) => x * 10); const name = await ask_user({ q: 'name?' });" +
      " const city = await ask_user({ q: 'city?' }); return { before, name, city };",
  });
  assert.equal(parked.json.status, "waiting");
  const [first] = parked.json.pendingToolCalls;
  await gateway.stop();

  // The first build parked against its own image, which the registry now keeps.
  const oldHeader = parkedHeader();
  assert.equal(oldHeader.v, 2);
  assert.equal(oldHeader.base.kind, "image");
  assert.deepEqual(registeredDigests(), [oldHeader.base.digest]);

  rebuildWithChangedPrelude();
  gateway = await run(rebuilt);
  assert.equal((await gateway.post(`${turn}/client-results`, { callId: first.callId, value: "Ada" })).status, 202);
  // The old VM (old prelude, in its own memory) resumes and parks again on the second question.
  const again = await gateway.post(`${turn}/tools/wait`, { runId: parked.json.runId });
  assert.equal(again.json.status, "waiting", JSON.stringify(again.json));
  const [second] = again.json.pendingToolCalls;
  assert.deepEqual(second.input, { q: "city?" });
  assert.equal((await gateway.post(`${turn}/client-results`, { callId: second.callId, value: "Paris" })).status, 202);
  const done = await gateway.post(`${turn}/tools/wait`, { runId: again.json.runId });
  assert.equal(done.json.status, "completed", JSON.stringify(done.json));
  assert.deepEqual(done.json.value, { before: [10, 20, 30], name: "Ada", city: "Paris" });
  await gateway.stop();

  // The rebuilt gateway's image really differs: re-parking registered a second digest.
  const digests = registeredDigests();
  assert.equal(digests.length, 2);
  assert.equal(digests[0], oldHeader.base.digest);
  assert.notEqual(digests[1], digests[0]);
});
