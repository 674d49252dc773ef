import { env } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { api, openTurn, sessionId, sessionProbe } from "./helpers";
import { setSessionEnv } from "./session-controls";
import { chat, parseSse, requests, script, expectNoInternals, user } from "./chat-helpers";
import { FAKE_PROVIDER_SECRETS } from "../test-config";
import { linesSince, mark } from "../support/log-capture";

/**
 * Secrets the gateway sends, coming back: a hostile MCP server (test/support/mcp-hostile-server.mjs,
 * `/echo/mcp`) that echoes the request's `Authorization` and `x-api-key` headers in tool results,
 * content blocks, structuredContent (also as a key), error results, JSON-RPC errors, tool
 * descriptions, resources and prompts; and a provider that echoes its own API key in its text,
 * split across stream deltas. Through HTTP → session Durable Object → QuickJS → MCP client and
 * through /chat → fake provider: no exec result, trajectory, stored row, model request or SSE
 * event carries the secret; the masks (`***`) are where it was.
 */
const HOSTILE = inject("mcpHostileUrl");
const ECHO_URL = `${HOSTILE}/echo/mcp`;
const MODEL = "fakeoai/gpt-fake";

const unique = () => Math.random().toString(36).slice(2, 10);

/** Every row of the session object's storage (SQL tables and key/value pairs), as text. */
async function storedText(session: string): Promise<string> {
  const probe = sessionProbe(session);
  const decode = (v: unknown) => (v instanceof ArrayBuffer ? new TextDecoder().decode(v) : v);
  let out = "";
  const tables = await probe.storageRows<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'");
  for (const { name } of tables) {
    // The platform's internal tables (_cf_*) the object may not read; their contents are listed below.
    if (name.startsWith("_cf_")) continue;
    for (const row of await probe.storageRows(`SELECT * FROM "${name}"`)) out += JSON.stringify(Object.values(row).map(decode));
  }
  for (const [key, value] of await probe.storageEntries()) out += key + JSON.stringify(value);
  return out;
}

/** Gateway config with an `echo` MCP server whose headers reference Worker secrets, laid over the session object's environment. */
async function withEchoServer(session: string, secrets: Record<string, string>) {
  await openTurn(session, { disableTools: true });
  const config = JSON.parse((env as unknown as { CODEMODE_CONFIG: string }).CODEMODE_CONFIG);
  config.mcp = { ...config.mcp, servers: { echo: { url: ECHO_URL, headers: { authorization: "env:ECHO_AUTH", "x-api-key": "env:ECHO_KEY" } } } };
  setSessionEnv(session, { CODEMODE_CONFIG: JSON.stringify(config), ...secrets });
}

/** Everything an MCP server can answer, from one cell; a JSON-RPC error is caught as the guest sees it. */
const ECHO_EVERYTHING = `
  const result = await MCP.echo.echoHeaders({});
  const failed = await MCP.echo.echoError({});
  let rpcError;
  try { await MCP.echo.echoRpcError({}); } catch (e) { rpcError = e.message; }
  const resources = await MCP.echo.resources.list();
  const resource = await MCP.echo.resources.read({ uri: "echo://headers" });
  const prompts = await MCP.echo.prompts.list();
  const prompt = await MCP.echo.prompts.get({ name: "headers" });
  const dts = await API.read("mcp/echo.d.ts");
  const header = await MCP.echo.$api("echo_headers");
  return { result, failed, rpcError, resources, resource, prompts, prompt, dts, header };
`;

describe("an MCP server echoing the gateway's env: header secrets", () => {
  it("the exec result, the direct call, the trajectory and storage carry masks, never the secret", async () => {
    const token = `gw-${unique()}-token`;
    const key = `key-${unique()}-value`;
    const session = sessionId();
    await withEchoServer(session, { ECHO_AUTH: `Bearer ${token}`, ECHO_KEY: key });
    const turnId = await openTurn(session, {});
    const r = await api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/exec`, { code: ECHO_EVERYTHING });
    expect(r.status).toBe(200);
    expect(r.json.status, JSON.stringify(r.json)).toBe("completed");
    const v = r.json.value;
    expect(v.result.content[0].text).toBe('you sent {"authorization":"***","x-api-key":"***"}');
    expect(v.result.content[1].resource.text).toBe("***");
    expect(v.result.structuredContent).toEqual({ headers: { authorization: "***", "x-api-key": "***" }, "***": "the header as a key" });
    expect(v.failed).toEqual({ content: [{ type: "text", text: "denied for ***" }], isError: true });
    expect(v.rpcError).toMatch(/bad credentials \*\*\*$/);
    expect(v.resources.resources[0].name).toBe("headers ***");
    expect(v.resource.contents[0].text).toBe("you sent ***");
    expect(v.prompts.prompts[0].description).toBe("for ***");
    expect(v.prompt.description).toBe("for ***");
    expect(v.prompt.messages[0].content.text).toContain('"authorization":"***"');
    // Tool descriptions are server text too: listed once, masked before the turn stores them.
    expect(v.dts).toContain("the gateway sent ***");
    expect(v.header.header).toContain("the gateway sent ***");

    const direct = await openTurn(session, { agentId: "off", allow: ["echo__*"] });
    const d = await api("POST", `/v1/sessions/${session}/turns/${direct}/tools/echo__echo_headers`, {});
    expect(d.json).toMatchObject({ status: "completed", value: { structuredContent: { headers: { authorization: "***" } } } });

    const trajectory = await api("GET", `/v1/sessions/${session}/turns/${turnId}/trajectory`);
    expect(trajectory.status).toBe(200);
    const everything = JSON.stringify([r.json, d.json, trajectory.json]) + (await storedText(session));
    for (const secret of [token, key]) expect(everything).not.toContain(secret);
    setSessionEnv(session, undefined);
  });
});

describe("a turn's own MCP header values, echoed back over /chat", () => {
  it("the model's requests, the SSE stream, the trajectory and storage never carry them", async () => {
    const token = `turn-${unique()}-secret`;
    const session = sessionId();
    const s = await script([{ toolCalls: [{ id: "e1", name: "exec", input: { code: ECHO_EVERYTHING } }] }, { text: "seen" }]);
    const res = await chat(
      session,
      {
        model: MODEL,
        messages: [{ role: "user", content: `${s.marker} go` }],
        mcpServers: { echo: { url: ECHO_URL, headers: { authorization: `Bearer ${token}` } } },
      },
      { accept: "text/event-stream" },
    );
    expect(res.status).toBe(200);
    const events = parseSse(res.text);
    const done = events.at(-1)!.data.answer;
    expect(done.status, res.text.slice(-500)).toBe("completed");
    const sent = await requests(s.id);
    expect(sent).toHaveLength(2);
    const toModel = JSON.stringify(sent[1]!.body);
    expect(toModel).toContain("denied for ***");
    const trajectory = await api("GET", `/v1/sessions/${session}/turns/${done.turnId}/trajectory`);
    expect(trajectory.status).toBe(200);
    // The turn keeps its own servers' settings (headers included) to reach them on later requests: that
    // one copy is the caller's configuration, not an echo. Nothing else may hold the value.
    const configured = JSON.stringify(JSON.stringify({ authorization: `Bearer ${token}` })).slice(1, -1);
    const stored = await storedText(session);
    expect(stored).toContain(configured);
    const everything = res.text + JSON.stringify(sent) + JSON.stringify(trajectory.json) + stored.split(configured).join("{…}");
    expect(everything).not.toContain(token);
  });
});

describe("a provider echoing its own API key", () => {
  it("text split across deltas reaches the stream, the answer and the next model request masked", async () => {
    const providerKey = FAKE_PROVIDER_SECRETS.FAKE_OPENAI_KEY;
    const session = sessionId();
    const s = await script([
      {
        text: ["my key is fake-", "key-op", "enai; and fake", "-key-openai again"],
        toolCalls: [{ id: "x1", name: "exec", input: { code: "return 1" } }],
      },
      { text: ["done, fake-key-", "openai"] },
    ]);
    const res = await chat(session, { model: MODEL, messages: [{ role: "user", content: `${s.marker} go` }] }, { accept: "text/event-stream" });
    expect(res.status).toBe(200);
    const events = parseSse(res.text);
    const streamed = events
      .filter((e) => e.event === "text")
      .map((e) => e.data.delta)
      .join("");
    expect(streamed).toBe("my key is ***; and *** againdone, ***");
    const done = events.at(-1)!.data.answer;
    expect(done.message.content).toBe("done, ***");
    const sent = await requests(s.id);
    const assistant = (sent[1]!.body.messages as any[]).find((m) => m.role === "assistant");
    expect(assistant.content).toBe("my key is ***; and *** again");
    const trajectory = await api("GET", `/v1/sessions/${session}/turns/${done.turnId}/trajectory`);
    const everything = res.text + JSON.stringify(sent) + JSON.stringify(trajectory.json) + (await storedText(session));
    expect(everything).not.toContain(providerKey);
  });

  it("an API key the provider echoes in its error is masked in the answer and the logs", async () => {
    const from = mark();
    for (const model of ["fakeoai-badkey/gpt-fake", "fakeant-badkey/claude-fake"]) {
      const s = await script([{ text: "x" }]);
      for (const accept of [undefined, "text/event-stream"]) {
        const r = await chat(sessionId(), { model, messages: user(s.marker) }, accept ? { accept } : {});
        expect(r.text).not.toContain("wrong-key");
        expectNoInternals(r.text);
        if (!accept) expect(r.json.error).toMatchObject({ code: "provider_error", providerStatus: 401 });
      }
    }
    expect(linesSince(from).join("\n")).not.toContain("wrong-key");
  });

  it("a key in a tool call id or a tool name never reaches the stream, the trajectory or storage; the masked id still pairs the result with its call, the masked name runs no tool", async () => {
    const key = FAKE_PROVIDER_SECRETS.FAKE_OPENAI_KEY;
    const session = sessionId();
    const s = await script([
      {
        toolCalls: [
          { id: `call_${key}`, name: "exec", input: { code: "return 1" } },
          { id: "c2", name: `tool_${key}`, input: {} },
        ],
      },
      { text: "done" },
    ]);
    const res = await chat(session, { model: MODEL, messages: [{ role: "user", content: `${s.marker} go` }] }, { accept: "text/event-stream" });
    expect(res.status).toBe(200);
    const events = parseSse(res.text);
    const ends = events.filter((e) => e.event === "tool_call_end").map((e) => e.data);
    expect(ends.map((e) => [e.callId, e.name, e.status])).toEqual([
      ["call____", "exec", "completed"],
      ["c2", "tool_***", "failed"],
    ]);
    // The replay: each call's result answers it under the masked id.
    const replay = (await requests(s.id))[1]!.body.messages as any[];
    const assistant = replay.find((m) => m.role === "assistant");
    expect(assistant.tool_calls.map((c: any) => c.id)).toEqual(["call____", "c2"]);
    expect(replay.filter((m) => m.role === "tool").map((m) => m.tool_call_id)).toEqual(["call____", "c2"]);
    const turnId = events[0]!.data.turnId;
    const trajectory = await api("GET", `/v1/sessions/${session}/turns/${turnId}/trajectory`);
    expect(res.text, "SSE stream").not.toContain(key);
    expect(JSON.stringify(trajectory.json), "trajectory").not.toContain(key);
    expect(await storedText(session), "storage").not.toContain(key);
  });
});
