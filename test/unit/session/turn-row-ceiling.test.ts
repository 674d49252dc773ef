import { describe, expect, it } from "vitest";
import { calledBytes, countersCeiling } from "../../../src/session/turn-row";
import { MAX_CALLED_TOOLS, type TurnSpec } from "../../../src/turns";
import { toolSearchId } from "../../../src/tool-search";

const utf8 = new TextEncoder();

describe("a turn row's counters ceiling", () => {
  it("is the bytes of the largest `called` entries as JSON, for names with escapes, non-ASCII, pairs and lone surrogates", () => {
    const names = ["plain", 'quo"te\\back', "tab\there", "ümlaut", "日本語", "emoji😀x", "lone\ud800x", "end\udc00", "ctl\u0001"];
    const entries = names.map((toolName, i) => ({ toolName, source: i % 2 ? "client" : "openclaw", origin: "core" }));
    const spec = { catalog: { entries, direct: [] } } as unknown as TurnSpec;
    const max = Number.MAX_SAFE_INTEGER;
    const base = utf8.encode(JSON.stringify({ search: max, describe: max, call: max, called: [] })).length;
    const each = entries
      .map((e) => calledBytes(e.toolName, toolSearchId(e as never), e.source === "client" ? "client" : "openclaw"))
      .sort((a, b) => b - a)
      .slice(0, MAX_CALLED_TOOLS);
    expect(countersCeiling(spec)).toBe(base + each.reduce((n, b) => n + b, 0));
  });
});
