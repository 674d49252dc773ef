import { describe, expect, it } from "vitest";
import {
  assignCallableNames,
  buildCatalog,
  guestDescription,
  guestMetadata,
  inputHint,
  isJsSafeName,
  normalizeToolName,
  outputHint,
  SearchIndex,
  stem,
} from "../../../src/catalog";
import { defineToolPlugin } from "../../../src/tools";
import type { ToolDefinition, ToolPlugin } from "../../../src/tools";
import { QUICK_INDEX_MAX_CHARS, QUICK_INDEX_MAX_ENTRIES } from "../../../src/limits";
import { renderQuickIndex } from "../../../src/turns";
import { GuestVm, InterruptGuard } from "../../../src/runtime";
import { modelSurface } from "../../../src/turns";

const obj = (properties: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({ type: "object", properties, ...extra });
function tool(name: string, extra: Partial<ToolDefinition> = {}): ToolDefinition {
  return { name, description: `${name} tool`, parameters: obj(), execute: () => null, ...extra };
}
function plugin(id: string, origin: ToolPlugin["origin"], tools: ToolDefinition[]): ToolPlugin {
  return defineToolPlugin({ id, name: id, description: id, origin, tools: () => tools });
}

// Seed: Tool names and collisions.
describe("callable names", () => {
  const table: Array<[string, string | RegExp]> = [
    ["web_search", "web_search"],
    ["sessions_spawn", "sessions_spawn"],
    ["llm-task", "llm_task"],
    ["web search", "web_search"],
    ["2fa", "tool_2fa"],
    ["delete", /^delete_[0-9a-f]{4,}$/],
    ["catalog", /^catalog_[0-9a-f]{4,}$/],
    ["text", /^text_[0-9a-f]{4,}$/],
    ["MCP", /^MCP_[0-9a-f]{4,}$/],
    ["yield_control", /^yield_control_[0-9a-f]{4,}$/],
    ["setTimeout", /^setTimeout_[0-9a-f]{4,}$/],
    ["exec", "exec"],
    // Built-ins the list once missed, and Object.prototype / protocol names (a `then` global made globalThis thenable).
    ["atob", /^atob_[0-9a-f]{4,}$/],
    ["DisposableStack", /^DisposableStack_[0-9a-f]{4,}$/],
    ["then", /^then_[0-9a-f]{4,}$/],
    ["toString", /^toString_[0-9a-f]{4,}$/],
    ["constructor", /^constructor_[0-9a-f]{4,}$/],
    ["__proto__", /^_proto___[0-9a-f]{4,}$/],
  ];
  for (const [raw, expected] of table) {
    it(`${JSON.stringify(raw)} → ${expected}`, () => {
      const names = assignCallableNames([{ id: "id-" + raw, toolName: raw }]);
      const got = names.get("id-" + raw)!;
      if (typeof expected === "string") expect(got).toBe(expected);
      else expect(got).toMatch(expected);
    });
  }

  it("an exact safe name wins its spelling over a normalized collision, in any order", () => {
    for (const order of [
      ["a-b", "a_b"],
      ["a_b", "a-b"],
    ]) {
      const names = assignCallableNames(order.map((n) => ({ id: "id:" + n, toolName: n })));
      expect(names.get("id:a_b")).toBe("a_b");
      expect(names.get("id:a-b")).toMatch(/^a_b_[0-9a-f]{4,}$/);
    }
  });

  it("two tools normalizing to one name get distinct deterministic suffixes", () => {
    const tools = [
      { id: "x1", toolName: "get.item" },
      { id: "x2", toolName: "get item" },
      { id: "x3", toolName: "get-item" },
    ];
    const a = assignCallableNames(tools);
    const b = assignCallableNames(tools);
    expect([...a.values()]).toEqual([...b.values()]);
    expect(new Set(a.values()).size).toBe(3);
    expect(a.get("x1")).toBe("get_item");
  });

  it("every own global of a fresh guest VM and every Object.prototype name is reserved (the static list cannot drift)", async () => {
    const host = { request() {}, output() {}, cancel() {} };
    const vm = await GuestVm.create({ memoryLimitBytes: 32 << 20 }, new InterruptGuard({ now: () => Date.now() }, Date.now() + 10_000, 10_000), host);
    try {
      // As a cell sees it: the prelude ran and the (empty) tool set is installed.
      vm.installTools("[]");
      vm.start("return Object.getOwnPropertyNames(globalThis).concat(Object.getOwnPropertyNames(Object.prototype))");
      const names = JSON.parse(vm.valueJson()!) as string[];
      expect(names).toContain("atob");
      expect(names.filter(isJsSafeName)).toEqual([]);
    } finally {
      vm.dispose();
    }
  });

  it("normalization rules", () => {
    expect(normalizeToolName("a.b/c")).toBe("a_b_c");
    expect(normalizeToolName("9lives")).toBe("tool_9lives");
    expect(normalizeToolName("")).toBe("tool_");
  });
});

describe("catalog construction", () => {
  const core = plugin("core", "core", [tool("read"), tool("exec", { description: "shell exec" })]);
  const bundled = plugin("b", "bundled", [tool("shipping_list"), tool("wait"), tool("tool_search"), tool("tool_call")]);
  const external = plugin("e", "external", [tool("read", { description: "external read" }), tool("screen", { directOnly: true })]);

  it("orders sources core, bundled, external, client and keeps one winner per exact name", () => {
    const c = buildCatalog({
      plugins: [external, bundled, core],
      clientTools: [{ name: "shipping_list", description: "client shadow" }, { name: "ask" }],
      policy: {},
    });
    expect(c.entries.map((e) => [e.toolName, e.origin])).toEqual([
      ["read", "core"],
      ["exec", "core"],
      ["shipping_list", "client"],
      ["ask", "client"],
    ]);
    // Between plugins the first (core) registration stands; a client tool shadows a plugin tool.
    expect(c.entries.find((e) => e.toolName === "read")!.description).toBe("read tool");
    expect(c.entries.find((e) => e.toolName === "shipping_list")!.description).toBe("client shadow");
  });

  it("control tools never enter the catalog; the shell exec does and keeps its name", () => {
    const c = buildCatalog({ plugins: [core, bundled], clientTools: [{ name: "exec" }, { name: "tool_describe" }], policy: {} });
    const names = c.entries.map((e) => e.toolName);
    for (const control of ["wait", "tool_search", "tool_call", "tool_describe", "tool_search_code"]) expect(names).not.toContain(control);
    expect(c.entries.find((e) => e.toolName === "exec")).toMatchObject({ origin: "core", callableName: "exec" });
  });

  it("direct-only tools stay model-visible and out of the catalog", () => {
    const c = buildCatalog({ plugins: [external], policy: {} });
    expect(c.entries.map((e) => e.toolName)).toEqual(["read"]);
    expect(c.direct.map((e) => e.toolName)).toEqual(["screen"]);
    expect(modelSurface(c, { kind: "code_mode", languages: ["javascript"] }).map((t) => t.name)).toEqual(["exec", "wait", "screen"]);
  });

  it("allow/deny: deny wins, prefix patterns, empty allow allows nothing", () => {
    const plugins = [core, bundled];
    expect(buildCatalog({ plugins, policy: { deny: ["read"] } }).entries.map((e) => e.toolName)).toEqual(["exec", "shipping_list"]);
    expect(buildCatalog({ plugins, policy: { allow: ["ship*"] } }).entries.map((e) => e.toolName)).toEqual(["shipping_list"]);
    expect(buildCatalog({ plugins, policy: { allow: ["read"], deny: ["read"] } }).entries).toEqual([]);
    expect(buildCatalog({ plugins, policy: { allow: [] } }).entries).toEqual([]);
  });

  it("opaque ids are deterministic across equivalent tool sets and never reach guest metadata or the surface", () => {
    const a = buildCatalog({ plugins: [core, bundled], policy: {} });
    const b = buildCatalog({ plugins: [core, bundled], policy: {} });
    expect(a.entries.map((e) => e.id)).toEqual(b.entries.map((e) => e.id));
    const visible = JSON.stringify([
      a.entries.map(guestMetadata),
      a.entries.map(guestDescription),
      modelSurface(a, { kind: "code_mode", languages: ["javascript"] }),
    ]);
    for (const e of a.entries) expect(visible).not.toContain(e.id);
  });
});

describe("hints", () => {
  it("input hints keep numeric bounds as comments", () => {
    const hint = inputHint(
      obj({ path: { type: "string" }, offset: { type: "integer", minimum: 1 }, limit: { type: "number", maximum: 100 } }, { required: ["path"] }),
    );
    expect(hint).toBe("{ path: string; offset?: number /* integer, >= 1 */; limit?: number /* <= 100 */ }");
  });

  it("output hints only for complete closed schemas", () => {
    const closed = {
      type: "array",
      items: obj(
        { id: { type: "string" }, paid: { type: "boolean" }, tons: { type: "number" } },
        { required: ["id", "paid", "tons"], additionalProperties: false },
      ),
    };
    expect(outputHint(closed)).toBe("Array<{ id: string; paid: boolean; tons: number }>");
    expect(outputHint({ type: "array", items: obj({ id: { type: "string" } }) })).toBeUndefined(); // open object
    expect(outputHint(obj({ a: {} }, { additionalProperties: false }))).toBeUndefined(); // unknown member
    expect(outputHint(undefined)).toBeUndefined();
  });

  it("client entries use input unknown and never get output hints; describe() carries the full schema", () => {
    const c = buildCatalog({
      plugins: [],
      clientTools: [{ name: "ask", description: "Ask", parameters: obj({ q: { type: "string" } }) }],
      policy: {},
    });
    const meta = guestMetadata(c.entries[0]!);
    expect(meta).toEqual({ callableName: "ask", toolName: "ask", description: "Ask", source: "client", input: "unknown" });
    expect(guestDescription(c.entries[0]!)).toMatchObject({ name: "ask", parameters: obj({ q: { type: "string" } }) });
    expect(guestDescription(c.entries[0]!)).not.toHaveProperty("outputSchema");
  });
});

describe("quick index", () => {
  const many = plugin(
    "many",
    "external",
    Array.from({ length: 120 }, (_, i) =>
      tool(`tool_${String(i).padStart(3, "0")}`, { parameters: obj({ q: { type: "string" } }, { required: ["q"] }) }),
    ),
  );

  it("is deterministic, bounded, and points to catalog.search when tools are omitted", () => {
    const c = buildCatalog({ plugins: [many], policy: {} });
    const first = renderQuickIndex(c.entries);
    expect(renderQuickIndex(buildCatalog({ plugins: [many], policy: {} }).entries)).toEqual(first);
    expect(first.lines.length).toBeLessThanOrEqual(QUICK_INDEX_MAX_ENTRIES);
    expect(first.lines.join("\n").length).toBeLessThanOrEqual(QUICK_INDEX_MAX_CHARS);
    expect(first.lines[0]).toBe("tool_000(input: { q: string }) -> ?");
    expect(first.omitted).toBe(120 - first.lines.length);
    const exec = modelSurface(c, { kind: "code_mode", languages: ["javascript", "typescript"] })[0]!;
    expect(exec.description).toContain(`${first.omitted} more tools are not listed`);
    expect(exec.description).toContain("catalog.search");
    expect(exec.description).toMatch(/-> \?, the output shape is unknown: return that call's raw value unchanged/);
    expect(exec.description).not.toContain("tool_119");
    expect(exec.description).not.toContain("tool_000 tool"); // no descriptions
  });
});

describe("search", () => {
  const entries = buildCatalog({
    plugins: [
      plugin("p", "external", [
        tool("github_create_issue", {
          description: "Create a new issue in a GitHub repository",
          parameters: obj({ owner: {}, repo: {}, title: {} }),
        }),
        tool("github_list_pull_requests", { description: "List pull requests of a repository" }),
        tool("slack_post_message", { description: "Post a message to a Slack channel", parameters: obj({ channel: {}, text: {} }) }),
        tool("calendar_create_event", { label: "Schedule meeting", description: "Create an event on a calendar" }),
      ]),
    ],
    policy: {},
  }).entries;
  const index = new SearchIndex(entries);

  it("ranks by name, label, description and parameter names", () => {
    expect(index.search("open an issue on github", 3)[0]!.toolName).toBe("github_create_issue");
    expect(index.search("send a message to a channel", 3)[0]!.toolName).toBe("slack_post_message");
    expect(index.search("schedule a meeting", 3)[0]!.toolName).toBe("calendar_create_event");
    expect(index.search("pull requests", 3)[0]!.toolName).toBe("github_list_pull_requests");
  });

  it("returns nothing for no match and respects the limit", () => {
    expect(index.search("zebra quantum", 5)).toEqual([]);
    expect(index.search("github", 1)).toHaveLength(1);
    expect(index.search("", 5)).toEqual([]);
  });
});

describe("search tokenization and expansion", () => {
  const index = new SearchIndex(
    buildCatalog({
      plugins: [
        plugin("p", "external", [
          tool("github_create_pull_request", { description: "Create a pull request on GitHub" }),
          tool("git_status", { description: "Show the working tree status of a local git checkout" }),
          tool("gmail_send_email", { description: "Send an email message" }),
          tool("calendar_create_event", { description: "Create a calendar event" }),
        ]),
      ],
      policy: {},
    }).entries,
  );

  it("keeps joined camelCase words (GitHub is not just git + hub)", () => {
    expect(index.search("GitHub pull request", 2)[0]!.toolName).toBe("github_create_pull_request");
  });

  it("stems inflections with Porter2: plurals, -ed and -ing forms meet", () => {
    expect(index.search("created pull requests", 1)[0]!.toolName).toBe("github_create_pull_request");
    expect(index.search("sending emails", 1)[0]!.toolName).toBe("gmail_send_email");
    expect(index.search("calendar events", 1)[0]!.toolName).toBe("calendar_create_event");
  });

  it("has no synonym or abbreviation tables: a query word must occur in the tool", () => {
    expect(index.search("PR", 5)).toEqual([]);
    expect(index.search("mail", 5)).toEqual([]);
  });

  it("stems consistently", () => {
    expect(stem("changed")).toBe(stem("change"));
    expect(stem("changing")).toBe(stem("changes"));
    expect(stem("queries")).toBe(stem("query"));
  });
});

describe("search matching beyond exact words", () => {
  const index = new SearchIndex(
    buildCatalog({
      plugins: [
        plugin("p", "external", [
          tool("auth_rotate", {
            description: "Rotate credentials",
            parameters: obj({ scope: { type: "string", description: "Which authentication realm to rotate" } }),
          }),
          tool("dir_list", { description: "List entries", parameters: obj({ path: { type: "string" } }) }),
        ]),
      ],
      policy: {},
    }).entries,
  );

  it("parameter descriptions count, weakly", () => {
    expect(index.search("authentication realm", 1)[0]!.toolName).toBe("auth_rotate");
  });

  it("a query word that prefixes an indexed word matches it", () => {
    expect(index.search("creden", 1)[0]!.toolName).toBe("auth_rotate");
    expect(index.search("cre", 1)).toEqual([]); // too short to expand
  });
});
