import { describe, expect, it } from "vitest";
import { api, sessionId } from "./helpers";

async function open(body: unknown) {
  const r = await api("POST", `/v1/sessions/${sessionId()}/turns`, body);
  expect(r.status).toBe(201);
  return r.json;
}

describe("activation through the turn route (config → surface)", () => {
  it('"auto" engages for a preferred model and keeps direct tools for capable or unknown ones', async () => {
    expect((await open({ agentId: "autoagent", model: "openai/gpt-5.6" })).codeModeEngaged).toBe(true);
    expect((await open({ agentId: "autoagent", model: "anthropic/claude-opus-5" })).codeModeEngaged).toBe(true);
    const reseller = await open({ agentId: "autoagent", model: "novita/moonshotai/kimi-k3" });
    expect(reseller.codeModeEngaged).toBe(false);
    expect(reseller.tools.map((t: any) => t.name)).toContain("shipping_list");
    expect((await open({ agentId: "autoagent", model: "ollama/llama3" })).codeModeEngaged).toBe(false);
    expect((await open({ agentId: "autoagent" })).codeModeEngaged).toBe(false);
  });

  it("a per-model false overrides the global true", async () => {
    expect((await open({ model: "openai/gpt-5.5" })).codeModeEngaged).toBe(false);
    expect((await open({ model: "openai/gpt-5.6" })).codeModeEngaged).toBe(true);
  });

  it("an agent with code mode off keeps the normal tools", async () => {
    const off = await open({ agentId: "off", model: "openai/gpt-5.6" });
    expect(off.codeModeEngaged).toBe(false);
    expect(off.tools.map((t: any) => t.name)).toEqual(["shipping_list", "shipping_get", "notes_write", "notes_read", "echo"]);
  });

  it("mcpServers are attached and reported, never silently ignored (an unreachable one with its error)", async () => {
    const r = await api("POST", `/v1/sessions/${sessionId()}/turns`, { mcpServers: { github: { url: "http://127.0.0.1:9/github" } } });
    expect(r.status).toBe(201);
    expect(r.json.mcpServers).toEqual([{ name: "github", namespace: "github", tools: 0, error: expect.stringContaining('MCP server "github"') }]);
  });
});
