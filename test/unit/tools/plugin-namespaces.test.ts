import { describe, expect, it } from "vitest";
import { buildCatalog, Catalog } from "../../../src/catalog";
import { defineToolPlugin, type ToolNamespaceSpec } from "../../../src/tools";
import type { ToolDefinition } from "../../../src/tools";

const tool = (name: string, extra: Partial<ToolDefinition> = {}): ToolDefinition => ({
  name,
  description: `${name} tool`,
  parameters: { type: "object" },
  execute: () => null,
  ...extra,
});

/** A plugin with issues_list/issues_get/issues_close (and a direct-only screen) and the given namespaces. */
const issuesPlugin = (namespaces: Record<string, ToolNamespaceSpec>, id = "issues") =>
  defineToolPlugin({
    id,
    name: "Issues",
    description: "Issue tools.",
    namespaces,
    tools: () => [tool("issues_list"), tool("issues_get"), tool("issues_close"), tool("issues_screen", { directOnly: true })],
  });

const ISSUES: ToolNamespaceSpec = { methods: { list: "issues_list", get: "issues_get" } };

describe("defineToolPlugin checks namespaces when they are defined", () => {
  it("keeps methods in declaration order and requires every method's tool plus requiredTools", () => {
    const plugin = issuesPlugin({ Issues: { ...ISSUES, requiredTools: ["issues_close"], description: "Issues here." } });
    expect(plugin.namespaces).toEqual([
      {
        name: "Issues",
        methods: [
          { name: "list", tool: "issues_list" },
          { name: "get", tool: "issues_get" },
        ],
        requiredTools: ["issues_list", "issues_get", "issues_close"],
        description: "Issues here.",
      },
    ]);
    expect(Object.isFrozen(plugin.namespaces![0]!.methods)).toBe(true);
  });

  it("a plugin without namespaces has none", () => {
    expect(issuesPlugin({}).namespaces).toBeUndefined();
  });

  it.each([
    ["namespaces", "reserved"],
    ["MCP", "reserved"],
    ["API", "reserved"],
    ["catalog", "reserved"],
    ["console", "reserved"],
    ["Object", "reserved"],
    ["delete", "reserved"],
    ["then", "reserved"],
    ["__proto__", "reserved"],
    ["toString", "reserved"],
    ["my-issues", "must be a JavaScript identifier"],
    ["1issues", "must be a JavaScript identifier"],
  ])("refuses the global name %s (%s)", (name, why) => {
    // Computed keys: `__proto__` as a literal key would set the prototype, not name a namespace.
    expect(() => issuesPlugin({ [name]: ISSUES })).toThrow(new RegExp(`namespace "${name.replace(/\$/g, "\\$")}": .*${why}`));
  });

  it.each(["__proto__", "constructor", "prototype", "then", "toJSON", "valueOf", "hasOwnProperty", "__defineGetter__", "a-b", ""])(
    "refuses the method name %j",
    (method) => {
      const methods = JSON.parse(JSON.stringify({ [method]: "issues_list" })) as Record<string, string>;
      if (method === "__proto__") expect(Object.keys(methods)).toEqual(["__proto__"]); // an own key, as JSON.parse makes it
      expect(() => issuesPlugin({ Issues: { methods } })).toThrow(`method ${JSON.stringify(method)} is not allowed`);
    },
  );

  it("allows reserved words as method names: Issues.delete(...) is valid JavaScript", () => {
    expect(issuesPlugin({ Issues: { methods: { delete: "issues_close" } } }).namespaces![0]!.methods).toEqual([
      { name: "delete", tool: "issues_close" },
    ]);
  });

  it("refuses a method bound to another plugin's tool, an unknown tool or a direct-only tool", () => {
    expect(() => issuesPlugin({ Issues: { methods: { read: "read" } } })).toThrow('method read names "read", which is no tool of this plugin');
    expect(() => issuesPlugin({ Issues: { methods: { list: 42 as unknown as string } } })).toThrow("which is no tool of this plugin");
    expect(() => issuesPlugin({ Issues: { methods: { screen: "issues_screen" } } })).toThrow("direct-only tool issues_screen");
  });

  it("refuses no methods, malformed methods, unknown required tools and long descriptions", () => {
    expect(() => issuesPlugin({ Issues: { methods: {} } })).toThrow("declares no methods");
    expect(() => issuesPlugin({ Issues: { methods: ["issues_list"] as unknown as Record<string, string> } })).toThrow("methods must be an object");
    expect(() => issuesPlugin({ Issues: { ...ISSUES, requiredTools: ["nope"] } })).toThrow('requiredTools names "nope"');
    expect(() => issuesPlugin({ Issues: { ...ISSUES, description: "x".repeat(301) } })).toThrow("at most 300 characters");
  });
});

describe("a turn's catalog shows a namespace only when its plugin's tools are all there", () => {
  const plugin = issuesPlugin({ Issues: { ...ISSUES, requiredTools: ["issues_close"] } });
  const other = defineToolPlugin({ id: "other", name: "Other", description: "", tools: () => [tool("Issues"), tool("read")] });

  it("visible when every required tool is effective: methods bound by tool name, the plugin recorded", () => {
    const projection = buildCatalog({ plugins: [plugin], policy: {} });
    expect(projection.namespaces).toEqual([
      {
        name: "Issues",
        pluginId: "issues",
        methods: [
          { name: "list", toolName: "issues_list" },
          { name: "get", toolName: "issues_get" },
        ],
      },
    ]);
  });

  it("hidden when a required tool that no method calls is denied", () => {
    expect(buildCatalog({ plugins: [plugin], policy: { deny: ["issues_close"] } }).namespaces).toBeUndefined();
    expect(buildCatalog({ plugins: [plugin], policy: { allow: ["issues_*"] } }).namespaces).toHaveLength(1);
  });

  it("hidden when a client tool shadows one of its tools", () => {
    expect(buildCatalog({ plugins: [plugin], clientTools: [{ name: "issues_get" }], policy: {} }).namespaces).toBeUndefined();
  });

  it("a tool named like a registered namespace is suffixed, whether or not the namespace is visible this turn", () => {
    for (const policy of [{}, { deny: ["issues_close"] }]) {
      const entries = buildCatalog({ plugins: [plugin, other], policy }).entries;
      expect(entries.find((e) => e.toolName === "Issues")!.callableName).toMatch(/^Issues_[0-9a-f]{4,}$/);
      expect(entries.find((e) => e.toolName === "read")!.callableName).toBe("read");
    }
  });
});

describe("the host resolves only the namespace methods it declared", () => {
  const plugin = issuesPlugin({ Issues: ISSUES });
  const catalog = new Catalog(buildCatalog({ plugins: [plugin], policy: {} }));

  it("a declared method resolves to its plugin's catalog entry", () => {
    const hit = catalog.lookupNamespace("ns:Issues.get");
    expect(hit?.path).toBe("Issues.get");
    expect(hit?.entry).toMatchObject({ toolName: "issues_get", pluginId: "issues" });
  });

  it.each([
    "ns:Issues.__proto__",
    "ns:Issues.constructor",
    "ns:Issues.close",
    "ns:Issues.",
    "ns:Issues",
    "ns:Nope.list",
    "ns:.list",
    "issues_list",
    "mcp:Issues.list",
  ])("%s resolves to nothing", (key) => {
    expect(catalog.lookupNamespace(key)).toBeUndefined();
  });

  it("a stored namespace whose tool now belongs to someone else resolves to nothing", () => {
    const projection = buildCatalog({ plugins: [plugin], policy: {} });
    const tampered = new Catalog({ ...projection, namespaces: [{ ...projection.namespaces![0]!, pluginId: "someone-else" }] });
    expect(tampered.lookupNamespace("ns:Issues.list")).toBeUndefined();
  });
});
