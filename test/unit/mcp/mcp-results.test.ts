import { describe, expect, it } from "vitest";
import { projectPromptsGet, projectPromptsList, projectResourcesList, projectResourcesRead, projectToolResult } from "../../../src/mcp";

describe("result projection", () => {
  it("keeps content blocks whole (annotations, block _meta, unknown keys) and drops top-level _meta and extras", () => {
    const block = { type: "text", text: "hi", annotations: { audience: ["user"], priority: 0.5 }, _meta: { "app/x": 1 }, extra: true };
    const raw = { content: [block], structuredContent: { a: 1 }, isError: false, _meta: { secret: "app-private" }, toolResult: "legacy", other: 1 };
    expect(projectToolResult(raw)).toEqual({ content: [block], structuredContent: { a: 1 }, isError: false });
  });

  it("isError: true is kept as data; absent fields stay absent; undefined fields vanish", () => {
    expect(projectToolResult({ content: [{ type: "text", text: "bad" }], isError: true })).toEqual({
      content: [{ type: "text", text: "bad" }],
      isError: true,
    });
    const bare = projectToolResult({ content: [{ type: "text", text: "x", annotations: undefined }] });
    expect(bare).toEqual({ content: [{ type: "text", text: "x" }] });
    expect(Object.keys(bare)).toEqual(["content"]);
    expect(Object.keys(bare.content[0] as object)).toEqual(["type", "text"]);
    expect(projectToolResult({})).toEqual({ content: [] });
  });

  it("returns a copy sharing nothing with the input", () => {
    const raw = { content: [{ type: "text", text: "x" }] };
    const out = projectToolResult(raw);
    (out.content[0] as { text: string }).text = "changed";
    expect(raw.content[0]!.text).toBe("x");
  });

  it("resources and prompts keep their native shapes, without top-level _meta", () => {
    const meta = { _meta: { p: 1 } };
    expect(projectResourcesList({ resources: [{ uri: "a://1", name: "one" }], nextCursor: "n", ...meta })).toEqual({
      resources: [{ uri: "a://1", name: "one" }],
      nextCursor: "n",
    });
    expect(projectResourcesList({ resources: [] })).toEqual({ resources: [] });
    expect(projectResourcesRead({ contents: [{ uri: "a://1", text: "t", _meta: { keep: 1 } }], ...meta })).toEqual({
      contents: [{ uri: "a://1", text: "t", _meta: { keep: 1 } }],
    });
    expect(projectPromptsList({ prompts: [{ name: "p" }], ...meta })).toEqual({ prompts: [{ name: "p" }] });
    expect(projectPromptsGet({ messages: [{ role: "user", content: { type: "text", text: "m" } }], description: "d", ...meta })).toEqual({
      messages: [{ role: "user", content: { type: "text", text: "m" } }],
      description: "d",
    });
  });
});
