import { Validator, type Schema } from "@cfworker/json-schema";
import { describe, expect, it } from "vitest";
import {
  checkConfigModule,
  CONFIG_KEYS,
  defineConfig,
  loadGatewayConfig,
  overlayConfig,
  parseGatewayConfig,
  parseJsonc,
  resolveActivation,
  resolveCodeModeOptions,
  resolveToolSearchOptions,
} from "../../../src/config";
import schemaFile from "../../../schema/codemode-config.schema.json";

const schema = schemaFile as Record<string, any>;

function ok(result: ReturnType<typeof loadGatewayConfig>) {
  if (!result.ok) throw new Error(`expected a valid config: ${result.error.message}`);
  return result.config;
}

describe("CODEMODE_CONFIG as JSONC", () => {
  it("accepts line and block comments and trailing commas", () => {
    const text = `{
      // the var overlays the defaults
      "tools": {
        /* a block
           comment */
        "codeMode": { "timeoutMs": 400, "languages": ["javascript",], },
        "toolSearch": true, // trailing comment
      },
    }`;
    const config = ok(loadGatewayConfig({ CODEMODE_CONFIG: text }));
    expect(resolveCodeModeOptions(config)).toMatchObject({ enabled: true, timeoutMs: 400, languages: ["javascript"] });
    expect(config.toolSearch).toEqual({ enabled: true });
  });

  it("reads strings with comment markers, escapes and a __proto__ key as plain JSON does", () => {
    const text = '{"a": "// not a comment /* nor this */", "b": "\\u00e9\\n\\"", "__proto__": {"x": 1}, "n": [-1.5e2, 0, true, null]}';
    const read = parseJsonc(text);
    expect(read).toEqual({ ok: true, value: JSON.parse(text) });
    if (read.ok) expect(Object.getPrototypeOf(read.value)).toBe(Object.prototype);
  });

  it.each([
    ['{\n  "tools": {\n    "codeMode": tru\n  }\n}', "unexpected character (expected a value) at line 3, column 17"],
    ['{ "tools": { "codeMode": true } ', "unexpected end of input (an object is not closed) at line 1, column 33"],
    ['{ "tools" /* never closed ', "unterminated /* comment at line 1, column 11"],
    ['{ "a": 1 } x', "unexpected text after the document at line 1, column 12"],
    ["{ tools: {} }", 'expected a "quoted" key or } at line 1, column 3'],
    ['{ "a": "sk-secret', "unterminated string at line 1, column 8"],
  ])("a broken text names the line and column without quoting it (%j)", (text, where) => {
    const result = loadGatewayConfig({ CODEMODE_CONFIG: text });
    expect(result).toEqual({ ok: false, error: { path: "CODEMODE_CONFIG", message: `CODEMODE_CONFIG is not valid JSON: ${where}` } });
    expect(JSON.stringify(result)).not.toContain("sk-secret");
  });
});

describe("config layers: defaults, config module, CODEMODE_CONFIG", () => {
  const module = defineConfig({
    tools: { codeMode: { timeoutMs: 2500 } },
    agents: { entries: { research: { tools: { codeMode: { maxOutputBytes: 4096 } } } } },
    gateway: { cors: { allowedOrigins: ["https://app.example.com"] } },
  });

  it("a config module is laid over the defaults: code mode stays on, its limits apply", () => {
    const config = ok(loadGatewayConfig({}, module));
    expect(resolveCodeModeOptions(config)).toMatchObject({ enabled: true, timeoutMs: 2500 });
    expect(resolveCodeModeOptions(config, "research")).toMatchObject({ enabled: true, timeoutMs: 2500, maxOutputBytes: 4096 });
    expect(config.operations.cors.allowedOrigins).toEqual(["https://app.example.com"]);
  });

  it("a pasted snippet in CODEMODE_CONFIG is laid over the module key by key and keeps code mode on", () => {
    const config = ok(loadGatewayConfig({ CODEMODE_CONFIG: '{"tools":{"toolSearch":true}}' }, module));
    expect(resolveActivation(config, {}).engaged).toBe(true);
    expect(resolveCodeModeOptions(config)).toMatchObject({ enabled: true, timeoutMs: 2500 });
    expect(resolveToolSearchOptions(config).enabled).toBe(true);
    expect(config.operations.cors.allowedOrigins).toEqual(["https://app.example.com"]);
    expect(Object.keys(config.agents.entries)).toEqual(["research"]);
  });

  it('an explicit "codeMode": false opts out and keeps the limits written below it', () => {
    const config = ok(loadGatewayConfig({ CODEMODE_CONFIG: '{"tools":{"codeMode":false}}' }, module));
    expect(resolveActivation(config, {}).engaged).toBe(false);
    expect(resolveCodeModeOptions(config)).toMatchObject({ enabled: false, timeoutMs: 2500 });
    expect(ok(loadGatewayConfig({ CODEMODE_CONFIG: '{"tools":{"codeMode":{"enabled":false}}}' })).codeMode.enabled).toBe(false);
  });

  it("a module may opt out and the var turn code mode back on", () => {
    const off = defineConfig({ tools: { codeMode: false } });
    expect(resolveActivation(ok(loadGatewayConfig({}, off)), {}).engaged).toBe(false);
    const on = ok(loadGatewayConfig({ CODEMODE_CONFIG: '{"tools":{"codeMode":{"timeoutMs":900,"enabled":true}}}' }, off));
    expect(resolveCodeModeOptions(on)).toMatchObject({ enabled: true, timeoutMs: 900 });
  });

  it("objects merge, arrays and values replace, null removes a key (JSON Merge Patch)", () => {
    const base = {
      gateway: { cors: { allowedOrigins: ["https://a.example"], maxAgeSeconds: 60 } },
      mcp: { servers: { a: { url: "https://a" }, b: { url: "https://b" } } },
    };
    const over = { gateway: { cors: { allowedOrigins: ["https://b.example"] } }, mcp: { servers: { a: null } } };
    expect(overlayConfig(base, over)).toEqual({
      gateway: { cors: { allowedOrigins: ["https://b.example"], maxAgeSeconds: 60 } },
      mcp: { servers: { b: { url: "https://b" } } },
    });
    expect(base.mcp.servers.a).toEqual({ url: "https://a" });
  });

  it("toolSearch's object form alone means enabled, over a false below it too; over an object it inherits", () => {
    expect(overlayConfig({ tools: { toolSearch: false } }, { tools: { toolSearch: { mode: "tools" } } })).toEqual({
      tools: { toolSearch: { enabled: true, mode: "tools" } },
    });
    const inherited = overlayConfig({ tools: { toolSearch: { enabled: false, mode: "tools" } } }, { tools: { toolSearch: { maxSearchLimit: 5 } } });
    expect(inherited).toEqual({ tools: { toolSearch: { enabled: false, mode: "tools", maxSearchLimit: 5 } } });
  });

  it("errors keep their key path whichever layer wrote the key", () => {
    expect(loadGatewayConfig({ CODEMODE_CONFIG: '{"tools":{"codeMode":{"timeoutMs":"10s"}}}' }, module)).toEqual({
      ok: false,
      error: { path: "tools.codeMode.timeoutMs", message: "tools.codeMode.timeoutMs must be a number" },
    });
    expect(checkConfigModule({ tools: { codeMode: { timeoutMs: "10s" } } } as never)).toMatchObject({
      ok: false,
      error: { path: "tools.codeMode.timeoutMs" },
    });
  });

  it("follows a changed module rather than serving the result memoized for another", () => {
    const a = ok(loadGatewayConfig({}, defineConfig({ tools: { codeMode: { timeoutMs: 700 } } })));
    const b = ok(loadGatewayConfig({}, defineConfig({ tools: { codeMode: { timeoutMs: 800 } } })));
    expect([resolveCodeModeOptions(a).timeoutMs, resolveCodeModeOptions(b).timeoutMs]).toEqual([700, 800]);
  });
});

/** The schema node that describes the object at `path` (segments: key, `*` any key, `[]` array entry). */
function schemaNode(path: string): Record<string, any> {
  const resolve = (node: Record<string, any>): Record<string, any> => {
    if (typeof node.$ref === "string") return resolve(schema.$defs[node.$ref.replace("#/$defs/", "")]);
    const objectForm = (node.anyOf as Record<string, any>[] | undefined)?.find((branch) => branch.type === "object");
    return objectForm ?? node;
  };
  let node = resolve(schema);
  for (const segment of path === "" ? [] : path.split(".")) {
    const next = segment === "*" ? node.additionalProperties : segment === "[]" ? node.items : node.properties?.[segment];
    if (typeof next !== "object") throw new Error(`the schema has no ${segment} under ${path}`);
    node = resolve(next);
  }
  return node;
}

describe("schema/codemode-config.schema.json", () => {
  it.each(CONFIG_KEYS.map((entry) => [entry.path || "(root)", entry] as const))("lists exactly the keys the parser accepts at %s", (_, entry) => {
    const node = schemaNode(entry.path);
    expect(Object.keys(node.properties ?? {}).sort()).toEqual([...entry.keys].sort());
    expect(node.additionalProperties).toBe(entry.open ? undefined : false);
  });

  it("walks every object the parser reads (no known-keys list is missing from CONFIG_KEYS)", () => {
    const listed = new Set(CONFIG_KEYS.map((entry) => entry.path));
    const walk = (node: Record<string, any>, path: string, seen: Set<object>) => {
      const resolved = schemaNodeOf(node);
      if (seen.has(resolved)) return;
      if (resolved.type === "object" && resolved.properties) expect(listed, `schema object at ${path || "(root)"}`).toContain(path);
      const inner = new Set(seen).add(resolved);
      for (const [key, child] of Object.entries<Record<string, any>>(resolved.properties ?? {}))
        walk(child, path === "" ? key : `${path}.${key}`, inner);
      if (typeof resolved.additionalProperties === "object") walk(resolved.additionalProperties, `${path}.*`, inner);
      if (typeof resolved.items === "object") walk(resolved.items, `${path}.[]`, inner);
    };
    const schemaNodeOf = (node: Record<string, any>): Record<string, any> =>
      typeof node.$ref === "string"
        ? schemaNodeOf(schema.$defs[node.$ref.replace("#/$defs/", "")])
        : ((node.anyOf as Record<string, any>[] | undefined)?.find((b) => b.type === "object") ?? node);
    walk(schema, "", new Set());
  });

  it("its examples are valid configs and valid against the schema", () => {
    const validator = new Validator(schema as Schema, "2020-12");
    expect(schema.examples.length).toBeGreaterThan(2);
    for (const example of schema.examples) {
      expect(validator.validate(example).errors).toEqual([]);
      expect(parseGatewayConfig(example).ok).toBe(true);
      expect(loadGatewayConfig({ CODEMODE_CONFIG: JSON.stringify(example) }).ok).toBe(true);
    }
  });

  it("its defaults are values the parser accepts at their key", () => {
    const defaults: { path: string; value: unknown }[] = [];
    const collect = (node: Record<string, any>, path: string[]) => {
      if (node === null || typeof node !== "object") return;
      if ("default" in node && path.length > 0) defaults.push({ path: path.join("."), value: node.default });
      for (const [key, child] of Object.entries<Record<string, any>>(node.properties ?? {})) collect(child, [...path, key]);
      for (const branch of node.anyOf ?? []) collect(branch, path);
    };
    collect(schema, []);
    for (const name of ["codeMode", "toolSearch"]) collect(schema.$defs[name], ["tools", name]);
    collect(schema.$defs.approvals, ["approvals"]);
    expect(defaults.length).toBeGreaterThan(20);
    for (const { path, value } of defaults) {
      const document: Record<string, unknown> = {};
      const keys = path.split(".");
      let at = document;
      for (const key of keys.slice(0, -1)) at = (at[key] = {}) as Record<string, unknown>;
      at[keys[keys.length - 1]!] = value;
      expect(parseGatewayConfig(document), path).toMatchObject({ ok: true });
    }
  });
});
