import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { beforeAll, describe, expect, it } from "vitest";
import { classifyMcpError, loadMcpSdk, McpNetworkError, sanitizeServerText } from "../../../src/mcp";

describe("failure classification", () => {
  const op = { server: "s", what: 'tools/call "t"' };
  // The SDK's errors are recognised once the SDK is loaded (as connecting loads it).
  beforeAll(() => loadMcpSdk());

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
    expect(failure.message).toContain("bad token *** stack at x");
    expect(sanitizeServerText("x".repeat(1000), []).length).toBe(301);
    expect(sanitizeServerText("abc 1 2", ["1"])).toBe("abc 1 2");
  });
});

describe("server text never carries part of a credential", () => {
  it("masks fragments of header values and URL tokens a server echoes back", async () => {
    const { sanitizeServerText } = await import("../../../src/mcp");
    const secrets = ["Bearer SECRETHEADER", "http://127.0.0.1:18777/evil?token=SECRETQUERY", "token=SECRETQUERY"];
    const out = sanitizeServerText("MCP error -32602: bad token SECRETHEADER q=SECRET and HEADERx", secrets);
    expect(out).not.toMatch(/SECRE|HEADER|CRETQ/);
    expect(out).toContain("MCP error -32602: bad token ***");
    expect(sanitizeServerText("Invalid arguments for tool echo", secrets)).toBe("Invalid arguments for tool echo");
  });
});
