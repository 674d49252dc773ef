import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { describe, expect, it } from "vitest";
import {
  classifyMcpError,
  collectPages,
  McpNetworkError,
  projectPromptsGet,
  projectPromptsList,
  projectResourcesList,
  projectResourcesRead,
  projectToolResult,
  resolveHeaders,
  resolveMcpTarget,
  sanitizeServerText,
  validateServerUrl,
  type McpPage,
} from "../../src/mcp";

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

describe("valueTooDeep: nesting of a parsed value, without recursion", () => {
  it("counts containers from 1 at the root; 100 000 levels do not overflow", async () => {
    const { valueTooDeep } = await import("../../src/bridge");
    let deep: unknown = "leaf";
    for (let i = 0; i < 100_000; i++) deep = { a: [deep] };
    expect(valueTooDeep(deep)).toBe(true);
    expect(valueTooDeep({ a: { b: [1] } }, 3)).toBe(false);
    expect(valueTooDeep({ a: { b: [[1]] } }, 3)).toBe(true);
    expect(valueTooDeep("x", 0)).toBe(false);
  });
});

describe("collectPages: cursor pagination with caps", () => {
  function pages(n: number, perPage: number) {
    const calls: Array<string | undefined> = [];
    const fetchPage = async (cursor: string | undefined): Promise<McpPage<number>> => {
      calls.push(cursor);
      const i = cursor === undefined ? 0 : Number(cursor.slice(1));
      const items = Array.from({ length: perPage }, (_, k) => i * perPage + k);
      return i + 1 < n ? { items, nextCursor: `c${i + 1}` } : { items };
    };
    return { calls, fetchPage };
  }

  it("follows nextCursor to the end, in order, passing each cursor back", async () => {
    const { calls, fetchPage } = pages(3, 2);
    expect(await collectPages(fetchPage, { maxPages: 50, maxItems: 1000, maxBytes: 1e9 })).toEqual({
      ok: true,
      items: [0, 1, 2, 3, 4, 5],
      pages: 3,
      bytes: 0,
    });
    expect(calls).toEqual([undefined, "c1", "c2"]);
  });

  it("exactly maxPages pages and maxItems items are fine; one more page or item is refused", async () => {
    expect((await collectPages(pages(5, 2).fetchPage, { maxPages: 5, maxItems: 10, maxBytes: 1e9 })).ok).toBe(true);
    expect(await collectPages(pages(6, 1).fetchPage, { maxPages: 5, maxItems: 100, maxBytes: 1e9 })).toEqual({
      ok: false,
      message: "needs more than 5 pages; refused (the limit keeps one turn's catalog bounded)",
    });
    expect(await collectPages(pages(3, 4).fetchPage, { maxPages: 50, maxItems: 10, maxBytes: 1e9 })).toEqual({
      ok: false,
      message: "lists more than 10 items; refused (the limit keeps one turn's catalog bounded)",
    });
  });

  it("pages past maxBytes (as the fetcher measures them) and a page the fetcher refuses end the listing, refused", async () => {
    const sized = async (cursor: string | undefined): Promise<McpPage<number>> => ({ items: [1], bytes: 600, nextCursor: cursor ? undefined : "c1" });
    expect(await collectPages(sized, { maxPages: 50, maxItems: 1000, maxBytes: 1200 })).toEqual({ ok: true, items: [1, 1], pages: 2, bytes: 1200 });
    expect(await collectPages(sized, { maxPages: 50, maxItems: 1000, maxBytes: 1000 })).toEqual({
      ok: false,
      message: "lists more than 1000 bytes of tools (names, descriptions, schemas); refused (the limit keeps one turn's stored catalog bounded)",
    });
    expect(await collectPages(async () => ({ refused: "lists a bad tool" }), { maxPages: 50, maxItems: 1000, maxBytes: 1e9 })).toEqual({
      ok: false,
      message: "lists a bad tool",
    });
  });

  it("a repeated cursor is a loop, refused", async () => {
    let calls = 0;
    const r = await collectPages(async () => (calls++, { items: [1], nextCursor: "same" }), { maxPages: 50, maxItems: 1000, maxBytes: 1e9 });
    expect(r).toEqual({ ok: false, message: "repeated a pagination cursor after 2 pages; refused (a cursor loop)" });
    expect(calls).toBe(2);
  });

  it("a fetcher error propagates", async () => {
    await expect(collectPages(async () => Promise.reject(new Error("boom")), { maxPages: 2, maxItems: 2, maxBytes: 1e9 })).rejects.toThrow("boom");
  });
});

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

describe("failure classification", () => {
  const op = { server: "s", what: 'tools/call "t"' };

  it("by class and code, never by message", () => {
    expect(classifyMcpError(new McpNetworkError("Network connection lost."), op, []).code).toBe("mcp_unreachable");
    expect(classifyMcpError(new McpError(ErrorCode.RequestTimeout, "Request timed out"), op, []).code).toBe("mcp_timeout");
    expect(classifyMcpError(new McpError(ErrorCode.ConnectionClosed, "timed out"), op, []).code).toBe("mcp_unreachable");
    expect(classifyMcpError(new McpError(ErrorCode.InvalidParams, "Unknown tool"), op, [], true)).toEqual({
      ok: false,
      code: "mcp_tool_error",
      message: 'MCP server "s": tools/call "t" failed: MCP error -32602: Unknown tool',
    });
    expect(classifyMcpError(new McpError(ErrorCode.InvalidParams, "x"), op, [], false).code).toBe("mcp_protocol_error");
    expect(classifyMcpError(new StreamableHTTPError(503, "Error POSTing"), op, [])).toEqual({
      ok: false,
      code: "mcp_unreachable",
      message: 'MCP server "s": tools/call "t" failed: the server answered HTTP 503',
    });
    expect(classifyMcpError(new StreamableHTTPError(-1, "Unexpected content type: text/html"), op, []).code).toBe("mcp_protocol_error");
    expect(classifyMcpError(new TypeError("network timeout"), op, []).code).toBe("mcp_protocol_error");
    expect(classifyMcpError("a string", op, []).message).toBe('MCP server "s": tools/call "t" failed: the answer could not be read as MCP');
  });

  it("runtime text never reaches a message: an unknown error (workerd's internal error reference) and a network error get fixed text", () => {
    const internal = classifyMcpError(new Error("internal error; reference = 0123456789abcdef"), op, []);
    expect(internal).toEqual({
      ok: false,
      code: "mcp_protocol_error",
      message: 'MCP server "s": tools/call "t" failed: the answer could not be read as MCP',
    });
    const network = classifyMcpError(new McpNetworkError("internal error; reference = 0123456789abcdef"), op, []);
    expect(network.message).toBe('MCP server "s": tools/call "t" failed: the server could not be reached');
    expect(classifyMcpError(new SyntaxError("Unexpected token n in JSON"), op, []).message).toBe(
      'MCP server "s": tools/call "t" failed: the answer is not valid JSON',
    );
  });

  it("server text loses secrets we sent, control characters and length", () => {
    const echoed = new McpError(ErrorCode.InvalidRequest, "bad token Bearer s3cr3t-token\nstack\u202e at x");
    const failure = classifyMcpError(echoed, op, ["Bearer s3cr3t-token"]);
    expect(failure.message).not.toContain("s3cr3t");
    expect(failure.message).toContain("bad token [redacted] stack at x");
    expect(sanitizeServerText("x".repeat(1000), []).length).toBe(301);
    expect(sanitizeServerText("abc 1 2", ["1"])).toBe("abc 1 2");
  });
});

describe("server text never carries part of a credential", () => {
  it("masks fragments of header values and URL tokens a server echoes back", async () => {
    const { sanitizeServerText } = await import("../../src/mcp");
    const secrets = ["Bearer SECRETHEADER", "http://127.0.0.1:18777/evil?token=SECRETQUERY", "token=SECRETQUERY"];
    const out = sanitizeServerText("MCP error -32602: bad token SECRETHEADER q=SECRET and HEADERx", secrets);
    expect(out).not.toMatch(/SECRE|HEADER|CRETQ/);
    expect(out).toContain("MCP error -32602: bad token [redacted]");
    expect(sanitizeServerText("Invalid arguments for tool echo", secrets)).toBe("Invalid arguments for tool echo");
  });
});

describe("privateAddress: hosts a turn's own MCP server may not name", async () => {
  const { privateAddress } = await import("../../src/mcp/private-address");
  it.each([
    "127.0.0.1",
    "127.255.0.9",
    "0.0.0.0",
    "10.0.0.1",
    "100.64.0.1",
    "169.254.169.254",
    "172.16.0.1",
    "172.31.255.255",
    "192.168.1.1",
    "192.0.0.8",
    "198.18.0.1",
    "224.0.0.1",
    "255.255.255.255",
    "[::]",
    "[::1]",
    "[fc00::1]",
    "[fe80::1]",
    "[ff02::1]",
    "[::ffff:127.0.0.1]",
    "[64:ff9b::10.0.0.1]",
    "localhost",
    "x.localhost",
  ])("%s is private", (host) => {
    expect(privateAddress(new URL(`http://${host}/`))).toBeDefined();
  });
  it.each(["8.8.8.8", "172.32.0.1", "100.128.0.1", "192.169.0.1", "[2606:4700::1111]", "[::ffff:8.8.8.8]", "example.com", "localhost.example.com"])(
    "%s is public",
    (host) => {
      expect(privateAddress(new URL(`http://${host}/`))).toBeUndefined();
    },
  );
});
