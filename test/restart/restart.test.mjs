// A parked run survives a full gateway restart: park a cell on a client tool under
// `wrangler dev --persist-to DIR`, stop the process, start a new one over the same storage,
// deliver the client result and `wait`. Runs under node's test runner (npm test), not workerd.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import assert from "node:assert/strict";

const TOKEN = "restart-test-token";
const PORT = 8800 + Math.floor(Math.random() * 150);
const BASE = `http://127.0.0.1:${PORT}`;
const persist = mkdtempSync(join(tmpdir(), "codemode-restart-"));
let child = null;

function start() {
  child = spawn(
    "npx",
    ["wrangler", "dev", "--ip", "127.0.0.1", "--port", String(PORT), "--persist-to", persist, "--var", `GATEWAY_TOKENS:{"${TOKEN}":"restart"}`],
    { stdio: "ignore", detached: true, env: { ...process.env, WRANGLER_SEND_METRICS: "false" } },
  );
  return waitHealthy();
}

async function stop() {
  if (!child) return;
  const pid = child.pid;
  const exited = new Promise((r) => child.once("exit", r));
  try {
    process.kill(-pid, "SIGTERM");
  } catch {}
  await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
  try {
    process.kill(-pid, "SIGKILL");
  } catch {}
  child = null;
}

async function waitHealthy() {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    try {
      const r = await fetch(`${BASE}/healthz`);
      if (r.ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error("gateway did not start");
}

async function post(path, body) {
  const r = await fetch(`${BASE}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: r.status, json: await r.json() };
}

after(async () => {
  await stop();
  rmSync(persist, { recursive: true, force: true });
});

test("a parked cell resumes after the gateway process restarts", { timeout: 150_000 }, async () => {
  await start();
  const turns = "/v1/sessions/restart/turns";
  const opened = await post(turns, { clientTools: [{ name: "ask_user" }] });
  assert.equal(opened.status, 201);
  const turn = `${turns}/${opened.json.turnId}`;
  const parked = await post(`${turn}/tools/exec`, {
    code: "const before = [1, 2, 3].map((x) => x * 10); text('parked'); const name = await ask_user({ q: 'name?' }); return { before, name };",
  });
  assert.equal(parked.json.status, "waiting");
  const [call] = parked.json.pendingToolCalls;
  assert.equal(call.tool, "ask_user");

  await stop();
  await start();

  const delivered = await post(`${turn}/client-results`, { callId: call.callId, value: "Ada" });
  assert.equal(delivered.status, 202);
  const done = await post(`${turn}/tools/wait`, { runId: parked.json.runId });
  assert.deepEqual(done.json.value, { before: [10, 20, 30], name: "Ada" });
  assert.equal(done.json.status, "completed");
  const again = await post(`${turn}/tools/wait`, { runId: parked.json.runId });
  assert.equal(again.json.error, "code mode run is unavailable or expired.");
});
