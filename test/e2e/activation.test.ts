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

  it("mcpServers are refused, not silently ignored", async () => {
    const r = await api("POST", `/v1/sessions/${sessionId()}/turns`, { mcpServers: { github: { url: "https://mcp.example/github" } } });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ code: "invalid_request", path: "mcpServers" });
  });
});
