import { describe, expect, it } from "vitest";
import { toLanguageModelTools } from "../../../src/providers/to-language-model-prompt";

// Direct exposure sends the turn's tools with every model round trip: one tools array is converted once.

const tools = [
  { name: "alpha", description: "a", parameters: { type: "object" } },
  { name: "beta.gamma", description: "b", parameters: { type: "object", properties: { x: { type: "string" } } } },
];

describe("tool definitions for the wire client", () => {
  it("the same tools array under the same wire names gives the same definitions, converted once", () => {
    const wire = (n: string) => n.replace(".", "_");
    const first = toLanguageModelTools(tools, wire);
    expect(toLanguageModelTools(tools, wire)).toBe(first);
    expect(first).toEqual([
      { type: "function", name: "alpha", description: "a", inputSchema: tools[0]!.parameters },
      { type: "function", name: "beta_gamma", description: "b", inputSchema: tools[1]!.parameters },
    ]);
  });

  it("other wire names (a round whose history adds an alias) or another array convert again", () => {
    const a = toLanguageModelTools(tools, (n) => n.replace(".", "_"));
    const b = toLanguageModelTools(tools, (n) => n.replace(".", "_x"));
    expect(b).not.toBe(a);
    expect(b[1]!.name).toBe("beta_xgamma");
    expect(toLanguageModelTools([...tools], (n) => n.replace(".", "_x"))).not.toBe(b);
  });
});
