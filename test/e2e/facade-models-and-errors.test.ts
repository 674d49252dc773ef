import { describe, expect, it } from "vitest";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { sessionId } from "./helpers";
import { requests, script } from "./chat-helpers";
import { anthropic, openai } from "./facade-helpers";
import { setLimits } from "./session-controls";

// The facades' model names (aliases, GET /v1/models), the paths their refusals name, a full
// session and an error after the stream began — each seen through the official SDKs.

const USAGE = { input: 10, output: 5, cacheRead: 0, cacheWrite: 0 };

describe("model aliases and GET /v1/models", () => {
  it("an alias of models.aliases answers as the provider/model it names, in both formats", async () => {
    const s = await script([
      { text: "from the alias", usage: USAGE },
      { text: "from the other alias", usage: USAGE },
    ]);
    const oai = await openai().chat.completions.create({ model: "codemode-fast", messages: [{ role: "user", content: `${s.marker} hi` }] });
    expect(oai.choices[0]!.message.content).toBe("from the alias");
    expect(oai.model).toBe("fakeoai/gpt-fake");
    expect((await requests(s.id))[0]!.body.model).toBe("gpt-fake");

    const a = await script([{ text: "claude via alias", usage: USAGE }]);
    const msg = await anthropic().messages.create({
      model: "codemode-claude",
      max_tokens: 64,
      messages: [{ role: "user", content: `${a.marker} hi` }],
    });
    expect(msg.content).toMatchObject([{ type: "text", text: "claude via alias" }]);
    expect(msg.model).toBe("fakeant/claude-fake");
    expect((await requests(a.id))[0]!.body.model).toBe("claude-fake");
  });

  it("lists only the models of providers whose API-key secret is set, and the aliases naming them", async () => {
    const ids: string[] = [];
    for await (const m of openai().models.list()) ids.push(m.id);
    expect(ids).toEqual(expect.arrayContaining(["fakeoai/gpt-fake", "fakeant/claude-fake", "codemode-fast", "codemode-claude"]));
    // The bundled openai and anthropic catalogs: their secrets (OPENAI_API_KEY, ANTHROPIC_API_KEY) are not set here.
    expect(ids.filter((id) => id.startsWith("openai/") || id.startsWith("anthropic/"))).toEqual([]);
    expect(ids).not.toContain("unkeyed");
  });
});

describe("the paths of facade refusals name the client's own fields", () => {
  it("Anthropic: with a system prompt, a bad message is named by its index in the client's messages", async () => {
    const bad = await anthropic()
      .messages.create({
        model: "fakeant/claude-fake",
        max_tokens: 64,
        system: "Be brief.",
        messages: [
          { role: "user", content: "hi" },
          { role: "assistant", content: "hello" },
          { role: "user", content: "   " },
        ],
      })
      .catch((e) => e);
    expect(bad).toBeInstanceOf(Anthropic.BadRequestError);
    expect(bad.error.error.message).toContain("messages[2].content must not be empty");
    expect(bad.error.error.message).not.toContain("messages[3]");
  });

  it("OpenAI: after several tool messages (one result run inside), the param is the client's message index", async () => {
    const calls = [
      { id: "call_a", type: "function" as const, function: { name: "ask_user", arguments: "{}" } },
      { id: "call_b", type: "function" as const, function: { name: "ask_user", arguments: "{}" } },
    ];
    const bad = await openai()
      .chat.completions.create({
        model: "fakeoai/gpt-fake",
        messages: [
          { role: "user", content: "hi" },
          { role: "assistant", content: null, tool_calls: calls },
          { role: "tool", tool_call_id: "call_a", content: "1" },
          { role: "tool", tool_call_id: "call_b", content: "2" },
          { role: "user", content: "  " },
        ],
      })
      .catch((e) => e);
    expect(bad).toBeInstanceOf(OpenAI.BadRequestError);
    expect(bad.error).toMatchObject({ param: "messages[4].content" });
    expect(bad.message).toContain("messages[4].content must not be empty");

    const sampling = await openai()
      .chat.completions.create({ model: "fakeoai/gpt-fake", top_p: 5, messages: [{ role: "user", content: "hi" }] })
      .catch((e) => e);
    expect(sampling).toBeInstanceOf(OpenAI.BadRequestError);
    expect(sampling.error).toMatchObject({ param: "top_p" });
  });
});

describe("client tool refusals name the format's own tool fields", () => {
  it("OpenAI: tools[i].function.name; Anthropic: tools[i].name", async () => {
    const oai = await openai()
      .chat.completions.create({
        model: "fakeoai/gpt-fake",
        messages: [{ role: "user", content: "hi" }],
        tools: [
          { type: "function", function: { name: "ask_user" } },
          { type: "function", function: { name: "exec" } },
        ],
      })
      .catch((e) => e);
    expect(oai).toBeInstanceOf(OpenAI.BadRequestError);
    expect(oai.error).toMatchObject({ param: "tools[1].function.name" });
    expect(oai.message).toContain("tools[1].function.name");
    expect(oai.message).not.toContain("clientTools");

    const ant = await anthropic()
      .messages.create({
        model: "fakeant/claude-fake",
        max_tokens: 64,
        messages: [{ role: "user", content: "hi" }],
        tools: [{ name: "wait", input_schema: { type: "object" } }],
      })
      .catch((e) => e);
    expect(ant).toBeInstanceOf(Anthropic.BadRequestError);
    expect(ant.error.error.message).toContain("tools[0].name");
    expect(ant.error.error.message).not.toContain("clientTools");
  });

  it("too many tools names `tools`, not the /chat field it becomes", async () => {
    const tools = Array.from({ length: 1025 }, (_, i) => ({ type: "function" as const, function: { name: `t${i}` } }));
    const oai = await openai()
      .chat.completions.create({ model: "fakeoai/gpt-fake", messages: [{ role: "user", content: "hi" }], tools })
      .catch((e) => e);
    expect(oai).toBeInstanceOf(OpenAI.BadRequestError);
    expect(oai.error).toMatchObject({ param: "tools", message: "tools has more than 1024 entries" });
  });

  it("a sampling field or `stream` of the wrong type is refused naming it, not ignored", async () => {
    const base = { model: "fakeoai/gpt-fake", messages: [{ role: "user", content: "hi" }] };
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ temperature: "hot" }, "temperature", "temperature must be a number"],
      [{ top_p: [1] }, "top_p", "top_p must be a number"],
      [{ max_tokens: "10" }, "max_tokens", "max_tokens must be a number"],
      [{ max_completion_tokens: true }, "max_completion_tokens", "max_completion_tokens must be a number"],
      [{ stream: "yes" }, "stream", "stream must be true or false"],
    ];
    for (const [extra, param, message] of cases) {
      const oai = await openai()
        .chat.completions.create({ ...base, ...extra } as never)
        .catch((e) => e);
      expect(oai, param).toBeInstanceOf(OpenAI.BadRequestError);
      expect(oai.error).toMatchObject({ param, message });
    }
    for (const [extra, message] of [
      [{ max_tokens: "10" }, "max_tokens must be a number"],
      [{ max_tokens: 64, stream: 1 }, "stream must be true or false"],
    ] as const) {
      const ant = await anthropic()
        .messages.create(
          Object.assign({ model: "fakeant/claude-fake", max_tokens: 64, messages: [{ role: "user" as const, content: "hi" }] }, extra) as never,
        )
        .catch((e) => e);
      expect(ant).toBeInstanceOf(Anthropic.BadRequestError);
      expect(ant.error.error.message).toMatch(new RegExp(`^${message}\\b`));
    }
  });
});

describe("a full session", () => {
  it("is a 409 each SDK raises as its ConflictError (OpenAI type insufficient_quota)", async () => {
    setLimits({ maxStoredBytes: 1024 });
    const oai = await openai({ session: sessionId() })
      .chat.completions.create({ model: "fakeoai/gpt-fake", messages: [{ role: "user", content: "hi" }] })
      .catch((e) => e);
    expect(oai).toBeInstanceOf(OpenAI.ConflictError);
    expect(oai.status).toBe(409);
    expect(oai.error).toMatchObject({ type: "insufficient_quota", code: "quota_exceeded" });
    expect(oai.message).toMatch(/maxStoredBytes/);

    const ant = await anthropic({ session: sessionId() })
      .messages.create({ model: "fakeant/claude-fake", max_tokens: 64, messages: [{ role: "user", content: "hi" }] })
      .catch((e) => e);
    expect(ant).toBeInstanceOf(Anthropic.ConflictError);
    expect(ant.status).toBe(409);
    expect(ant.error.error.message).toMatch(/\(quota_exceeded\)$/);
  });
});

describe("a provider failing after the stream began", () => {
  it("OpenAI: the stream raises an APIError from the error data event, after the opening chunk", async () => {
    const s = await script([
      { toolCalls: [{ id: "e1", name: "exec", input: { code: "return 1" } }], usage: USAGE },
      { malformed: true, text: ["partial"] },
    ]);
    const stream = await openai().chat.completions.create({
      model: "fakeoai/gpt-fake",
      stream: true,
      messages: [{ role: "user", content: `${s.marker} hi` }],
    });
    const chunks: unknown[] = [];
    const failure = await (async () => {
      for await (const chunk of stream) chunks.push(chunk);
    })().catch((e) => e);
    expect(chunks.length).toBeGreaterThan(0);
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    expect(failure.error).toMatchObject({ type: "server_error" });
    expect(failure.message).toMatch(/provider/i);
  });

  it("Anthropic: the stream raises an APIError from an `event: error` after message_start", async () => {
    const s = await script([
      { toolCalls: [{ id: "e1", name: "exec", input: { code: "return 1" } }], usage: USAGE },
      { malformed: true, text: ["partial"] },
    ]);
    const stream = anthropic().messages.stream({
      model: "fakeant/claude-fake",
      max_tokens: 64,
      messages: [{ role: "user", content: `${s.marker} hi` }],
    });
    const seen: string[] = [];
    stream.on("streamEvent", (e) => seen.push(e.type));
    const failure = await stream.finalMessage().catch((e) => e);
    expect(seen[0]).toBe("message_start");
    expect(failure).toBeInstanceOf(Anthropic.APIError);
    expect(failure.error).toMatchObject({ type: "error", error: { type: "api_error" } });
  });
});
