import { describe, expect, it } from "vitest";
import { boundedApiHeader, type McpApiHeader } from "../../../src/mcp";

const bytes = (v: unknown) => new TextEncoder().encode(JSON.stringify(v)).length;
const schema = (kb: number) => ({ type: "object", properties: { p: { type: "string", description: "é".repeat(kb * 512) } } });

function header(tools: number, schemaKb: number, headerChars: number): McpApiHeader {
  return {
    server: "hostile",
    header: "declare namespace MCP.hostile {\n" + "  // ✓ line\n".repeat(Math.ceil(headerChars / 12)),
    tools: Array.from({ length: tools }, (_, i) => ({ name: `tool${i}`, mcpName: `tool-${i}`, inputSchema: schema(i === 0 ? schemaKb : 1) })),
  };
}

describe("boundedApiHeader", () => {
  it("a header that fits is returned as is, without omitted", () => {
    const h = header(2, 1, 200);
    expect(boundedApiHeader(h, 65_536)).toBe(h);
  });

  it("the largest schema goes first, and only as many as needed", () => {
    const h = boundedApiHeader(header(3, 100, 200), 65_536);
    expect(h.tools[0]!.inputSchema).toEqual({ omitted: true, bytes: bytes(schema(100)) });
    expect(h.tools[1]!.inputSchema).toEqual(schema(1));
    expect(h.omitted).toEqual({ schemas: 1 });
    expect(bytes(h)).toBeLessThanOrEqual(65_536);
  });

  it.each([1024, 2048, 5000, 20_000])("always the declared shape within %d bytes: schemas, then header text, then tools", (max) => {
    const h = boundedApiHeader(header(40, 50, 30_000), max);
    expect(bytes(h)).toBeLessThanOrEqual(max);
    expect(Object.keys(h).sort()).toEqual(["header", "omitted", "server", "tools"]);
    expect(h.server).toBe("hostile");
    expect(h.header).toMatch(/\n\/\/ …\[\d+ more characters: the header is over maxOutputBytes\]\n$/);
    expect(h.omitted!.headerChars).toBeGreaterThan(0);
    // Tools go only when even an empty header leaves no room; what is left is a prefix of the list.
    expect(h.tools.map((t) => t.name)).toEqual(Array.from({ length: h.tools.length }, (_, i) => `tool${i}`));
    expect(h.tools.length + (h.omitted!.tools ?? 0)).toBe(40);
    // Dropping tools frees less than one tool's room: the header gets only that much back.
    if (h.omitted!.tools) expect(h.header.length).toBeLessThan(max / 2);
  });
});
