import { describe, expect, it } from "vitest";
import { api, sessionId } from "../e2e/helpers";

// This project's gateway config leaves mcp.allowPrivateAddresses unset (the default): a turn's own
// MCP servers must be public hosts. (The other projects allow loopback: their MCP peers run there.)
describe("a turn's own MCP servers may not name local or private hosts", () => {
  it.each([
    ["http://127.0.0.1:9/mcp", "loopback"],
    ["http://localhost:9/mcp", "localhost"],
    ["http://api.localhost/mcp", "localhost"],
    ["http://0x7f.1/mcp", "loopback"],
    ["http://2130706433/mcp", "loopback"],
    ["http://10.1.2.3/mcp", "private"],
    ["http://169.254.169.254/latest", "link-local"],
    ["http://[::1]/mcp", "loopback"],
    ["http://[fd00::5]/mcp", "private"],
    ["http://[::ffff:192.168.1.9]/mcp", "private"],
  ])("%s is refused with 400 naming the field and the config key (%s)", async (url) => {
    const r = await api("POST", `/v1/sessions/${sessionId()}/turns`, { mcpServers: { local: { url } } });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ code: "invalid_request", path: "mcpServers.local.url" });
    expect(r.json.error.message).toMatch(/^MCP server "local": url points to .*mcp\.allowPrivateAddresses/);
  });

  it("on /chat too, before any turn or storage exists", async () => {
    const session = sessionId();
    const r = await api("POST", `/v1/sessions/${session}/chat`, {
      model: "fakeoai/gpt-fake",
      messages: [{ role: "user", content: "hi" }],
      mcpServers: { local: { url: "http://192.168.0.10/mcp" } },
    });
    expect(r.status).toBe(400);
    expect(r.json.error.path).toBe("mcpServers.local.url");
    expect((await api("DELETE", `/v1/sessions/${session}`)).status).toBe(404);
  });
});
