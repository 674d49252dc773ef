// A parked run survives a full gateway restart: park a cell on a client tool under
// `wrangler dev --persist-to DIR`, stop the process, start a new one over the same storage,
// deliver the client result and `wait`. Runs under node's test runner (npm test), not workerd.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { gatewayProcess } from "./gateway-process.mjs";

const persist = mkdtempSync(join(tmpdir(), "codemode-restart-"));
const gateway = gatewayProcess({ cwd: process.cwd(), port: 8800 + Math.floor(Math.random() * 150), persist, token: "restart-test-token" });
const { post } = gateway;

after(async () => {
  await gateway.stop();
  rmSync(persist, { recursive: true, force: true });
});

test("a parked cell resumes after the gateway process restarts", { timeout: 150_000 }, async () => {
  await gateway.start();
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

  await gateway.stop();
  await gateway.start();

  const delivered = await post(`${turn}/client-results`, { callId: call.callId, value: "Ada" });
  assert.equal(delivered.status, 202);
  const done = await post(`${turn}/tools/wait`, { runId: parked.json.runId });
  assert.deepEqual(done.json.value, { before: [10, 20, 30], name: "Ada" });
  assert.equal(done.json.status, "completed");
  const again = await post(`${turn}/tools/wait`, { runId: parked.json.runId });
  assert.equal(again.json.error, "code mode run is unavailable or expired.");
});
