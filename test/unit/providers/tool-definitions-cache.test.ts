import { describe, expect, it } from "vitest";
import { toLanguageModelTools } from "../../../src/providers/to-language-model-prompt";
import { modelFor } from "./reader-comparison";
import { callWith, restoreLeanWire } from "./request-comparison";

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

describe("a tools array that grew in place after a call", () => {
  restoreLeanWire();
  const refused = () => Promise.resolve(new Response('{"error":{"message":"no"}}', { status: 400, headers: { "content-type": "application/json" } }));

  it("converts again for the wire client, the new tool included", () => {
    const grown = [...tools];
    const wire = (n: string) => n.replace(".", "_");
    expect(toLanguageModelTools(grown, wire)).toHaveLength(2);
    grown.push({ name: "delta", description: "d", parameters: { type: "object" } });
    expect(toLanguageModelTools(grown, wire).map((t) => t.name)).toEqual(["alpha", "beta_gamma", "delta"]);
  });

  for (const api of ["openai-completions", "anthropic-messages"] as const) {
    it(`${api}: the next request we build sends the new tool too`, async () => {
      const grown = [...tools];
      const model = { ...modelFor(api), ...(api === "anthropic-messages" ? { wireModel: "claude-sonnet-4-5" } : {}) };
      const names = async () => {
        const { sent } = await callWith(true, model, { messages: [{ role: "user", content: "hi" }], tools: grown }, refused);
        const body = JSON.parse(sent[0]!.body) as { tools: Array<{ name?: string; function?: { name: string } }> };
        return body.tools.map((t) => t.function?.name ?? t.name);
      };
      const before = await names();
      expect(before).toHaveLength(2);
      grown.push({ name: "delta", description: "d", parameters: { type: "object" } });
      expect(await names()).toEqual([...before, "delta"]);
    });
  }
});
