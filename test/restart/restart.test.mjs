// A parked run survives a full gateway restart: park a cell on a client tool under
// `wrangler dev --persist-to DIR`, stop the process, start a new one over the same storage,
// deliver the client result and `wait`. The same gateway then takes a request whose body its client
// cuts short over a raw socket. Runs under node's test runner (npm test), not workerd.
import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { gatewayProcess } from "./gateway-process.mjs";

const persist = mkdtempSync(join(tmpdir(), "codemode-restart-"));
const port = 8800 + Math.floor(Math.random() * 150);
const gateway = gatewayProcess({ cwd: process.cwd(), port, persist, token: "restart-test-token", capture: true });
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

// A real socket is needed: only a peer that hangs up mid-body makes the runtime's body read fail.
test("a body its client cuts short is the client's failure (400 invalid_request), not an unhandled 500", { timeout: 60_000 }, async () => {
  const session = `cut-${Date.now()}`;
  const socket = connect(port, "127.0.0.1");
  await new Promise((resolve, reject) => socket.once("connect", resolve).once("error", reject));
  socket.write(
    [
      `POST /v1/sessions/${session}/turns HTTP/1.1`,
      "Host: 127.0.0.1",
      "Authorization: Bearer restart-test-token",
      "Content-Type: application/json",
      "Content-Length: 100",
      "",
      '{"agentId":',
    ].join("\r\n"),
  );
  await new Promise((r) => setTimeout(r, 300));
  socket.destroy();
  let record;
  for (const deadline = Date.now() + 30_000; !record && Date.now() < deadline; await new Promise((r) => setTimeout(r, 200)))
    record = gateway.records().find((r) => r.kind === "request" && r.sessionId === session);
  assert.ok(record, "the cut request's log record");
  assert.equal(record.status, 400);
  assert.equal(record.errorCode, "invalid_request");
  assert.deepEqual(
    gateway.records().filter((r) => r.kind === "host_error" && r.where === "http.unhandled"),
    [],
  );
  // The gateway serves the next request as usual.
  assert.equal((await post(`/v1/sessions/${session}/turns`, {})).status, 201);
});
