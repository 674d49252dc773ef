import { describe, expect, it } from "vitest";
import { assignMcpNames, normalizeMcpName } from "../../../src/mcp";
import { isJsSafeName } from "../../../src/catalog";
import { OBJECT_PROTOCOL_NAMES } from "../../../src/guest-names";

describe("normalizeMcpName: the documented rule", () => {
  it.each([
    ["createIssue", "createIssue"],
    ["echo", "echo"],
    ["listPRs", "listPRs"],
    ["create_issue", "createIssue"],
    ["take_snapshot", "takeSnapshot"],
    ["get-structured-content", "getStructuredContent"],
    ["get HTTP status", "getHTTPStatus"],
    ["Create_Issue", "CreateIssue"],
    ["__private__", "_private"],
    ["__init__", "init"],
    ["a.b/c", "aBC"],
    ["$ref-thing", "$refThing"],
    ["café-menu", "cafMenu"],
    ["get-2fa", "get2fa"],
  ])("tool %j → %j", (raw, expected) => {
    expect(normalizeMcpName(raw, "tool")).toBe(expected);
  });

  it("leading digits and reserved words get the _ prefix; nothing left gives unnamed", () => {
    expect(normalizeMcpName("2fa-check", "tool")).toBe("_2faCheck");
    expect(normalizeMcpName("delete", "tool")).toBe("_delete");
    expect(normalizeMcpName("new", "server")).toBe("_new");
    expect(normalizeMcpName("constructor", "tool")).toBe("_constructor");
    expect(normalizeMcpName("__proto__", "tool")).toBe("proto");
    expect(normalizeMcpName("", "tool")).toBe("unnamed");
    expect(normalizeMcpName("--", "tool")).toBe("unnamed");
    expect(normalizeMcpName("日本", "server")).toBe("unnamed");
  });

  it("protocol names (then, toJSON, every Object.prototype member) are reserved for tools and servers alike", () => {
    for (const kind of ["tool", "server"] as const) {
      expect(normalizeMcpName("then", kind)).toBe("_then");
      expect(normalizeMcpName("toJSON", kind)).toBe("_toJSON");
      expect(normalizeMcpName("to_JSON", kind)).toBe("_toJSON");
      expect(normalizeMcpName("has-own-property", kind)).toBe("_hasOwnProperty");
    }
    // One rule: every own name of Object.prototype is refused as a catalog global and renamed as an MCP member.
    const names = [...Object.getOwnPropertyNames(Object.prototype), ...OBJECT_PROTOCOL_NAMES];
    for (const name of names) {
      expect(isJsSafeName(name), name).toBe(false);
      const member = normalizeMcpName(name, "tool");
      expect(Object.getOwnPropertyNames(Object.prototype).includes(member) || OBJECT_PROTOCOL_NAMES.has(member), name).toBe(false);
    }
  });

  it("namespace members are reserved for tools only; index for servers only", () => {
    expect(normalizeMcpName("resources", "tool")).toBe("_resources");
    expect(normalizeMcpName("prompts", "tool")).toBe("_prompts");
    expect(normalizeMcpName("$api", "tool")).toBe("_$api");
    expect(normalizeMcpName("resources", "server")).toBe("resources");
    expect(normalizeMcpName("index", "server")).toBe("_index");
    expect(normalizeMcpName("index", "tool")).toBe("index");
  });

  it("server names from the seed", () => {
    expect(normalizeMcpName("chrome-devtools", "server")).toBe("chromeDevtools");
    expect(normalizeMcpName("github", "server")).toBe("github");
  });
});

describe("assignMcpNames: collisions", () => {
  it("the exact spelling keeps the form; the others get _2, _3 in code-unit order", () => {
    const names = assignMcpNames(["get_sum", "get-sum", "getSum", "get sum"], "tool");
    expect(Object.fromEntries(names)).toEqual({ getSum: "getSum", "get sum": "getSum_2", "get-sum": "getSum_3", get_sum: "getSum_4" });
  });

  it("without an exact spelling the first in code-unit order keeps the form", () => {
    expect(Object.fromEntries(assignMcpNames(["b-c", "b_c"], "tool"))).toEqual({ "b-c": "bC", b_c: "bC_2" });
  });

  it("a suffix never takes another tool's own name (a form has no _ past its first character)", () => {
    const names = assignMcpNames(["a-b", "a_b", "aB_2", "aB2"], "tool");
    expect(Object.fromEntries(names)).toEqual({ "a-b": "aB", a_b: "aB_2", aB2: "aB2", aB_2: "aB2_2" });
  });

  it("is independent of input order and gives distinct names", () => {
    const raw = ["x-y", "x_y", "xY", "delete", "_delete", "2a", "_2a", "", "-"];
    const a = assignMcpNames(raw, "tool");
    const b = assignMcpNames([...raw].reverse(), "tool");
    expect(Object.fromEntries(a)).toEqual(Object.fromEntries(b));
    expect(new Set(a.values()).size).toBe(raw.length);
    for (const name of a.values()) expect(name).toMatch(/^[A-Za-z_$][A-Za-z0-9_$]*$/);
  });
});
