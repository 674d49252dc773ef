import { describe, expect, it } from "vitest";
import { api, exec, freshTurn, openTurn, sessionId } from "./helpers";

/** `depth` nested arrays as JSON text (built as text: the test's own JSON.stringify would overflow). */
const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth);

describe("deeply nested request bodies are refused at the edge (400 with the field), not a 500", () => {
  it("a client tool's parameters nested 100,000 deep: 400 at clientTools[1].parameters", async () => {
    const s = sessionId();
    const body = `{"clientTools":[{"name":"a"},{"name":"b","parameters":{"type":"object","default":${nested(100_000)}}}]}`;
    const r = await api("POST", `/v1/sessions/${s}/turns`, body);
    expect(r.status).toBe(400);
    expect(r.json).toEqual({
      error: { code: "invalid_request", path: "clientTools[1].parameters", message: "clientTools[1].parameters is nested deeper than 256 levels" },
    });
  });

  it("just under the limit is accepted; just over it is refused", async () => {
    const s = sessionId();
    // The body object and the two client-tool levels count: 3 + 2 + 250 = 255 levels.
    const ok = await api("POST", `/v1/sessions/${s}/turns`, `{"clientTools":[{"name":"a","parameters":{"type":"object","default":${nested(250)}}}]}`);
    expect(ok.status).toBe(201);
    const over = await api(
      "POST",
      `/v1/sessions/${s}/turns`,
      `{"clientTools":[{"name":"a","parameters":{"type":"object","default":${nested(253)}}}]}`,
    );
    expect(over.status).toBe(400);
    expect(over.json.error.path).toBe("clientTools[0].parameters");
  });

  it("exec and wait bodies with a deep extra field: 400 naming the field", async () => {
    const { session, turnId } = await freshTurn();
    const e = await api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/exec`, `{"code":"return 1","extra":${nested(50_000)}}`);
    expect(e.status).toBe(400);
    expect(e.json.error).toEqual({ code: "invalid_request", path: "extra", message: "extra is nested deeper than 256 levels" });
    const w = await api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/wait`, `{"runId":"x","more":{"a":${nested(50_000)}}}`);
    expect(w.status).toBe(400);
    expect(w.json.error.path).toBe("more");
    const root = await api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/exec`, nested(50_000));
    expect(root.status).toBe(400);
    expect(root.json.error).toEqual({ code: "invalid_request", path: "", message: "body is nested deeper than 256 levels" });
    // The session is unharmed.
    expect((await exec(session, turnId, "return 1 + 1")).value).toBe(2);
  });

  it("a deep client-result value: 400 at value", async () => {
    const { session, turnId } = await freshTurn();
    const r = await api("POST", `/v1/sessions/${session}/turns/${turnId}/client-results`, `{"callId":"call_1","value":{"a":${nested(100_000)}}}`);
    expect(r.status).toBe(400);
    expect(r.json.error).toEqual({ code: "invalid_request", path: "value", message: "value is nested deeper than 256 levels" });
  });
});

describe("numbers JSON cannot carry onward (1e400) are refused with the path, not turned into null", () => {
  it("a client result of 1e400 is a 400 at value; nested ones name their path", async () => {
    const { session, turnId } = await freshTurn();
    const r = await api("POST", `/v1/sessions/${session}/turns/${turnId}/client-results`, '{"callId":"call_1","value":1e400}');
    expect(r.status).toBe(400);
    expect(r.json.error).toEqual({
      code: "invalid_request",
      path: "value",
      message: "value is a number outside the range JSON values can carry (finite doubles only)",
    });
    const nestedInf = await api("POST", `/v1/sessions/${session}/turns/${turnId}/client-results`, '{"callId":"call_1","value":{"rows":[1,-1e999]}}');
    expect(nestedInf.json.error.path).toBe("value.rows[1]");
  });

  it("in a turn body and an exec body too", async () => {
    const s = sessionId();
    const t = await api("POST", `/v1/sessions/${s}/turns`, '{"clientTools":[{"name":"a","parameters":{"type":"number","maximum":1e400}}]}');
    expect(t.status).toBe(400);
    expect(t.json.error.path).toBe("clientTools[0].parameters.maximum");
    const turnId = await openTurn(s);
    const e = await api("POST", `/v1/sessions/${s}/turns/${turnId}/tools/exec`, '{"code":"return 1","odd key":1E+999}');
    expect(e.status).toBe(400);
    expect(e.json.error.path).toBe('["odd key"]');
    // Large but finite numbers are fine.
    const fine = await api("POST", `/v1/sessions/${s}/turns/${turnId}/tools/exec`, '{"code":"return 1.7976931348623157e308"}');
    expect(fine.json).toMatchObject({ status: "completed", value: 1.7976931348623157e308 });
  });
});

describe("a TypeScript-only turn: the exec schema and an exec without language agree", () => {
  it("the schema says the default is TypeScript, and exec without language runs TypeScript", async () => {
    const s = sessionId();
    const opened = await api("POST", `/v1/sessions/${s}/turns`, { agentId: "tsonly" });
    const execTool = opened.json.tools.find((t: any) => t.name === "exec");
    expect(execTool.parameters.properties.language).toEqual({
      type: "string",
      enum: ["typescript"],
      description: 'Source language; defaults to "typescript".',
    });
    expect(execTool.parameters.properties.code.description).toBe("TypeScript program (a function body).");
    expect(JSON.stringify(execTool)).not.toMatch(/javascript/i);
    const r = await exec(s, opened.json.turnId, "const answer: number = 6 * 7;\nreturn answer;");
    expect(r).toMatchObject({ status: "completed", value: 42 });
    const js = await exec(s, opened.json.turnId, "return 1", { language: "javascript" });
    expect(js).toMatchObject({ status: "failed", code: "invalid_input" });
  });

  it("with both languages the default stays JavaScript", async () => {
    const opened = await api("POST", `/v1/sessions/${sessionId()}/turns`, {});
    const execTool = opened.json.tools.find((t: any) => t.name === "exec");
    expect(execTool.parameters.properties.language.description).toBe('Source language; defaults to "javascript".');
  });
});
