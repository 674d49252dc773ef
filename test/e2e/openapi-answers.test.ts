import { SELF } from "cloudflare:test";
import { Validator } from "@cfworker/json-schema";
import { beforeAll, describe, expect, it } from "vitest";
import { api, exec, sessionId } from "./helpers";
import { chat, parseSse, script, user } from "./chat-helpers";

/**
 * Real answers of the main routes, driven through the gateway, match what /openapi.json documents
 * for that route, status and media type (the answer schemas are not what the routes validate with:
 * this is what keeps them from drifting). The document itself is validated in
 * test/openapi/openapi-document.test.mjs.
 */
let doc: any;

beforeAll(async () => {
  const res = await SELF.fetch("http://gateway/openapi.json");
  expect(res.status).toBe(200);
  doc = await res.json();
});

function schemaOf(path: string, method: string, status: number, media = "application/json"): object {
  const response = doc.paths[path]?.[method]?.responses?.[String(status)];
  const schema = response?.content?.[media]?.schema;
  if (!schema) throw new Error(`no documented ${media} answer for ${method} ${path} ${status}`);
  return schema;
}

/** The errors of `value` against the documented answer (none: it conforms). */
function problems(schema: object, value: unknown): string[] {
  const result = new Validator({ ...schema, components: doc.components } as never, "2020-12", false).validate(value);
  return result.errors.map((e) => `${e.instanceLocation}: ${e.error}`);
}

function expectDocumented(path: string, method: string, r: { status: number; json: unknown }, media?: string): void {
  expect(problems(schemaOf(path, method, r.status, media), r.json), `${method} ${path} ${r.status}: ${JSON.stringify(r.json).slice(0, 300)}`).toEqual(
    [],
  );
}

const TURNS = "/v1/sessions/{sessionId}/turns";
const TURN = "/v1/sessions/{sessionId}/turns/{turnId}";
const MODEL = "fakeoai/gpt-fake";
const ASK = [{ name: "ask", description: "asks the user", parameters: { type: "object", properties: { q: { type: "string" } } } }];

describe("real answers match the OpenAPI document", () => {
  it("health, turn, exec (completed, waiting, failed), client result, wait, trajectory, approvals, deletes", async () => {
    const health = await SELF.fetch("http://gateway/healthz");
    expectDocumented("/healthz", "get", { status: health.status, json: await health.json() });

    const session = sessionId();
    const opened = await api("POST", `/v1/sessions/${session}/turns`, { clientTools: ASK });
    expect(opened.status).toBe(201);
    expectDocumented(TURNS, "post", opened);
    const turnId = opened.json.turnId;
    const tool = `${TURN}/tools/{toolName}`;
    const described = await api("GET", `/v1/sessions/${session}/turns/${turnId}`);
    expect(described.json).toEqual({ turnId, codeModeEngaged: true, tools: opened.json.tools });
    expectDocumented(TURN, "get", described);

    const completed = await exec(session, turnId, "return 1 + 2");
    expect(completed.status).toBe("completed");
    expectDocumented(tool, "post", { status: 200, json: completed });
    // The tool route's answer for exec is the named CodeModeResult, not just any object.
    expect(problems({ $ref: "#/components/schemas/CodeModeResult" }, completed)).toEqual([]);
    expect(problems({ $ref: "#/components/schemas/CodeModeResult" }, { ...completed, status: "finished" })).not.toEqual([]);

    const failed = await exec(session, turnId, "throw new Error('no')");
    expect(failed.status).toBe("failed");
    expect(problems({ $ref: "#/components/schemas/CodeModeResult" }, failed)).toEqual([]);

    const waiting = await exec(session, turnId, "return await ask({ q: 'name?' })");
    expect(waiting.status).toBe("waiting");
    expect(problems({ $ref: "#/components/schemas/CodeModeResult" }, waiting)).toEqual([]);

    const delivered = await api("POST", `/v1/sessions/${session}/turns/${turnId}/client-results`, {
      callId: waiting.pendingToolCalls[0].callId,
      value: "Ada",
    });
    expect(delivered.status).toBe(202);
    expectDocumented(`${TURN}/client-results`, "post", delivered);
    const again = await api("POST", `/v1/sessions/${session}/turns/${turnId}/client-results`, {
      callId: waiting.pendingToolCalls[0].callId,
      value: "Ada",
    });
    expect(again.status).toBe(409);
    expectDocumented(`${TURN}/client-results`, "post", again);

    const waited = await api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/wait`, { runId: waiting.runId });
    expect(waited.json).toMatchObject({ status: "completed", value: "Ada" });
    expect(problems({ $ref: "#/components/schemas/CodeModeResult" }, waited.json)).toEqual([]);

    const trajectory = await api("GET", `/v1/sessions/${session}/turns/${turnId}/trajectory`);
    expect(trajectory.status).toBe(200);
    expect(trajectory.json.calls.length).toBeGreaterThanOrEqual(4);
    expectDocumented(`${TURN}/trajectory`, "get", trajectory);

    const approvals = await api("GET", `/v1/sessions/${session}/approvals`);
    expect(approvals.status).toBe(200);
    expectDocumented("/v1/sessions/{sessionId}/approvals", "get", approvals);

    const ended = await api("DELETE", `/v1/sessions/${session}/turns/${turnId}`);
    expect(ended.status).toBe(200);
    expectDocumented(TURN, "delete", ended);
    const gone = await api("DELETE", `/v1/sessions/${session}`);
    expect(gone.status).toBe(200);
    expectDocumented("/v1/sessions/{sessionId}", "delete", gone);
  });

  it("errors: a refused body, an unknown turn, a missing token, a bad approval decision", async () => {
    const session = sessionId();
    const bad = await api("POST", `/v1/sessions/${session}/turns`, { clientTools: [{ name: "exec" }] });
    expect(bad.status).toBe(400);
    expect(bad.json.error.path).toBe("clientTools[0].name");
    expectDocumented(TURNS, "post", bad);
    const unknown = await api("GET", `/v1/sessions/${session}/turns/nope/trajectory`);
    expect(unknown.status).toBe(404);
    expectDocumented(`${TURN}/trajectory`, "get", unknown);
    const anonymous = await api("POST", `/v1/sessions/${session}/turns`, {}, null);
    expect(anonymous.status).toBe(401);
    expectDocumented(TURNS, "post", anonymous);
    const decision = await api("POST", `/v1/sessions/${session}/approvals/appr_1`, { decision: "maybe" });
    expect(decision.status).toBe(400);
    expectDocumented("/v1/sessions/{sessionId}/approvals/{approvalId}", "post", decision);
  });

  it("/chat: the JSON answer and every server-sent event", async () => {
    const session = sessionId();
    const s = await script([{ toolCalls: [{ id: "c1", name: "exec", input: { code: "return 6 * 7" } }] }, { text: "42" }]);
    const answer = await chat(session, { model: MODEL, messages: user(s.marker) });
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ status: "completed", message: { content: "42" } });
    expectDocumented("/v1/sessions/{sessionId}/chat", "post", answer);

    const t = await script([{ toolCalls: [{ id: "c1", name: "exec", input: { code: "return 6 * 7" } }] }, { text: "42" }]);
    const streamed = await chat(sessionId(), { model: MODEL, messages: user(t.marker) }, { accept: "text/event-stream" });
    expect(streamed.status).toBe(200);
    const events = parseSse(streamed.text);
    expect(new Set(events.map((e) => e.event))).toEqual(new Set(["turn", "assistant_turn", "tool_call_start", "tool_call_end", "text", "done"]));
    const eventSchema = schemaOf("/v1/sessions/{sessionId}/chat", "post", 200, "text/event-stream");
    for (const e of events) {
      expect(e.data.type).toBe(e.event);
      expect(problems(eventSchema, e.data), e.event).toEqual([]);
    }

    const refused = await chat(session, { model: MODEL, messages: [] });
    expect(refused.status).toBe(400);
    expectDocumented("/v1/sessions/{sessionId}/chat", "post", refused);
  });
});
