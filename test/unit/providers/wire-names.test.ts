import { describe, expect, it } from "vitest";
import { wireNames } from "../../../src/providers/wire-names";
import type { ModelMessage } from "../../../src/providers";

const tool = (name: string) => ({ name, description: "", parameters: { type: "object" } });
const WIRE = /^[A-Za-z0-9_-]{1,64}$/;

describe("wireNames: tool names as providers accept them", () => {
  it("a name that fits is sent as it is", () => {
    const n = wireNames([tool("exec"), tool("everything__echo"), tool("a-b_C9")], []);
    expect(["exec", "everything__echo", "a-b_C9"].map(n.toWire)).toEqual(["exec", "everything__echo", "a-b_C9"]);
  });

  it("any other gets a deterministic alias that fits, mapped back; names that sanitize alike stay apart", () => {
    const names = ["my.server__get weather", "my server__get.weather", "天気__取得", "x".repeat(200)];
    const n = wireNames(names.map(tool), []);
    const aliases = names.map(n.toWire);
    for (const a of aliases) expect(a).toMatch(WIRE);
    expect(new Set(aliases).size).toBe(4);
    expect(aliases[0]).toMatch(/^my_server__get_weather_[0-9a-f]{8}$/);
    expect(aliases.map(n.fromWire)).toEqual(names);
    // The same names give the same aliases in a later request (replay).
    expect(names.map(wireNames(names.map(tool), []).toWire)).toEqual(aliases);
  });

  it("an alias never takes a name sent as it is: a clash gets a counter", () => {
    const alias = wireNames([tool("a.b")], []).toWire("a.b");
    const n = wireNames([tool("a.b"), tool(alias)], []);
    expect(n.toWire(alias)).toBe(alias);
    expect(n.toWire("a.b")).toBe(`${alias}_2`);
    expect(n.fromWire(`${alias}_2`)).toBe("a.b");
  });

  it("replayed calls and results are mapped too; a name the request never sent comes back unchanged", () => {
    const messages: ModelMessage[] = [
      { role: "assistant", content: "", toolCalls: [{ id: "1", name: "old.tool", input: {} }] },
      { role: "tool", toolCallId: "1", toolName: "old.tool", content: "ok" },
    ];
    const n = wireNames([], messages);
    expect(n.toWire("old.tool")).toMatch(/^old_tool_[0-9a-f]{8}$/);
    expect(n.fromWire("made_up")).toBe("made_up");
  });
});
