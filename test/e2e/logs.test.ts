import { describe, expect, it } from "vitest";
import { linesSince, mark, recordsSince } from "../support/log-capture";
import { api, freshTurn, sessionId, sessionStub, sleep, TOKEN_A } from "./helpers";
import { failNextCodec } from "./session-controls";

/** One HTTP call through the Worker, with the request id the gateway sent back. */
const call = api;

const tool = (session: string, turnId: string, name: string) => `/v1/sessions/${session}/turns/${turnId}/tools/${name}`;

function recordsOf(from: number, kind: string, requestId: string) {
  return recordsSince(from).filter((r) => r.kind === kind && r.requestId === requestId);
}

/** The single record of `kind` for a request (fails when there are none or several). */
function onlyRecord(from: number, kind: string, requestId: string): Record<string, any> {
  const found = recordsOf(from, kind, requestId);
  expect(found, `${kind} records for request ${requestId}`).toHaveLength(1);
  return found[0]!;
}

describe("structured logs", () => {
  it("every request writes one request record: route pattern, status, tenant, ids, error code", async () => {
    const from = mark();
    const session = sessionId();
    const opened = await call("POST", `/v1/sessions/${session}/turns`, {});
    expect(opened.status).toBe(201);
    const turnId = opened.json.turnId;
    const ran = await call("POST", tool(session, turnId, "exec"), { code: "return 1" });
    const unknownTurn = await call("POST", tool(session, "no-such-turn", "exec"), { code: "return 1" });
    const noToken = await call("POST", `/v1/sessions/${session}/turns`, {}, null);
    const badJson = await call("POST", tool(session, turnId, "exec"), "{not json");
    const noRoute = await call("GET", "/nope");
    const health = await call("GET", "/healthz");

    for (const r of [opened, ran, unknownTurn, noToken, badJson, noRoute, health]) expect(r.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set([opened, ran, unknownTurn, noToken, badJson, noRoute, health].map((r) => r.requestId)).size).toBe(7);

    expect(onlyRecord(from, "request", opened.requestId)).toMatchObject({
      method: "POST",
      route: "/v1/sessions/:sessionId/turns",
      status: 201,
      tenant: "tenant-a",
      sessionId: session,
      requestBytes: 2,
    });
    const exec = onlyRecord(from, "request", ran.requestId);
    expect(exec).toMatchObject({
      method: "POST",
      route: "/v1/sessions/:sessionId/turns/:turnId/tools/:toolName",
      status: 200,
      tenant: "tenant-a",
      sessionId: session,
      turnId,
      tool: "exec",
    });
    expect(exec.errorCode).toBeUndefined();
    expect(exec.durationMs).toBeGreaterThanOrEqual(0);
    expect(onlyRecord(from, "request", unknownTurn.requestId)).toMatchObject({ status: 404, errorCode: "not_found", tenant: "tenant-a" });
    const refused = onlyRecord(from, "request", noToken.requestId);
    expect(refused).toMatchObject({ status: 401, errorCode: "unauthorized", route: "/v1/sessions/:sessionId/turns" });
    expect(refused.tenant).toBeUndefined();
    expect(onlyRecord(from, "request", badJson.requestId)).toMatchObject({ status: 400, errorCode: "invalid_request" });
    expect(onlyRecord(from, "request", noRoute.requestId)).toMatchObject({ method: "GET", status: 404, errorCode: "not_found" });
    expect(onlyRecord(from, "request", health.requestId)).toMatchObject({ route: "/healthz", status: 200 });
  });

  it("one cell record per exec and wait: outcome, error code, run id, bridge counts, sizes, language", async () => {
    const { session, turnId } = await freshTurn({ agentId: "park" });
    const from = mark();

    const searched = await call("POST", tool(session, turnId, "exec"), {
      code: "const [h] = await catalog.search('get one shipment by id'); await h.describe(); return await shipping_list({});",
    });
    expect(searched.json.status).toBe("completed");
    const completed = onlyRecord(from, "cell", searched.requestId);
    expect(completed).toMatchObject({
      tool: "exec",
      tenant: "tenant-a",
      sessionId: session,
      turnId,
      outcome: "completed",
      bridge: { search: 1, describe: 1, call: 1 },
      language: "javascript",
    });
    expect(completed.resultBytes).toBe(new TextEncoder().encode(JSON.stringify(searched.json)).length);
    expect(completed.errorCode).toBeUndefined();
    expect(completed.runId).toBeUndefined();

    const parked = await call("POST", tool(session, turnId, "exec"), { code: "return await echo({ value: 7, delayMs: 600 })" });
    expect(parked.json.status).toBe("waiting");
    const waiting = onlyRecord(from, "cell", parked.requestId);
    expect(waiting).toMatchObject({
      tool: "exec",
      outcome: "waiting",
      reason: "pending_tools",
      runId: parked.json.runId,
      bridge: { search: 0, describe: 0, call: 1 },
    });
    expect(waiting.snapshotBytes).toBeGreaterThan(1000);

    await sleep(700);
    const resumed = await call("POST", tool(session, turnId, "wait"), { runId: parked.json.runId });
    expect(resumed.json).toMatchObject({ status: "completed", value: 7 });
    const waited = onlyRecord(from, "cell", resumed.requestId);
    expect(waited).toMatchObject({ tool: "wait", outcome: "completed", runId: parked.json.runId, bridge: { search: 0, describe: 0, call: 0 } });
    expect(waited.language).toBeUndefined();
    expect(waited.snapshotBytes).toBeUndefined();

    const invalid = await call("POST", tool(session, turnId, "exec"), { code: 42 });
    expect(onlyRecord(from, "cell", invalid.requestId)).toMatchObject({ tool: "exec", outcome: "failed", errorCode: "invalid_input" });

    const thrown = await call("POST", tool(session, turnId, "exec"), { code: "throw new Error('no')" });
    const own = onlyRecord(from, "cell", thrown.requestId);
    expect(own.outcome).toBe("failed");
    // A program's own uncaught error carries no code.
    expect(own.errorCode).toBeUndefined();

    const stale = await call("POST", tool(session, turnId, "wait"), { runId: "cm_unknown" });
    const unavailable = onlyRecord(from, "cell", stale.requestId);
    expect(unavailable).toMatchObject({ tool: "wait", outcome: "failed", errorCode: "invalid_input", bridge: { search: 0, describe: 0, call: 0 } });
    // A client-supplied run id that names no run is not logged.
    expect(unavailable.runId).toBeUndefined();

    // Exactly one cell record per exec/wait, and each matches one request record.
    const cells = recordsSince(from).filter((r) => r.kind === "cell" && r.sessionId === session);
    expect(cells).toHaveLength(6);
    for (const c of cells) expect(recordsOf(from, "request", c.requestId)).toHaveLength(1);
  });

  it("no line carries cell code, values, output, tool inputs, client results, error messages or bearer tokens", async () => {
    const from = mark();
    // Each marker exists in exactly one place; the values are built at run time so that only
    // the code itself contains CODE_MARKER.
    const CODE_MARKER = "MARK-code-9f41";
    const VALUE_MARKER = "MARK-value-2c7d";
    const OUTPUT_MARKER = "MARK-output-51aa";
    const INPUT_MARKER = "MARK-input-83be";
    const CLIENT_INPUT_MARKER = "MARK-clientinput-0d93";
    const CLIENT_RESULT_MARKER = "MARK-clientresult-6e20";
    const ERROR_MARKER = "MARK-error-77f0";
    const DIRECT_INPUT_MARKER = "MARK-direct-4b18";
    const BAD_TOKEN = "MARK-token-bad-1c55";
    const built = (marker: string) => JSON.stringify(marker.split("-")) + ".join('-')";

    const { session, turnId } = await freshTurn({ clientTools: [{ name: "ask_user" }] });
    const code =
      `// ${CODE_MARKER}\n` +
      `console.log(${built(OUTPUT_MARKER)});\n` +
      `await notes_write({ key: 'k', text: ${built(INPUT_MARKER)} });\n` +
      `const answer = await ask_user({ q: ${built(CLIENT_INPUT_MARKER)} });\n` +
      `if (answer !== ${built(CLIENT_RESULT_MARKER)}) throw new Error(${built(ERROR_MARKER)});\n` +
      `return ${built(VALUE_MARKER)};`;
    const parked = await call("POST", tool(session, turnId, "exec"), { code });
    expect(parked.json.status).toBe("waiting");
    const callId = parked.json.pendingToolCalls[0].callId;
    expect((await call("POST", `/v1/sessions/${session}/turns/${turnId}/client-results`, { callId, value: CLIENT_RESULT_MARKER })).status).toBe(202);
    const done = await call("POST", tool(session, turnId, "wait"), { runId: parked.json.runId });
    expect(done.json).toMatchObject({ status: "completed", value: VALUE_MARKER });
    // Output is delivered incrementally: the waiting result already carried it.
    expect(JSON.stringify(parked.json.output)).toContain(OUTPUT_MARKER);

    const failing = await call("POST", tool(session, turnId, "exec"), { code: `throw new Error(${built(ERROR_MARKER)})` });
    expect(failing.json.error).toContain(ERROR_MARKER);

    // A direct tool call (code mode off) with an input marker.
    const direct = await freshTurn({ agentId: "off" });
    const echoed = await call("POST", tool(direct.session, direct.turnId, "echo"), { value: DIRECT_INPUT_MARKER });
    expect(echoed.status).toBe(200);
    expect(JSON.stringify(echoed.json)).toContain(DIRECT_INPUT_MARKER);

    expect((await call("POST", `/v1/sessions/${session}/turns`, {}, BAD_TOKEN)).status).toBe(401);

    const lines = linesSince(from);
    // The records are there (a request and a cell record for each call above), just not the payloads.
    expect(lines.filter((l) => l.includes('"kind":"request"')).length).toBeGreaterThanOrEqual(8);
    expect(lines.filter((l) => l.includes('"kind":"cell"')).length).toBe(3);
    for (const secret of [
      CODE_MARKER,
      VALUE_MARKER,
      OUTPUT_MARKER,
      INPUT_MARKER,
      CLIENT_INPUT_MARKER,
      CLIENT_RESULT_MARKER,
      ERROR_MARKER,
      DIRECT_INPUT_MARKER,
      BAD_TOKEN,
      TOKEN_A,
    ]) {
      for (const line of lines) expect(line, `a log line contains ${secret}`).not.toContain(secret);
    }
  });

  it("a swallowed host error is logged with its cause (name and message, no stack) beside the failed cell", async () => {
    const { session, turnId } = await freshTurn({ agentId: "park" });
    failNextCodec("encode", new TypeError("snapshot store offline (injected)"));
    const from = mark();
    const parked = await call("POST", tool(session, turnId, "exec"), { code: "return await echo({ value: 1, delayMs: 600 })" });
    expect(parked.json).toMatchObject({ status: "failed", code: "internal_error", error: "the code mode VM could not be snapshotted" });

    const errors = recordsSince(from).filter((r) => r.kind === "host_error" && r.where === "park.encode");
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({
      error: { name: "TypeError", message: "snapshot store offline (injected)" },
      tenant: "tenant-a",
      sessionId: session,
      turnId,
    });
    expect(errors[0]!.runId).toMatch(/^cm_/);
    expect(Object.keys(errors[0]!.error).sort()).toEqual(["message", "name"]);
    expect(onlyRecord(from, "cell", parked.requestId)).toMatchObject({ outcome: "failed", errorCode: "internal_error" });
  });

  it("a cell lost to an object reset gets its record from the fresh instance, marked lost", async () => {
    const { session, turnId } = await freshTurn();
    const from = mark();
    const reply = await (sessionStub(session) as any).lostCall("tenant-a", turnId, "wait", "req-lost-1");
    expect(reply.body).toMatchObject({ status: "failed", code: "internal_error" });
    const record = onlyRecord(from, "cell", "req-lost-1");
    expect(record).toMatchObject({ tool: "wait", outcome: "failed", errorCode: "internal_error", lost: true, turnId });
    expect(record.bridge).toBeUndefined();
    expect(record.durationMs).toBeUndefined();
  });
});
