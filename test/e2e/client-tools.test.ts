import { describe, expect, it } from "vitest";
import { api, exec, freshTurn, openTurn, sessionId, sessionProbe, wait } from "./helpers";

const openRaw = (body: unknown) => api("POST", `/v1/sessions/${sessionId()}/turns`, body);
const clientResult = (session: string, turnId: string, body: unknown) => api("POST", `/v1/sessions/${session}/turns/${turnId}/client-results`, body);

// Seed: Tool names and collisions.
describe("client tool names", () => {
  it("names with spaces and other characters are accepted; the guest callable is normalized; pendingToolCalls shows the tool's own name", async () => {
    const { session, turnId } = await freshTurn({
      clientTools: [
        { name: "look up user", description: "Find a user" },
        { name: "Wetter abrufen ☀" },
        { name: "my-tool" },
        { name: "my tool" },
        { name: "ünïcode" },
        { name: "a".repeat(128) },
      ],
    });
    const names = await exec(session, turnId, "return catalog.all().filter((h) => h.source === 'client').map((h) => [h.toolName, h.callableName])");
    expect(names.value.slice(0, 3)).toEqual([
      ["look up user", "look_up_user"],
      ["Wetter abrufen ☀", "Wetter_abrufen__"],
      ["my-tool", "my_tool"],
    ]);
    // A normalized collision gets a deterministic suffix; a leading invalid character becomes "_".
    expect(names.value[3][0]).toBe("my tool");
    expect(names.value[3][1]).toMatch(/^my_tool_[0-9a-f]{4,}$/);
    expect(names.value[4]).toEqual(["ünïcode", "_n_code"]);
    const r = await exec(session, turnId, "return await look_up_user({ id: 7 })");
    expect(r).toMatchObject({ status: "waiting", pendingToolCalls: [{ tool: "look up user", input: { id: 7 } }] });
    await clientResult(session, turnId, { callId: r.pendingToolCalls[0].callId, value: { name: "Ada" } });
    expect(await wait(session, turnId, r.runId)).toMatchObject({ status: "completed", value: { name: "Ada" } });
  });

  it("a client tool named like a guest built-in or an Object.prototype name never replaces it: it gets a suffixed callable", async () => {
    const clientTools = ["atob", "btoa", "DOMException", "Float16Array", "DisposableStack", "AsyncDisposableStack", "SuppressedError"]
      .concat(["then", "toString", "hasOwnProperty", "constructor", "valueOf", "__proto__"])
      .map((name) => ({ name }));
    const { session, turnId } = await freshTurn({ clientTools });
    // Was: `atob("aGk=")` called the client tool (and parked), and a tool named `then` made globalThis thenable.
    const builtIns = await exec(
      session,
      turnId,
      `const self = await globalThis; // not a thenable
       return [atob("aGk="), btoa("hi"), self === globalThis, typeof globalThis.then, Object.hasOwn(globalThis, "toString"),
         String(globalThis), globalThis.hasOwnProperty("atob"), globalThis.constructor === Object, typeof new DisposableStack().use,
         typeof AsyncDisposableStack, new SuppressedError(1, 2).name, typeof Float16Array, new DOMException("x").message,
         Object.getPrototypeOf(globalThis) === Object.prototype];`,
    );
    expect(builtIns).toMatchObject({
      status: "completed",
      value: [
        "hi",
        "aGk=",
        true,
        "undefined",
        false,
        "[object global]",
        true,
        true,
        "function",
        "function",
        "SuppressedError",
        "function",
        "x",
        true,
      ],
    });
    const names = await exec(session, turnId, "return catalog.all().filter((h) => h.source === 'client').map((h) => [h.toolName, h.callableName])");
    for (const [toolName, callable] of names.value as [string, string][]) {
      expect(callable).toMatch(new RegExp(`^${toolName.replace(/^__+/, "_")}_[0-9a-f]{4,}$`));
    }
    // The renamed callables are globals and reach the client tool under its own name.
    const r = await exec(
      session,
      turnId,
      `const name = (t) => catalog.all().find((h) => h.toolName === t).callableName;
       return [await globalThis[name("atob")]({ s: 1 }), await globalThis[name("then")]({ s: 2 })];`,
    );
    expect(r).toMatchObject({ status: "waiting", pendingToolCalls: [{ tool: "atob", input: { s: 1 } }] });
    await clientResult(session, turnId, { callId: r.pendingToolCalls[0].callId, value: "a" });
    const second = await wait(session, turnId, r.runId);
    expect(second).toMatchObject({ status: "waiting", pendingToolCalls: [{ tool: "then", input: { s: 2 } }] });
    await clientResult(session, turnId, { callId: second.pendingToolCalls[0].callId, value: "t" });
    expect(await wait(session, turnId, second.runId)).toMatchObject({ status: "completed", value: ["a", "t"] });
  });

  it("the quick index shows the normalized callable; with code mode off the model sees the tool's own name", async () => {
    const on = await openRaw({ clientTools: [{ name: "look up user" }] });
    expect(on.json.tools[0].description).toContain("look_up_user(input: unknown) -> ?");
    const off = await openRaw({ agentId: "off", clientTools: [{ name: "look up user" }] });
    expect(off.json.tools.map((t: any) => t.name)).toContain("look up user");
  });

  it.each([
    ["", "empty"],
    ["a".repeat(129), "129 characters"],
    ["tab\there", "a control character"],
    ["nul\u0000", "NUL"],
    ["c1\u009f", "a C1 control character"],
  ])("refuses the name %j (%s) at clientTools[1].name", async (name) => {
    const r = await openRaw({ clientTools: [{ name: "fine" }, { name }] });
    expect(r.status).toBe(400);
    expect(r.json.error).toEqual({
      code: "invalid_request",
      path: "clientTools[1].name",
      message: "clientTools[1].name must be 1-128 characters without control characters",
    });
  });
});

describe("client tools named like control tools are refused, not silently dropped", () => {
  it.each(["exec", "wait", "tool_search_code", "tool_search", "tool_describe", "tool_call"])(
    "a client tool named %s: 400 at clientTools[2].name",
    async (name) => {
      const r = await openRaw({ clientTools: [{ name: "a" }, { name: "b" }, { name }] });
      expect(r.status).toBe(400);
      expect(r.json.error).toEqual({
        code: "invalid_request",
        path: "clientTools[2].name",
        message: `clientTools[2].name "${name}" is the name of a code-mode control tool (exec, wait, tool_search_code, tool_search, tool_describe, tool_call); give the client tool another name`,
      });
    },
  );

  it("the same names in another case or with a prefix are ordinary tools", async () => {
    const r = await openRaw({ clientTools: [{ name: "Exec" }, { name: "my_wait" }] });
    expect(r.status).toBe(201);
    expect(r.json.telemetry.catalogSources.client).toBe(2);
  });
});

const UserInput = { type: "object", properties: { id: { type: "integer", minimum: 1 } }, required: ["id"], additionalProperties: false };

describe("client tool schemas: MCP and Anthropic spellings, declared input enforced", () => {
  it.each(["parameters", "inputSchema", "input_schema"])(
    "a schema declared as %s is kept for describe() and enforced; metadata stays input: unknown",
    async (key) => {
      const { session, turnId } = await freshTurn({ clientTools: [{ name: "get_user", description: "Get a user by id", [key]: UserInput }] });
      const r = await exec(
        session,
        turnId,
        `const h = catalog.all().find((x) => x.toolName === 'get_user');
       return { input: h.input, output: h.output ?? null, schema: (await h.describe()).parameters };`,
      );
      expect(r.value).toEqual({ input: "unknown", output: null, schema: UserInput });
    },
  );

  it("the guest's input is checked before the call is handed over: a catchable error, never a pending call", async () => {
    const { session, turnId } = await freshTurn({ clientTools: [{ name: "get_user", inputSchema: UserInput }] });
    const bad = await exec(session, turnId, "try { await get_user({ id: 'seven' }); return 'handed over'; } catch (e) { return e.message; }");
    expect(bad.status).toBe("completed");
    expect(bad.value).toMatch(/^invalid input for get_user: /);
    expect(bad.value).toContain("/id");
    expect(bad.telemetry.counters.call).toBe(1);
    // A valid and an invalid call in one batch: only the valid one is pending.
    const mixed = await exec(
      session,
      turnId,
      "const [a, b] = await Promise.allSettled([get_user({ id: 2 }), get_user({})]); return [a.status, a.value ?? null, b.status, b.reason.message];",
    );
    expect(mixed.status).toBe("waiting");
    expect(mixed.pendingToolCalls).toEqual([{ callId: expect.any(String), tool: "get_user", input: { id: 2 } }]);
    expect((await clientResult(session, turnId, { callId: mixed.pendingToolCalls[0].callId, value: { id: 2, name: "Bo" } })).status).toBe(202);
    const done = await wait(session, turnId, mixed.runId);
    expect(done.value.slice(0, 3)).toEqual(["fulfilled", { id: 2, name: "Bo" }, "rejected"]);
    expect(done.value[3]).toMatch(/^invalid input for get_user: /);
  });

  it("two spellings that agree are fine; two that differ are a 400 naming the second", async () => {
    const reordered = { additionalProperties: false, required: ["id"], properties: { id: { minimum: 1, type: "integer" } }, type: "object" };
    expect((await openRaw({ clientTools: [{ name: "u", parameters: UserInput, inputSchema: reordered }] })).status).toBe(201);
    const r = await openRaw({ clientTools: [{ name: "u", parameters: UserInput, input_schema: { type: "object" } }] });
    expect(r.status).toBe(400);
    expect(r.json.error).toEqual({
      code: "invalid_request",
      path: "clientTools[0].input_schema",
      message:
        "clientTools[0].input_schema differs from clientTools[0].parameters; declare the input schema once (parameters, inputSchema, input_schema are the same field)",
    });
  });

  it("an unusable schema, or a misspelt schema key, is a 400 instead of input: unknown", async () => {
    const invalid = await openRaw({ clientTools: [{ name: "u", inputSchema: { type: "object", properties: { id: { type: "int" } } } }] });
    expect(invalid.status).toBe(400);
    expect(invalid.json.error.path).toBe("clientTools[0].inputSchema");
    expect(invalid.json.error.message).toBe("clientTools[0].inputSchema is not a usable JSON Schema (/properties/id/type: unknown type)");
    const typo = await openRaw({ clientTools: [{ name: "u", paramaters: UserInput }] });
    expect(typo.status).toBe(400);
    expect(typo.json.error.path).toBe("clientTools[0].paramaters");
    // MCP / Anthropic / OpenAI tool metadata passes through.
    const mcp = await openRaw({
      clientTools: [
        { name: "u", title: "User", annotations: { readOnlyHint: true }, _meta: {}, inputSchema: UserInput, cache_control: { type: "ephemeral" } },
      ],
    });
    expect(mcp.status).toBe(201);
  });
});

describe("client tool output schemas are enforced when the result is delivered", () => {
  const Names = { type: "array", items: { type: "string" } };

  it("a result that violates outputSchema fails in the guest at wait, without printing the value", async () => {
    const { session, turnId } = await freshTurn({ clientTools: [{ name: "list_names", outputSchema: Names }] });
    const r = await exec(session, turnId, "try { return await list_names({}); } catch (e) { return 'caught: ' + e.message; }");
    expect(r.status).toBe("waiting");
    expect((await clientResult(session, turnId, { callId: r.pendingToolCalls[0].callId, value: { secret: "hunter2-do-not-print" } })).status).toBe(
      202,
    );
    const done = await wait(session, turnId, r.runId);
    expect(done).toMatchObject({
      status: "completed",
      value: "caught: list_names result does not match its declared outputSchema (type check failed)",
    });
    expect(JSON.stringify(done)).not.toContain("hunter2");
  });

  it("a result that matches passes through; an error result stays the client's error", async () => {
    const { session, turnId } = await freshTurn({ clientTools: [{ name: "list_names", output_schema: Names }] });
    const r = await exec(
      session,
      turnId,
      "const a = await list_names({}); let b; try { await list_names({}); } catch (e) { b = e.message; } return { a, b };",
    );
    await clientResult(session, turnId, { callId: r.pendingToolCalls[0].callId, value: ["ada", "bo"] });
    const second = await wait(session, turnId, r.runId);
    expect(second.status).toBe("waiting");
    await clientResult(session, turnId, { callId: second.pendingToolCalls[0].callId, error: { message: "user declined" } });
    expect((await wait(session, turnId, second.runId)).value).toEqual({ a: ["ada", "bo"], b: "user declined" });
  });

  it("a client's output schema claim never becomes a trusted hint: -> ? in the quick index, absent from describe()", async () => {
    const opened = await openRaw({
      clientTools: [{ name: "list_names", outputSchema: { type: "array", items: { type: "string" }, additionalProperties: false } }],
    });
    expect(opened.json.tools[0].description).toContain("list_names(input: unknown) -> ?");
    const { session, turnId } = await freshTurn({ clientTools: [{ name: "list_names", outputSchema: Names }] });
    const r = await exec(
      session,
      turnId,
      "const h = catalog.all().find((x) => x.toolName === 'list_names'); const d = await h.describe(); return { output: h.output ?? null, described: 'outputSchema' in d };",
    );
    expect(r.value).toEqual({ output: null, described: false });
  });
});

describe("a repeated client result", () => {
  // Was: 404 unknown callId once the resume had consumed the result.
  it("is a 409 even after the resume consumed it and the run completed", async () => {
    const { session, turnId } = await freshTurn({ clientTools: [{ name: "ask_user" }] });
    const r = await exec(session, turnId, "return await ask_user({ q: 'ok?' })");
    const callId = r.pendingToolCalls[0].callId;
    expect((await clientResult(session, turnId, { callId, value: "yes" })).status).toBe(202);
    // Before the wait: the stored result makes a repeat a 409 (unchanged).
    expect((await clientResult(session, turnId, { callId, value: "again" })).status).toBe(409);
    expect(await wait(session, turnId, r.runId)).toMatchObject({ status: "completed", value: "yes" });
    const repeat = await clientResult(session, turnId, { callId, value: "yes" });
    expect(repeat.status).toBe(409);
    expect(repeat.json.error).toEqual({ code: "conflict", message: `a result for ${callId} was already delivered` });
    // A callId this turn never issued is still a 404.
    expect((await clientResult(session, turnId, { callId: "call_999_deadbeef", value: 1 })).status).toBe(404);
  });

  it("is a 409 after a run that failed, and the record goes with the turn", async () => {
    const { session, turnId } = await freshTurn({ clientTools: [{ name: "ask_user" }] });
    const r = await exec(session, turnId, "await ask_user({}); throw new Error('boom');");
    const callId = r.pendingToolCalls[0].callId;
    await clientResult(session, turnId, { callId, value: 1 });
    expect(await wait(session, turnId, r.runId)).toMatchObject({ status: "failed" });
    expect((await clientResult(session, turnId, { callId, value: 1 })).status).toBe(409);
    expect((await api("DELETE", `/v1/sessions/${session}/turns/${turnId}`)).status).toBe(200);
    expect((await clientResult(session, turnId, { callId, value: 1 })).status).toBe(404);
  });

  it("is a 409 when delivered again across a re-park; the first result is the one the run sees", async () => {
    const { session, turnId } = await freshTurn({ clientTools: [{ name: "ask_user" }] });
    const r = await exec(session, turnId, "const a = await ask_user({ n: 1 }); await yield_control(); return a;");
    const path = `/v1/sessions/${session}/turns/${turnId}/client-results`;
    const callId = r.pendingToolCalls[0].callId;
    expect((await api("POST", path, { callId, value: "first" })).status).toBe(202);
    const w = await wait(session, turnId, r.runId);
    expect(w).toMatchObject({ status: "waiting", reason: "yield" });
    const again = await api("POST", path, { callId, value: "second" });
    expect(again.status).toBe(409);
    expect(await wait(session, turnId, r.runId)).toMatchObject({ status: "completed", value: "first" });
  });
});

describe("the per-turn record of delivered client results", () => {
  it("is bounded: past DELIVERED_CALLS_LIMIT the oldest callIds are forgotten first, per turn", async () => {
    const { session, turnId } = await freshTurn();
    // The session's turn store adapter over its own SQLite (through the storage probe).
    const record: Array<[string, string]> = Array.from({ length: 4096 + 10 }, (_, i) => [turnId, `c${i}`]);
    record.push(["other-turn", "c0"]);
    const [oldest, firstKept, newest, otherTurn] = await sessionProbe(session).deliveredCalls(record, [
      [turnId, "c0"],
      [turnId, "c10"],
      [turnId, "c4105"],
      ["other-turn", "c0"],
    ]);
    expect({ oldest, firstKept, newest, otherTurn }).toEqual({ oldest: false, firstKept: true, newest: true, otherTurn: true });
  });
});

describe("schema patterns run on the host, so the ones that can backtrack exponentially are refused at turn open", () => {
  it("a client tool whose parameters or outputSchema hold such a pattern is a 400 naming the path", async () => {
    const evil = { type: "object", properties: { a: { type: "string", pattern: "^(a+)+$" } } };
    const session = sessionId();
    const r1 = await api("POST", `/v1/sessions/${session}/turns`, { clientTools: [{ name: "ask", parameters: evil }] });
    expect(r1.status).toBe(400);
    expect(r1.json.error.path).toBe("clientTools[0].parameters");
    expect(r1.json.error.message).toMatch(/backtrack/);
    const r2 = await api("POST", `/v1/sessions/${session}/turns`, { clientTools: [{ name: "ask", outputSchema: evil }] });
    expect(r2.status).toBe(400);
    const ok = await api("POST", `/v1/sessions/${session}/turns`, {
      clientTools: [{ name: "ask", parameters: { type: "object", properties: { a: { type: "string", pattern: "^[a-z]+$", maxLength: 64 } } } }],
    });
    expect(ok.status).toBe(201);
  });

  it("polynomial shapes too (a*a*a*…: more than two unbounded repeats); a long string never meets a pattern, it fails the check", async () => {
    const session = sessionId();
    const bounded = { type: "object", properties: { s: { type: "array", items: { type: "string", pattern: "^" + "a{0,32}".repeat(6) + "b" } } } };
    const refusedBounded = await api("POST", `/v1/sessions/${session}/turns`, { clientTools: [{ name: "ask", parameters: bounded }] });
    expect(refusedBounded.status).toBe(400);
    expect(refusedBounded.json.error.message).toMatch(/too many choices/);
    const poly = { type: "object", properties: { a: { type: "string", pattern: "^" + "a*".repeat(13) + "$" } } };
    const refused = await api("POST", `/v1/sessions/${session}/turns`, { clientTools: [{ name: "ask", parameters: poly }] });
    expect(refused.status).toBe(400);
    expect(refused.json.error.message).toMatch(/more than 2 unbounded repeats/);
    const turnId = await openTurn(session, {
      clientTools: [{ name: "ask", parameters: { type: "object", properties: { a: { type: "string", pattern: "a*a*b" } }, required: ["a"] } }],
    });
    const r = await exec(session, turnId, "try { await ask({ a: 'a'.repeat(5000) + '!' }); return 'asked'; } catch (e) { return e.message; }");
    expect(r).toMatchObject({ status: "completed", value: expect.stringMatching(/pattern/) });
  });
});

describe("inputs handed out in pendingToolCalls are bounded", () => {
  it("a client tool input larger than maxOutputBytes is refused at the call; host tool inputs are bounded in pendingToolCalls", async () => {
    const { session, turnId } = await freshTurn({ agentId: "parktight", clientTools: [{ name: "ask_user" }] });
    const big = await exec(session, turnId, "try { await ask_user({ q: 'y'.repeat(5000) }); } catch (e) { return e.message; }");
    expect(big.value).toMatch(/larger than maxOutputBytes \(2048\)/);
    const parked = await exec(session, turnId, "return await echo({ value: 'x'.repeat(900000), delayMs: 5000 });");
    expect(parked.status).toBe("waiting");
    expect(JSON.stringify(parked).length).toBeLessThan(2048 + 2048);
    expect(parked.pendingToolCalls[0]).toMatchObject({ tool: "echo", input: { truncated: true } });
  });
});
