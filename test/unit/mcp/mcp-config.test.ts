import { describe, expect, it } from "vitest";
import { resolveHeaders, resolveMcpTarget, validateServerUrl } from "../../../src/mcp";

describe("server config: URL and env: secrets", () => {
  it("accepts http(s) URLs only, without credentials, never repeating the URL", () => {
    expect(validateServerUrl("s", "https://mcp.example.com/mcp").ok).toBe(true);
    expect(validateServerUrl("s", "http://127.0.0.1:3001/mcp").ok).toBe(true);
    expect(validateServerUrl("s", "ftp://x/y")).toEqual({
      ok: false,
      code: "mcp_invalid_config",
      message: 'MCP server "s": url must use http or https, not "ftp"',
    });
    expect(validateServerUrl("s", "mcp.example.com")).toEqual({
      ok: false,
      code: "mcp_invalid_config",
      message: 'MCP server "s": url must be an absolute http(s) URL',
    });
    expect(validateServerUrl("s", 42).ok).toBe(false);
    const creds = validateServerUrl("s", "https://user:hunter22@x.example/mcp");
    expect(!creds.ok && creds.message).toBe('MCP server "s": url must not contain a user name or password; send credentials in a header');
  });

  it("resolves env:NAME from the Worker env for gateway servers; literals stay", () => {
    const r = resolveHeaders("gh", { authorization: "env:GH_TOKEN", "x-literal": "plain" }, { GH_TOKEN: "Bearer abc" }, "gateway");
    expect(r).toEqual({ ok: true, headers: { authorization: "Bearer abc", "x-literal": "plain" } });
  });

  it("a missing secret is named, its header too, and no value appears", () => {
    const r = resolveHeaders("gh", { authorization: "env:GH_TOKEN" }, { OTHER: "zzz-value" }, "gateway");
    expect(r).toEqual({
      ok: false,
      code: "mcp_invalid_config",
      message: 'MCP server "gh": header "authorization" references the Worker secret GH_TOKEN, which is not set',
    });
    expect(resolveHeaders("gh", { a: "env:X" }, { X: 5 }, "gateway").ok).toBe(false);
    expect(resolveHeaders("gh", { a: "env:toString" }, {}, "gateway").ok).toBe(false);
  });

  it("a per-turn server cannot reference Worker secrets", () => {
    const r = resolveHeaders("mine", { authorization: "env:GATEWAY_TOKENS" }, { GATEWAY_TOKENS: "{...}" }, "turn");
    expect(!r.ok && r.message).toBe(
      'MCP server "mine": header "authorization" references the Worker secret GATEWAY_TOKENS; "env:" references are allowed only in gateway config (mcp.servers), not in a turn\'s mcpServers',
    );
  });

  it("refuses malformed header names, values with line breaks and bad secret names", () => {
    expect(resolveHeaders("s", { "bad name": "v" }, {}, "turn").ok).toBe(false);
    const crlf = resolveHeaders("s", { a: "v\r\nInjected: 1" }, {}, "turn");
    expect(!crlf.ok && crlf.message).toBe('MCP server "s": header "a" contains a line break or NUL');
    expect(resolveHeaders("s", { a: "env:1BAD" }, {}, "gateway").ok).toBe(false);
  });

  it("resolveMcpTarget combines both checks", () => {
    const r = resolveMcpTarget("s", { url: "https://x.example/mcp", headers: { k: "env:K" } }, { K: "v" }, "gateway");
    expect(r.ok && r.target.headers).toEqual({ k: "v" });
    expect(r.ok && r.target.url.href).toBe("https://x.example/mcp");
  });
});
