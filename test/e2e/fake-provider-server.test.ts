import { describe, expect, it } from "vitest";
import { fakeProviderUrl, fakeScript } from "../support/fake-provider-client";

/**
 * The fake provider server's own contract (test/support/fake-provider/server.mjs), driven with raw
 * HTTP: the adapters' tests (providers.test.ts) rely on it refusing what a real API refuses.
 */

const OPENAI_HEADERS = { "content-type": "application/json", authorization: "Bearer fake-key-test" };
const ANTHROPIC_HEADERS = { "content-type": "application/json", "x-api-key": "fake-key-test", "anthropic-version": "2023-06-01" };

async function post(path: string, headers: Record<string, string>, body: unknown) {
  const r = await fetch(`${fakeProviderUrl()}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
  return { status: r.status, json: (await r.json()) as any };
}
const openai = (body: unknown, headers = OPENAI_HEADERS) => post("/v1/chat/completions", headers, body);
const anthropic = (body: unknown, headers: Record<string, string> = ANTHROPIC_HEADERS) => post("/v1/messages", headers, body);

const tool = (name: string, parameters: unknown = { type: "object", properties: {} }) => ({
  type: "function",
  function: { name, description: "d", parameters },
});

describe("fake provider server", () => {
  it("answers a non-streamed Chat Completions request with a chat.completion", async () => {
    const script = await fakeScript([
      { text: "hello", toolCalls: [{ id: "call_1", name: "exec", input: { code: "1" } }], usage: { input: 5, output: 2, cacheRead: 3 } },
    ]);
    const r = await openai({ model: "gpt-fake", messages: [{ role: "user", content: `${script.marker} hi` }], tools: [tool("exec")] });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({
      object: "chat.completion",
      model: "gpt-fake",
      choices: [
        {
          message: {
            role: "assistant",
            content: "hello",
            tool_calls: [{ id: "call_1", type: "function", function: { name: "exec", arguments: '{"code":"1"}' } }],
          },
          finish_reason: "tool_calls",
        },
      ],
      usage: { prompt_tokens: 8, completion_tokens: 2, prompt_tokens_details: { cached_tokens: 3 } },
    });
  });

  it("answers a non-streamed Messages request with a message", async () => {
    const script = await fakeScript([{ text: "hello", usage: { input: 5, output: 2, cacheWrite: 4 } }]);
    const r = await anthropic({ model: "claude-fake", max_tokens: 100, messages: [{ role: "user", content: `${script.marker} hi` }] });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({
      type: "message",
      role: "assistant",
      content: [{ type: "text", text: "hello" }],
      stop_reason: "end_turn",
      usage: { input_tokens: 5, output_tokens: 2, cache_creation_input_tokens: 4, cache_read_input_tokens: 0 },
    });
  });

  it.each([
    [true, '"delta":{"content":'],
    ["shape", '"content":12345'],
  ] as const)("malformed: %j streams the text, then a broken event carrying the marker", async (kind, tail) => {
    const script = await fakeScript([{ malformed: kind, text: "before" }]);
    const r = await fetch(`${fakeProviderUrl()}/v1/chat/completions`, {
      method: "POST",
      headers: OPENAI_HEADERS,
      body: JSON.stringify({ model: "gpt-fake", stream: true, messages: [{ role: "user", content: `${script.marker} hi` }] }),
    });
    expect(r.status).toBe(200);
    const events = (await r.text()).split("\n\n").filter((e) => e !== "");
    expect(events.some((e) => e.includes('"content":"before"'))).toBe(true);
    const last = events.at(-1)!;
    expect(last).toContain("RAW-PROVIDER-BYTES");
    expect(last).toContain(tail);
    if (kind === "shape") expect(() => JSON.parse(last.slice("data: ".length))).not.toThrow();
    else expect(() => JSON.parse(last.slice("data: ".length))).toThrow();
  });

  it("running past the last step is a 500 and a recorded problem", async () => {
    const script = await fakeScript([{ text: "one" }]);
    const body = { model: "gpt-fake", messages: [{ role: "user", content: script.marker }] };
    expect((await openai(body)).status).toBe(200);
    const r = await openai(body);
    expect(r.status).toBe(500);
    expect(r.json.error.message).toBe(`script ${script.id} has no step left for request 2`);
    expect((await script.requests()).map((q) => q.problems)).toEqual([[], [`script ${script.id} has no step left for request 2`]]);
  });

  it("DELETE /__scripts/:id forgets a script and its records; its marker is then unknown", async () => {
    const script = await fakeScript([{ text: "one" }, { text: "two" }]);
    const body = { model: "gpt-fake", messages: [{ role: "user", content: script.marker }] };
    expect((await openai(body)).status).toBe(200);
    const base = fakeProviderUrl();
    expect(await (await fetch(`${base}/__scripts/${script.id}`, { method: "DELETE" })).json()).toEqual({ deleted: true });
    expect((await fetch(`${base}/__scripts/${script.id}`, { method: "DELETE" })).status).toBe(404);
    expect((await fetch(`${base}/__scripts/${script.id}/requests`)).status).toBe(404);
    const r = await openai(body);
    expect(r.status).toBe(500);
    expect(r.json.error.message).toContain("no script");
  });

  it("OpenAI: refuses unanswered tool calls, unknown tool_call_ids, bad tool names and non-object schemas", async () => {
    const script = await fakeScript([{ text: "never" }]);
    const r = await openai({
      model: "gpt-fake",
      messages: [
        { role: "user", content: script.marker },
        { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "exec", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "c9", content: "x" },
        { role: "user", content: "next" },
      ],
      tools: [tool("has space"), tool("ok", { type: "string" })],
    });
    expect(r.status).toBe(400);
    expect(r.json.error.type).toBe("invalid_request_error");
    const [request] = await script.requests();
    expect(request!.problems).toEqual([
      'tools[0].function.name must match /^[a-zA-Z0-9_-]{1,64}$/ (got "has space")',
      'tools[1].function.parameters.type must be "object" at the top of a tool schema',
      'messages[2].tool_call_id "c9" answers no tool call of the preceding assistant message',
      'messages[3] (user) comes before tool call(s) c1 were answered by role "tool" messages',
    ]);
    expect(r.json.error.message).toBe(request!.problems.join("; "));
  });

  it("Anthropic: refuses a missing max_tokens and anthropic-version, broken alternation and a tool_result for an unknown tool_use", async () => {
    const script = await fakeScript([{ text: "never" }]);
    const { "anthropic-version": _version, ...headers } = ANTHROPIC_HEADERS;
    const r = await anthropic(
      {
        model: "claude-fake",
        messages: [
          { role: "user", content: script.marker },
          { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "exec", input: {} }] },
          { role: "user", content: [{ type: "tool_result", tool_use_id: "t2", content: "x" }] },
          { role: "user", content: "again" },
        ],
        tools: [{ name: "exec", input_schema: { type: "object", properties: { a: { oneOf: [{ type: "string" }] } } } }],
      },
      headers,
    );
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
    const [request] = await script.requests();
    expect(request!.problems).toEqual([
      "anthropic-version header is required",
      "max_tokens: field required (a positive integer)",
      "tools[0].input_schema.properties.a.oneOf is not allowed in a tool schema (flat schemas only)",
      'messages[2].content[0].tool_use_id "t2" does not match a tool_use block of the previous assistant message',
      "messages[2]: tool_use ids were found without tool_result blocks immediately after: t1",
      'messages[3].role must be "assistant": roles alternate user/assistant, starting with user',
    ]);
  });

  it("a missing key is a 401 and a recorded problem; a wrong one a 401 in the vendor's words", async () => {
    const script = await fakeScript([]);
    const body = { model: "claude-fake", max_tokens: 10, messages: [{ role: "user", content: script.marker }] };
    const { "x-api-key": _key, ...keyless } = ANTHROPIC_HEADERS;
    expect(await anthropic(body, keyless)).toMatchObject({ status: 401, json: { error: { type: "authentication_error" } } });
    expect(await anthropic(body, { ...ANTHROPIC_HEADERS, "x-api-key": "sk-real-looking" })).toMatchObject({
      status: 401,
      json: { error: { type: "authentication_error", message: "invalid x-api-key" } },
    });
    const requests = await script.requests();
    expect(requests.map((q) => [q.headers["x-api-key"], q.problems])).toEqual([
      [undefined, ["x-api-key header is missing or malformed"]],
      ["wrong", []],
    ]);
  });
});
