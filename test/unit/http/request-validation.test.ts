import { describe, expect, it } from "vitest";
import { loadGatewayTokens } from "../../../src/http";
import { GatewayError } from "../../../src/errors";
import { formatPath, parseJsonBody } from "../../../src/http";
import { validateClientTool, validateOpenTurn } from "../../../src/http/validators";

/** The GatewayError a call throws, as the contract's `{ code, message, path }`. */
function refusal(fn: () => unknown): { code: string; message: string; path?: string } {
  try {
    fn();
  } catch (error) {
    if (error instanceof GatewayError) return error.toJSON().error;
    throw error;
  }
  throw new Error("expected a refusal");
}

const deep = (n: number) => "[".repeat(n) + "]".repeat(n);

describe("parseJsonBody: depth and non-finite numbers", () => {
  it("empty bodies are undefined; invalid JSON is refused at the body", () => {
    expect(parseJsonBody("  \n")).toBeUndefined();
    expect(refusal(() => parseJsonBody("{nope"))).toEqual({ code: "invalid_request", message: "body is not valid JSON", path: "" });
  });

  it("256 levels are accepted, 257 are not", () => {
    expect(parseJsonBody(deep(256))).toBeDefined();
    expect(refusal(() => parseJsonBody(deep(257)))).toEqual({ code: "invalid_request", message: "body is nested deeper than 256 levels", path: "" });
  });

  it.each([
    [`{"a":1,"b":{"c":${deep(300)}}}`, "b"],
    [`{"list":[{"name":"x"},{"name":"y","schema":${deep(300)}}]}`, "list[1].schema"],
    [`{"list":[${deep(300)}]}`, "list"],
    [`{"odd key":${deep(300)}}`, '["odd key"]'],
  ])("the path names the request field holding the deep value (%s)", (text, path) => {
    expect(refusal(() => parseJsonBody(text)).path).toBe(path);
  });

  it("brackets inside strings do not count", () => {
    expect(parseJsonBody(JSON.stringify({ code: "[".repeat(5000) }))).toEqual({ code: "[".repeat(5000) });
  });

  it.each([
    ["1e400", ""],
    ['{"value":-1e400}', "value"],
    ['{"a":[1,2,{"b":1e999}]}', "a[2].b"],
    ['{"a":{"x y":[1e309]}}', 'a["x y"][0]'],
  ])("a number that parses to ±Infinity is refused with its full path (%s)", (text, path) => {
    const r = refusal(() => parseJsonBody(text));
    expect(r.path).toBe(path);
    expect(r.message).toBe(`${path || "body"} is a number outside the range JSON values can carry (finite doubles only)`);
  });

  it("finite extremes and ordinary values pass unchanged", () => {
    expect(parseJsonBody('{"max":1.7976931348623157e308,"min":5e-324,"neg":-0,"s":"1e400"}')).toEqual({
      max: 1.7976931348623157e308,
      min: 5e-324,
      neg: -0,
      s: "1e400",
    });
  });

  it("formatPath writes paths as the contract does", () => {
    expect(formatPath([])).toBe("");
    expect(formatPath(["clientTools", 0, "name"])).toBe("clientTools[0].name");
    expect(formatPath([3, "a"])).toBe("[3].a");
    expect(formatPath(["a-b", "c"])).toBe('["a-b"].c');
  });
});

describe("loadGatewayTokens: secret rules", () => {
  it("unset or blank is an empty map (401 on /v1, not a config error), and is memoized safely", () => {
    for (const raw of [undefined, "", "  ", undefined]) {
      const r = loadGatewayTokens(raw);
      expect(r.ok && r.tokens.size).toBe(0);
    }
  });

  it("valid entries map token to tenant", () => {
    const r = loadGatewayTokens(JSON.stringify({ abcdefgh: "t1", "0123456789": "t2" }));
    expect(r.ok && [...r.tokens]).toEqual([
      ["abcdefgh", "t1"],
      ["0123456789", "t2"],
    ]);
  });

  it.each([
    [{ abcdefgh: "t", abcdefg: "u" }, "entry 2: tokens must be at least 8 characters"],
    [{ "abcd efgh": "t" }, "entry 1: tokens cannot contain whitespace (a bearer header cannot carry it)"],
    [{ abcdefgh: null }, "entry 1: the tenant id must be a non-empty string"],
    [[], "must be a JSON object mapping token to tenant id"],
    [null, "must be a JSON object mapping token to tenant id"],
  ])("%j is refused: %s", (value, message) => {
    expect(loadGatewayTokens(JSON.stringify(value))).toEqual({ ok: false, message });
  });
});

describe("validateClientTool", () => {
  const Schema = { type: "object", properties: { id: { type: "string" } } };

  it("keeps name, description and one schema per direction", () => {
    expect(
      validateClientTool({ name: "a b", description: "d", input_schema: Schema, outputSchema: { type: "array" } }, "clientTools[0]", new Set()),
    ).toEqual({
      name: "a b",
      description: "d",
      parameters: Schema,
      outputSchema: { type: "array" },
    });
  });

  it("an MCP server's draft-07 inputSchema ($schema, definitions, $ref) is accepted and checks values", async () => {
    const mcp = {
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      properties: { owner: { $ref: "#/definitions/login" }, limit: { type: "integer", minimum: 1 } },
      required: ["owner"],
      additionalProperties: false,
      definitions: { login: { type: "string", minLength: 1 } },
    };
    const { checkValue } = await import("../../../src/tools/schema-validator");
    expect(validateClientTool({ name: "list_issues", inputSchema: mcp }, "t", new Set()).parameters).toBe(mcp);
    expect(checkValue(mcp, { owner: "octo", limit: 2 }).ok).toBe(true);
    expect(checkValue(mcp, { owner: "", limit: 2 }).ok).toBe(false);
    expect(checkValue(mcp, { limit: 2 }).ok).toBe(false);
  });

  it("two spellings compare by content, not key order", () => {
    const reordered = { properties: { id: { type: "string" } }, type: "object" };
    expect(validateClientTool({ name: "a", parameters: Schema, inputSchema: reordered }, "t", new Set()).parameters).toBe(Schema);
    expect(
      refusal(() => validateClientTool({ name: "a", inputSchema: Schema, input_schema: { ...Schema, required: ["id"] } }, "t", new Set())).path,
    ).toBe("t.input_schema");
    expect(
      refusal(() => validateClientTool({ name: "a", outputSchema: { type: "array" }, output_schema: { type: "object" } }, "t", new Set())).path,
    ).toBe("t.output_schema");
  });

  it.each([
    [{ name: "a", parameters: [] }, "t.parameters", "t.parameters must be a JSON Schema object"],
    [
      { name: "a", parameters: { type: "object", properties: { x: { $ref: "#/$defs/nope" } } } },
      "t.parameters",
      "t.parameters is not a usable JSON Schema (/properties/x/$ref: #/$defs/nope does not resolve)",
    ],
    [{ name: "a", outputSchema: { type: "list" } }, "t.outputSchema", "t.outputSchema is not a usable JSON Schema (/type: unknown type)"],
    [
      { name: "a", input: {} },
      "t.input",
      "t.input is not a client tool field; use name, description, parameters (or inputSchema / input_schema) and outputSchema",
    ],
    [{ name: "a", description: 5 }, "t.description", "t.description must be a string of at most 4096 characters"],
    [{ name: 5 }, "t.name", "t.name must be 1-128 characters without control characters"],
  ])("refuses %j at %s", (tool, path, message) => {
    expect(refusal(() => validateClientTool(tool, "t", new Set()))).toEqual({ code: "invalid_request", path, message });
  });

  it("duplicates are refused by exact name; names differing only in spacing are distinct tools", () => {
    const seen = new Set<string>();
    validateClientTool({ name: "my tool" }, "t0", seen);
    validateClientTool({ name: "my-tool" }, "t1", seen);
    expect(refusal(() => validateClientTool({ name: "my tool" }, "t2", seen))).toMatchObject({
      path: "t2.name",
      message: 'duplicate client tool "my tool"',
    });
  });
});

describe("validateOpenTurn: agentId follows the config's agent id rule", () => {
  it("accepts ids config entries may use and names the rule otherwise", () => {
    expect(validateOpenTurn({ agentId: "team/alpha one" })).toEqual({ agentId: "team/alpha one" });
    expect(refusal(() => validateOpenTurn({ agentId: "bad!" }))).toEqual({
      code: "invalid_request",
      path: "agentId",
      message: "agentId must be 1-128 characters of letters, digits, spaces and _ . : - /",
    });
  });
});
