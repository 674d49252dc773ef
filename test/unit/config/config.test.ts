import { describe, expect, it } from "vitest";
import {
  planSurface,
  resolveToolSearchOptions,
  BUNDLED_PROVIDERS,
  CODE_MODE_DEFAULTS,
  FIRST_PARTY_PROVIDERS,
  RESELLER_PROVIDERS,
  DEFAULT_GATEWAY_CONFIG,
  findModel,
  findProvider,
  loadGatewayConfig,
  modelFamilyKey,
  parseGatewayConfig,
  resolveActivation,
  resolveCodeModeOptions,
  splitModelRef,
  type GatewayConfig,
} from "../../../src/config";

/** Parses or fails the test with the validation message. */
function config(raw: unknown): GatewayConfig {
  const result = parseGatewayConfig(raw);
  if (!result.ok) throw new Error(`unexpected config error at ${result.error.path}: ${result.error.message}`);
  return result.config;
}

function rejection(raw: unknown): { message: string; path: string } {
  const result = parseGatewayConfig(raw);
  if (result.ok) throw new Error("expected the config to be rejected");
  return result.error;
}

const withCodeMode = (codeMode: unknown) => ({ tools: { codeMode } });

describe("code mode defaults", () => {
  it("CODE_MODE_DEFAULTS matches the seed table, disabled", () => {
    expect(CODE_MODE_DEFAULTS).toEqual({
      enabled: false,
      runtime: "quickjs-wasi",
      mode: "only",
      languages: ["javascript", "typescript"],
      timeoutMs: 10000,
      memoryLimitBytes: 67108864,
      maxOutputBytes: 65536,
      maxSnapshotBytes: 10485760,
      maxPendingToolCalls: 16,
      snapshotTtlSeconds: 900,
      searchDefaultLimit: 8,
      maxSearchLimit: 50,
    });
  });

  it("an empty document resolves to the defaults", () => {
    expect(resolveCodeModeOptions(config({}))).toEqual(CODE_MODE_DEFAULTS);
  });

  it("resolved options are a fresh copy, so mutating them does not change the defaults", () => {
    const options = resolveCodeModeOptions(config({}));
    options.languages.push("javascript");
    options.timeoutMs = 1;
    expect(CODE_MODE_DEFAULTS.languages).toEqual(["javascript", "typescript"]);
    expect(resolveCodeModeOptions(config({})).timeoutMs).toBe(10000);
  });

  it.each([
    ["omitted", {}],
    ["false", withCodeMode(false)],
    ["an object without enabled", withCodeMode({ timeoutMs: 5000 })],
  ])("code mode stays off when tools.codeMode is %s", (_label, raw) => {
    const parsed = config(raw);
    expect(resolveCodeModeOptions(parsed).enabled).toBe(false);
    expect(resolveActivation(parsed, { model: "openai/gpt-5.6" })).toEqual({
      engaged: false,
      enabled: false,
      source: "global",
      preferred: true,
    });
  });

  it("configuring every limit does not enable code mode", () => {
    const parsed = config(
      withCodeMode({
        runtime: "quickjs-wasi",
        mode: "only",
        languages: ["javascript"],
        timeoutMs: 10000,
        memoryLimitBytes: 67108864,
        maxOutputBytes: 65536,
        maxSnapshotBytes: 10485760,
        maxPendingToolCalls: 16,
        snapshotTtlSeconds: 900,
        searchDefaultLimit: 8,
        maxSearchLimit: 50,
      }),
    );
    expect(parsed.codeMode.enabled).toBeUndefined();
    expect(resolveActivation(parsed, { model: "anthropic/claude-opus-5" }).engaged).toBe(false);
  });

  it.each([true, false, "auto"] as const)("shorthand %s equals the object form's enabled", (value) => {
    expect(resolveCodeModeOptions(config(withCodeMode(value))).enabled).toBe(value);
    expect(resolveCodeModeOptions(config(withCodeMode({ enabled: value }))).enabled).toBe(value);
  });
});

describe("code mode clamps", () => {
  const cases = [
    ["timeoutMs", 100, 60000],
    ["memoryLimitBytes", 1048576, 1073741824],
    ["maxOutputBytes", 1024, 10485760],
    ["maxSnapshotBytes", 1024, 268435456],
    ["maxPendingToolCalls", 1, 128],
    ["snapshotTtlSeconds", 1, 86400],
    ["maxSearchLimit", 1, 50],
  ] as const;

  it.each(cases)("%s clamps below %d and above %d", (key, min, max) => {
    const resolve = (value: number) => resolveCodeModeOptions(config(withCodeMode({ [key]: value })))[key];
    expect(resolve(min - 1)).toBe(min);
    expect(resolve(-5)).toBe(min);
    expect(resolve(min)).toBe(min);
    expect(resolve(max)).toBe(max);
    expect(resolve(max + 1)).toBe(max);
    expect(resolve(Number.MAX_SAFE_INTEGER)).toBe(max);
  });

  it("searchDefaultLimit clamps to [1, maxSearchLimit]", () => {
    const resolve = (codeMode: object) => resolveCodeModeOptions(config(withCodeMode(codeMode)));
    expect(resolve({ searchDefaultLimit: 0 }).searchDefaultLimit).toBe(1);
    expect(resolve({ searchDefaultLimit: 51 }).searchDefaultLimit).toBe(50);
    expect(resolve({ searchDefaultLimit: 20, maxSearchLimit: 10 }).searchDefaultLimit).toBe(10);
    expect(resolve({ maxSearchLimit: 5 }).searchDefaultLimit).toBe(5);
    expect(resolve({ searchDefaultLimit: 12, maxSearchLimit: 12 }).searchDefaultLimit).toBe(12);
  });

  it("non-integers are rounded down before clamping", () => {
    const options = resolveCodeModeOptions(config(withCodeMode({ timeoutMs: 1500.9, maxPendingToolCalls: 1.5 })));
    expect(options.timeoutMs).toBe(1500);
    expect(options.maxPendingToolCalls).toBe(1);
    expect(resolveCodeModeOptions(config(withCodeMode({ maxPendingToolCalls: 0.9 }))).maxPendingToolCalls).toBe(1);
  });

  it("infinities and negative zero are clamped, not rejected", () => {
    const options = resolveCodeModeOptions(config(withCodeMode({ timeoutMs: Infinity, maxOutputBytes: -Infinity, maxPendingToolCalls: -0 })));
    expect(options.timeoutMs).toBe(60000);
    expect(options.maxOutputBytes).toBe(1024);
    expect(Object.is(options.maxPendingToolCalls, 1)).toBe(true);
  });

  it("languages accept any non-empty subset and drop duplicates", () => {
    const resolve = (languages: unknown) => resolveCodeModeOptions(config(withCodeMode({ languages }))).languages;
    expect(resolve(["typescript"])).toEqual(["typescript"]);
    expect(resolve(["javascript"])).toEqual(["javascript"]);
    expect(resolve(["typescript", "javascript", "typescript"])).toEqual(["typescript", "javascript"]);
  });
});

describe("code mode validation", () => {
  it.each([
    ["timeoutMs", "5000", "tools.codeMode.timeoutMs must be a number"],
    ["memoryLimitBytes", NaN, "tools.codeMode.memoryLimitBytes must be a number"],
    ["maxSearchLimit", null, "tools.codeMode.maxSearchLimit must be a number"],
    ["searchDefaultLimit", true, "tools.codeMode.searchDefaultLimit must be a number"],
    ["enabled", "yes", 'tools.codeMode.enabled must be true, false or "auto"'],
    ["enabled", null, 'tools.codeMode.enabled must be true, false or "auto"'],
    ["runtime", "quickjs", 'tools.codeMode.runtime must be "quickjs-wasi" (the only supported runtime)'],
    ["mode", "all", 'tools.codeMode.mode must be "only" (the only supported mode)'],
    ["languages", "javascript", 'tools.codeMode.languages must be an array of "javascript" and/or "typescript"'],
    ["languages", [], "tools.codeMode.languages must list at least one language"],
    [
      "timeoutMS",
      5000,
      'unknown key "timeoutMS" at $.tools.codeMode.timeoutMS; known keys here: enabled, runtime, mode, languages, timeoutMs, memoryLimitBytes, maxOutputBytes, maxSnapshotBytes, maxPendingToolCalls, snapshotTtlSeconds, searchDefaultLimit, maxSearchLimit',
    ],
  ])("rejects tools.codeMode.%s = %j", (key, value, message) => {
    expect(rejection(withCodeMode({ [key]: value }))).toEqual({ message, path: `tools.codeMode.${key}` });
  });

  it("names the offending entry of languages", () => {
    expect(rejection(withCodeMode({ languages: ["javascript", "python"] }))).toEqual({
      path: "tools.codeMode.languages[1]",
      message: 'tools.codeMode.languages[1] must be "javascript" or "typescript"',
    });
  });

  it.each([["on"], [1], [null], [["auto"]]])("rejects tools.codeMode = %j", (value) => {
    expect(rejection(withCodeMode(value))).toEqual({
      path: "tools.codeMode",
      message: 'tools.codeMode must be true, false, "auto" or an object',
    });
  });

  it("validates an agent's tools.codeMode with the agent's path", () => {
    expect(rejection({ agents: { entries: { research: { tools: { codeMode: { timeoutMs: "1s" } } } } } })).toEqual({
      path: "agents.entries.research.tools.codeMode.timeoutMs",
      message: "agents.entries.research.tools.codeMode.timeoutMs must be a number",
    });
    expect(rejection({ agents: { entries: { "ops-bot": { tools: { codeMode: { enabeld: true } } } } } }).path).toBe(
      'agents.entries["ops-bot"].tools.codeMode.enabeld',
    );
  });

  it.each([
    [null, "", "config must be a JSON object"],
    [[], "", "config must be a JSON object"],
    [{ tools: [] }, "tools", "tools must be an object"],
    [{ agents: "x" }, "agents", "agents must be an object"],
    [{ models: 1 }, "models", "models must be an object"],
    [{ agents: { entries: { a: 1 } } }, "agents.entries.a", "agents.entries.a must be an object"],
    [{ agents: { entries: { a: { tools: true } } } }, "agents.entries.a.tools", "agents.entries.a.tools must be an object"],
  ])("rejects malformed sections (%j)", (raw, path, message) => {
    expect(rejection(raw)).toEqual({ path, message });
  });

  it("accepts the keys the seed documents: tools.sandbox, tools.swarm, tools.allow, tools.toolSearch, agentRuntime", () => {
    const raw = {
      tools: {
        codeMode: "auto",
        toolSearch: { enabled: true, mode: "code" },
        sandbox: { tools: { alsoAllow: ["bundle-mcp"] } },
        swarm: { enabled: false },
        allow: ["read", "web_search"],
      },
      agents: {
        defaults: {
          models: { "openai/*": { agentRuntime: { id: "openclaw" } }, "openai/gpt-5.6-luna": { agentRuntime: { id: "openclaw" }, codeMode: true } },
        },
        entries: { research: { tools: { swarm: false, codeMode: { timeoutMs: 5000 } }, models: { "openai/gpt-5.6-luna": { codeMode: false } } } },
      },
    };
    const parsed = config(raw);
    expect(parsed.raw).toBe(raw);
    expect(parsed.toolSearch).toEqual({ enabled: true, mode: "code" });
    expect(parsed.agents.defaults.raw).toEqual(raw.agents.defaults);
    expect(parsed.agents.entries.research?.codeMode).toEqual({ timeoutMs: 5000 });
    expect(config({ tools: { swarm: false, toolSearch: true, allow: [] } }).toolSearch).toEqual({ enabled: true });
  });
});

describe("logging.redactPatterns", () => {
  it("defaults to no patterns", () => {
    expect(config({}).redactPatterns).toEqual([]);
    expect(config({ logging: {} }).redactPatterns).toEqual([]);
  });

  it("compiles each source once with the g flag", () => {
    const patterns = config({ logging: { redactPatterns: ["acct_[0-9]{6}", "INTERNAL-[A-Z]+"] } }).redactPatterns;
    expect(patterns.map((p) => [p.source, p.flags])).toEqual([
      ["acct_[0-9]{6}", "g"],
      ["INTERNAL-[A-Z]+", "g"],
    ]);
    expect("x acct_123456 y acct_654321".replace(patterns[0]!, "***")).toBe("x *** y ***");
  });

  it("accepts 32 patterns of 256 characters", () => {
    const long = "a".repeat(256);
    expect(config({ logging: { redactPatterns: Array.from({ length: 32 }, () => long) } }).redactPatterns).toHaveLength(32);
  });

  it.each([
    [{ logging: [] }, "logging", "logging must be an object"],
    [{ logging: { redactPatterns: "acct_.*" } }, "logging.redactPatterns", "logging.redactPatterns must be an array of regular expression sources"],
    [
      { logging: { redactPatterns: Array.from({ length: 33 }, (_, i) => `p${i}`) } },
      "logging.redactPatterns",
      "logging.redactPatterns has 33 patterns; at most 32 are allowed",
    ],
    [
      { logging: { redactPatterns: ["ok", 7] } },
      "logging.redactPatterns[1]",
      "logging.redactPatterns[1] must be a string (a JavaScript regular expression source)",
    ],
    [{ logging: { redactPatterns: [""] } }, "logging.redactPatterns[0]", "logging.redactPatterns[0] must not be empty"],
    [
      { logging: { redactPatterns: ["a".repeat(257)] } },
      "logging.redactPatterns[0]",
      "logging.redactPatterns[0] is 257 characters; at most 256 are allowed",
    ],
    [
      { logging: { redactPatterns: ["ok", "(unclosed"] } },
      "logging.redactPatterns[1]",
      "logging.redactPatterns[1] is not a valid JavaScript regular expression (Unterminated group)",
    ],
    [
      { logging: { redactPatterns: ["x*"] } },
      "logging.redactPatterns[0]",
      "logging.redactPatterns[0] must not match the empty string (it would mask nothing but run everywhere)",
    ],
    [
      { logging: { redactPattern: ["x"] } },
      "logging.redactPattern",
      'unknown key "redactPattern" at $.logging.redactPattern; known keys here: redactPatterns',
    ],
  ])("refuses %j at %s", (raw, path, message) => {
    expect(rejection(raw)).toEqual({ path, message });
  });

  it("an invalid pattern's message does not repeat the pattern (it may hold a pasted secret)", () => {
    const error = rejection({ logging: { redactPatterns: ["sk-live-SECRET-(unclosed"] } });
    expect(error.message).not.toContain("SECRET");
  });
});

describe("unknown keys are refused in every section the gateway reads", () => {
  it("a top-level `tool` (for `tools`) is an error naming the key, not code mode silently off", () => {
    expect(rejection({ tool: { codeMode: true } })).toEqual({
      path: "tool",
      message: 'unknown key "tool" at $.tool; known keys here: tools, agents, models, gateway, mcp, logging, approvals',
    });
  });

  it.each([
    [{ gateway: { port: 1 } }, "gateway.port"],
    [{ tools: { codemode: true } }, "tools.codemode"],
    [{ tools: { deny: ["exec"] } }, "tools.deny"],
    [{ tools: { swarm: { enabeld: false } } }, "tools.swarm.enabeld"],
    [{ tools: { toolSearch: { enabled: true, limit: 5 } } }, "tools.toolSearch.limit"],
    [{ agents: { list: [] } }, "agents.list"],
    [{ agents: { defaults: { workspace: "~/x" } } }, "agents.defaults.workspace"],
    [{ agents: { defaults: { tools: { codeMode: true } } } }, "agents.defaults.tools"],
    [{ agents: { defaults: { models: { "openai/gpt-5.6": { codemode: true } } } } }, 'agents.defaults.models["openai/gpt-5.6"].codemode'],
    [{ agents: { entries: { research: { identity: { name: "R" } } } } }, "agents.entries.research.identity"],
    [{ agents: { entries: { research: { tools: { sandbox: {} } } } } }, "agents.entries.research.tools.sandbox"],
    [
      { agents: { entries: { research: { models: { "openai/gpt-5.6": { codeMode: false, runtime: "x" } } } } } },
      'agents.entries.research.models["openai/gpt-5.6"].runtime',
    ],
    [{ models: { mode: "replace" } }, "models.mode"],
    [{ models: { providers: { x: { apikey: "env:X" } } } }, "models.providers.x.apikey"],
    [{ models: { providers: { x: { models: [{ id: "m", upstream_model: "n" }] } } } }, "models.providers.x.models[0].upstream_model"],
    [{ models: { providers: { x: { models: [{ id: "m", cost: { inputs: 1 } }] } } } }, "models.providers.x.models[0].cost.inputs"],
  ])("%j is refused at %s", (raw, path) => {
    const error = rejection(raw);
    expect(error.path).toBe(path);
    expect(error.message).toMatch(/^unknown key ".+" at \$\..+; known keys here: /);
    expect(error.message).toContain(`at $.${path};`);
  });

  it("compat is an open set of provider flags, but a misspelt codeMode or supportsTools is refused", () => {
    expect(rejection({ models: { providers: { x: { models: [{ id: "m", compat: { code_mode: "preferred" } }] } } } })).toEqual({
      path: "models.providers.x.models[0].compat.code_mode",
      message: 'unknown key "code_mode" at $.models.providers.x.models[0].compat.code_mode; did you mean "codeMode"?',
    });
    expect(rejection({ models: { providers: { x: { models: [{ id: "m", compat: { SupportsTools: true } }] } } } }).path).toBe(
      "models.providers.x.models[0].compat.SupportsTools",
    );
    expect(
      findModel(config({ models: { providers: { x: { models: [{ id: "m", compat: { supportsStore: false, codeMode: "preferred" } }] } } } }), "x/m")
        ?.compat,
    ).toEqual({
      codeMode: "preferred",
    });
  });

  it.each([
    [{ tools: { swarm: "off" } }, "tools.swarm", "tools.swarm must be true, false or an object { enabled }"],
    [{ tools: { swarm: { enabled: "no" } } }, "tools.swarm.enabled", "tools.swarm.enabled must be true or false"],
    [
      { tools: { toolSearch: "yes" } },
      "tools.toolSearch",
      "tools.toolSearch must be true, false or an object { enabled, mode, codeTimeoutMs, searchDefaultLimit, maxSearchLimit }",
    ],
    [{ tools: { toolSearch: { mode: "regex" } } }, "tools.toolSearch.mode", 'tools.toolSearch.mode must be one of "code", "tools"'],
    [{ tools: { toolSearch: { mode: "directory" } } }, "tools.toolSearch.mode", 'tools.toolSearch.mode must be one of "code", "tools"'],
    [{ tools: { toolSearch: { codeTimeoutMs: "10s" } } }, "tools.toolSearch.codeTimeoutMs", "tools.toolSearch.codeTimeoutMs must be a number"],
    [{ tools: { toolSearch: { enabled: "yes" } } }, "tools.toolSearch.enabled", "tools.toolSearch.enabled must be true or false"],
    [
      { agents: { entries: { a: { tools: { toolSearch: { maxSearchLimit: null } } } } } },
      "agents.entries.a.tools.toolSearch.maxSearchLimit",
      "agents.entries.a.tools.toolSearch.maxSearchLimit must be a number",
    ],
    [{ tools: { sandbox: true } }, "tools.sandbox", "tools.sandbox must be an object"],
    [{ tools: { allow: "read" } }, "tools.allow", "tools.allow must be an array of tool names"],
    [{ tools: { allow: ["read", ""] } }, "tools.allow[1]", "tools.allow[1] must be a non-empty string"],
    [
      { agents: { defaults: { models: { "openai/gpt-5.6": { agentRuntime: "openclaw" } } } } },
      'agents.defaults.models["openai/gpt-5.6"].agentRuntime',
      'agents.defaults.models["openai/gpt-5.6"].agentRuntime must be an object such as { id: "openclaw" }',
    ],
  ])("validates the shape of accepted sections (%j)", (raw, path, message) => {
    expect(rejection(raw)).toEqual({ path, message });
  });

  it("refuses agent ids a turn's agentId could never name, and accepts those it can", () => {
    expect(rejection({ agents: { entries: { "bad id!": {} } } })).toEqual({
      path: 'agents.entries["bad id!"]',
      message:
        'agents.entries["bad id!"] is not a valid agent id: a turn\'s agentId must be 1-128 characters of letters, digits, spaces and _ . : - /, so this entry could never be selected',
    });
    expect(rejection({ agents: { entries: { ["a".repeat(129)]: {} } } }).message).toContain("is not a valid agent id");
    expect(rejection({ agents: { entries: { "": {} } } }).path).toBe('agents.entries[""]');
    const parsed = config({ agents: { entries: { "ops-bot": {}, "team/alpha one": {}, "v1.2:x_y": {} } } });
    expect(Object.keys(parsed.agents.entries)).toEqual(["ops-bot", "team/alpha one", "v1.2:x_y"]);
  });
});

describe("per-agent options", () => {
  const parsed = config({
    tools: { codeMode: { enabled: "auto", timeoutMs: 20000, maxSearchLimit: 30, languages: ["javascript"] } },
    agents: {
      entries: {
        research: { tools: { codeMode: { timeoutMs: 99999999, searchDefaultLimit: 40 } } },
        quiet: { tools: { codeMode: false } },
      },
    },
  });

  it("agent fields win, the rest inherit from the global block, then clamps apply", () => {
    expect(resolveCodeModeOptions(parsed, "research")).toEqual({
      ...CODE_MODE_DEFAULTS,
      enabled: "auto",
      languages: ["javascript"],
      timeoutMs: 60000,
      maxSearchLimit: 30,
      searchDefaultLimit: 30,
    });
  });

  it("an agent shorthand changes enabled only", () => {
    const options = resolveCodeModeOptions(parsed, "quiet");
    expect(options.enabled).toBe(false);
    expect(options.timeoutMs).toBe(20000);
  });

  it("unknown agents, and names that exist on Object.prototype, get the global options", () => {
    for (const agentId of ["nobody", "constructor", "__proto__", "toString"]) {
      expect(resolveCodeModeOptions(parsed, agentId).timeoutMs).toBe(20000);
      expect(resolveActivation(parsed, { agentId, model: "openai/gpt-5.6" }).source).toBe("global");
    }
  });
});

describe("activation precedence", () => {
  const model = "openai/gpt-5.6-luna";
  // The seed's "Override one model" example.
  const seedExample = config({
    tools: { codeMode: "auto" },
    agents: {
      defaults: { models: { [model]: { agentRuntime: { id: "openclaw" }, codeMode: true } } },
      entries: { research: { models: { [model]: { codeMode: false } } } },
    },
  });

  it("the seed example enables the model everywhere except on the research agent", () => {
    expect(resolveActivation(seedExample, { model })).toMatchObject({ engaged: true, enabled: true, source: "defaults-model" });
    expect(resolveActivation(seedExample, { agentId: "other", model })).toMatchObject({ engaged: true, source: "defaults-model" });
    expect(resolveActivation(seedExample, { agentId: "research", model })).toMatchObject({
      engaged: false,
      enabled: false,
      source: "agent-model",
    });
  });

  it("level 1: the agent's model override beats the agent's tools.codeMode", () => {
    const parsed = config({
      agents: { entries: { a: { tools: { codeMode: true }, models: { [model]: { codeMode: false } } } } },
    });
    expect(resolveActivation(parsed, { agentId: "a", model })).toEqual({
      engaged: false,
      enabled: false,
      source: "agent-model",
      preferred: true,
    });
    expect(resolveActivation(parsed, { agentId: "a", model: "openai/gpt-5.5" })).toMatchObject({ engaged: true, source: "agent" });
  });

  it("level 2: an agent's 'auto' beats a defaults model override and the global setting", () => {
    const parsed = config({
      tools: { codeMode: true },
      agents: {
        defaults: { models: { "ollama/llama4": { codeMode: true } } },
        entries: { a: { tools: { codeMode: { enabled: "auto" } } } },
      },
    });
    expect(resolveActivation(parsed, { agentId: "a", model: "ollama/llama4" })).toEqual({
      engaged: false,
      enabled: "auto",
      source: "agent",
      preferred: false,
    });
    expect(resolveActivation(parsed, { agentId: "a", model: "anthropic/claude-opus-5" })).toMatchObject({
      engaged: true,
      source: "agent",
    });
    expect(resolveActivation(parsed, { model: "ollama/llama4" })).toMatchObject({ engaged: true, source: "defaults-model" });
  });

  it("an agent object without enabled falls through to the next level", () => {
    const parsed = config({
      tools: { codeMode: true },
      agents: { entries: { a: { tools: { codeMode: { timeoutMs: 500 } } } } },
    });
    expect(resolveActivation(parsed, { agentId: "a", model })).toMatchObject({ engaged: true, source: "global" });
  });

  it("level 3: a defaults model false overrides global true", () => {
    const parsed = config({ tools: { codeMode: true }, agents: { defaults: { models: { [model]: { codeMode: false } } } } });
    expect(resolveActivation(parsed, { model })).toEqual({
      engaged: false,
      enabled: false,
      source: "defaults-model",
      preferred: true,
    });
    expect(resolveActivation(parsed, { model: "openai/gpt-5.5" })).toMatchObject({ engaged: true, source: "global" });
  });

  it("a model row without codeMode inherits the parent setting, including auto", () => {
    const parsed = config({
      tools: { codeMode: "auto" },
      agents: { defaults: { models: { [model]: { agentRuntime: { id: "openclaw" } }, "ollama/llama4": {} } } },
    });
    expect(resolveActivation(parsed, { model })).toMatchObject({ engaged: true, enabled: "auto", source: "global" });
    expect(resolveActivation(parsed, { model: "ollama/llama4" })).toMatchObject({ engaged: false, source: "global" });
  });

  it("level 4: global true engages any model, known or not, and with no model at all", () => {
    const parsed = config(withCodeMode(true));
    expect(resolveActivation(parsed, { model: "ollama/llama4" })).toEqual({
      engaged: true,
      enabled: true,
      source: "global",
      preferred: false,
    });
    expect(resolveActivation(parsed, {}).engaged).toBe(true);
  });

  it("model overrides change activation only, never limits", () => {
    const parsed = config({
      tools: { codeMode: { timeoutMs: 700 } },
      agents: { defaults: { models: { [model]: { codeMode: true } } } },
    });
    expect(resolveActivation(parsed, { model }).engaged).toBe(true);
    expect(resolveCodeModeOptions(parsed)).toMatchObject({ enabled: false, timeoutMs: 700 });
  });

  it("an explicit model true bypasses the capability preference", () => {
    const parsed = config({
      tools: { codeMode: "auto" },
      agents: { defaults: { models: { "together/moonshotai/Kimi-K3": { codeMode: true } } } },
    });
    expect(resolveActivation(parsed, { model: "together/moonshotai/Kimi-K3" })).toEqual({
      engaged: true,
      enabled: true,
      source: "defaults-model",
      preferred: false,
    });
  });
});

describe("auto activation and catalogs", () => {
  const auto = config(withCodeMode("auto"));

  it.each([
    ["anthropic/claude-haiku-4-5"],
    ["deepseek/deepseek-v4-flash"],
    ["google/gemini-3.7-flash"],
    ["kimi/k3-256k"],
    ["minimax/MiniMax-M3"],
    ["moonshot/kimi-k3"],
    ["openai/gpt-5.5-pro"],
    ["xiaomi/mimo-v2.5"],
    ["zai/glm-5.1"],
  ])("auto engages for the preferred model %s", (model) => {
    expect(resolveActivation(auto, { model })).toEqual({ engaged: true, enabled: "auto", source: "global", preferred: true });
  });

  it.each([["novita/moonshotai/kimi-k3"], ["nvidia/z-ai/glm-5.2"], ["together/deepseek-ai/DeepSeek-V4-Pro"], ["github-copilot/gpt-5.6"]])(
    "auto keeps direct tools for the reseller capable row %s, which true still engages",
    (model) => {
      expect(findModel(auto, model)?.compat?.codeMode).toBe("capable");
      expect(resolveActivation(auto, { model })).toMatchObject({ engaged: false, preferred: false });
      expect(resolveActivation(config(withCodeMode(true)), { model }).engaged).toBe(true);
    },
  );

  it("auto keeps direct tools for unknown models, malformed refs, wrong case and runs without a model", () => {
    for (const model of ["ollama/llama4", "openai/gpt-4o", "gpt-5.6", "OpenAI/gpt-5.6", "openai/GPT-5.6", undefined]) {
      expect(resolveActivation(auto, { model })).toMatchObject({ engaged: false, preferred: false });
    }
  });

  it("a model without tool support never engages, even when forced", () => {
    const parsed = config({
      tools: { codeMode: true },
      models: { providers: { local: { models: [{ id: "tiny", compat: { codeMode: "preferred", supportsTools: false } }] } } },
      agents: { defaults: { models: { "local/tiny": { codeMode: true } } } },
    });
    expect(resolveActivation(parsed, { model: "local/tiny" })).toEqual({
      engaged: false,
      enabled: true,
      source: "defaults-model",
      preferred: false,
    });
  });

  it("a user row replaces the bundled row with the same provider and id", () => {
    const parsed = config({
      tools: { codeMode: "auto" },
      models: { providers: { openai: { models: [{ id: "gpt-5.6", compat: { codeMode: "capable" }, cost: { input: 1.25, output: 10 } }] } } },
    });
    expect(findModel(parsed, "openai/gpt-5.6")).toEqual({
      provider: "openai",
      id: "gpt-5.6",
      compat: { codeMode: "capable" },
      cost: { input: 1.25, output: 10 },
    });
    expect(resolveActivation(parsed, { model: "openai/gpt-5.6" }).engaged).toBe(false);
    // Other bundled rows of the same provider, and its connection defaults, survive.
    expect(resolveActivation(parsed, { model: "openai/gpt-5.5" }).engaged).toBe(true);
    expect(findProvider(parsed, "openai")?.apiKey).toBe("env:OPENAI_API_KEY");
  });

  it("a user row can promote a reseller model, and user providers are added next to the bundled ones", () => {
    const parsed = config({
      tools: { codeMode: "auto" },
      models: {
        providers: {
          together: { baseUrl: "https://api.together.xyz/v1", models: [{ id: "moonshotai/Kimi-K3", compat: { codeMode: "preferred" } }] },
          mine: { api: "openai-completions", apiKey: "env:MINE_KEY", models: [{ id: "m1", compat: { codeMode: "preferred" } }] },
        },
      },
    });
    expect(resolveActivation(parsed, { model: "together/moonshotai/Kimi-K3" }).engaged).toBe(true);
    expect(resolveActivation(parsed, { model: "together/zai-org/GLM-5.2" }).engaged).toBe(false);
    expect(findProvider(parsed, "together")?.baseUrl).toBe("https://api.together.xyz/v1");
    expect(resolveActivation(parsed, { model: "mine/m1" }).engaged).toBe(true);
    expect(findModel(parsed, "anthropic/claude-opus-5")?.compat?.codeMode).toBe("preferred");
  });

  it("user config never mutates the bundled catalogs", () => {
    config({ models: { providers: { openai: { models: [{ id: "gpt-5.6", compat: { codeMode: "capable" } }, { id: "extra" }] } } } });
    expect(findModel(config({}), "openai/gpt-5.6")?.compat?.codeMode).toBe("preferred");
    expect(findModel(config({}), "openai/extra")).toBeUndefined();
  });

  // Seed: models shipped by more than one provider.
  it("rows for one upstream model state a tier once any sibling does", () => {
    // A user row for a model the bundled catalogs tier, without a tier of its own: refused, naming the key.
    expect(rejection({ models: { providers: { openai: { models: [{ id: "gpt-5.6" }] } } } })).toEqual({
      path: "models.providers.openai.models[0].compat.codeMode",
      message: expect.stringContaining("another catalog row for the same upstream model (gpt-5.6) states one"),
    });
    // Namespaced and re-cased ids group too; so does upstreamModel.
    expect(rejection({ models: { providers: { myproxy: { models: [{ id: "OpenAI/GPT-5.6" }] } } } }).path).toBe(
      "models.providers.myproxy.models[0].compat.codeMode",
    );
    expect(rejection({ models: { providers: { alias: { models: [{ id: "luna", upstreamModel: "gpt-5.6-luna" }] } } } }).path).toBe(
      "models.providers.alias.models[0].compat.codeMode",
    );
    // Stating a tier, or a model no sibling tiers, is fine.
    expect(
      parseGatewayConfig({ models: { providers: { myproxy: { models: [{ id: "openai/gpt-5.6", compat: { codeMode: "capable" } }] } } } }).ok,
    ).toBe(true);
    expect(parseGatewayConfig({ models: { providers: { mine: { models: [{ id: "my-own-model" }, { id: "x/my-own-model" }] } } } }).ok).toBe(true);
    // Two user rows of a family new to the bundled catalogs: once one states a tier, both must.
    expect(
      rejection({
        models: { providers: { a: { models: [{ id: "newmodel", compat: { codeMode: "preferred" } }] }, b: { models: [{ id: "NewModel" }] } } },
      }).path,
    ).toBe("models.providers.b.models[0].compat.codeMode");
  });

  it("splitModelRef keeps namespaced ids whole", () => {
    expect(splitModelRef("novita/moonshotai/kimi-k3")).toEqual({ provider: "novita", id: "moonshotai/kimi-k3" });
    expect(splitModelRef("gpt-5.6")).toBeUndefined();
    expect(splitModelRef("/x")).toBeUndefined();
    expect(splitModelRef("openai/")).toBeUndefined();
  });
});

describe("bundled catalogs", () => {
  const seedTable: Record<string, string[]> = {
    anthropic: ["claude-fable-5", "claude-opus-5", "claude-sonnet-5", "claude-mythos-5", "claude-opus-4-8", "claude-haiku-4-5"],
    deepseek: ["deepseek-v4-pro", "deepseek-v4-flash"],
    google: [
      "gemini-3-flash-preview",
      "gemini-3.1-pro-preview",
      "gemini-3.1-flash-lite",
      "gemini-3.5-flash",
      "gemini-3.5-flash-lite",
      "gemini-3.6-flash",
      "gemini-3.7-flash",
    ],
    kimi: ["k3", "k3-256k"],
    minimax: ["MiniMax-M3"],
    moonshot: ["kimi-k3"],
    openai: ["gpt-5.6", "gpt-5.6-sol", "gpt-5.6-terra", "gpt-5.6-luna", "gpt-5.5", "gpt-5.5-pro"],
    xiaomi: ["mimo-v2.5"],
    zai: ["glm-5.3", "glm-5.2", "glm-5.1"],
  };

  it("first-party catalogs are exactly the seed's preferred table", () => {
    const shipped = Object.fromEntries(
      Object.entries(FIRST_PARTY_PROVIDERS).map(([provider, catalog]) => [provider, catalog.models.map((row) => row.id)]),
    );
    expect(shipped).toEqual(seedTable);
    for (const catalog of Object.values(FIRST_PARTY_PROVIDERS)) {
      for (const row of catalog.models) expect(row.compat).toEqual({ codeMode: "preferred", supportsTools: true });
    }
  });

  it("the seed's reseller catalogs all ship, every row explicitly capable and grouped with a preferred model", () => {
    expect(Object.keys(RESELLER_PROVIDERS).sort()).toEqual(
      [
        "baseten",
        "deepinfra",
        "github-copilot",
        "gmi",
        "novita",
        "nvidia",
        "ollama-cloud",
        "opencode",
        "opencode-go",
        "qianfan",
        "together",
        "venice",
        "volcengine-plan",
      ].sort(),
    );
    const preferredFamilies = new Set(Object.values(FIRST_PARTY_PROVIDERS).flatMap((catalog) => catalog.models.map(modelFamilyKey)));
    for (const [provider, catalog] of Object.entries(RESELLER_PROVIDERS)) {
      expect(catalog.models.length, provider).toBeGreaterThan(0);
      for (const row of catalog.models) {
        expect(row.compat?.codeMode, `${provider}/${row.id}`).toBe("capable");
        expect(preferredFamilies.has(modelFamilyKey(row)), `${provider}/${row.id}`).toBe(true);
      }
    }
  });

  it("namespaced and re-cased ids group with first-party rows; kimi groups through upstreamModel", () => {
    expect(modelFamilyKey({ id: "moonshotai/kimi-k3" })).toBe("kimi-k3");
    expect(modelFamilyKey({ id: "z-ai/glm-5.2" })).toBe("glm-5.2");
    expect(modelFamilyKey({ id: "deepseek-ai/DeepSeek-V4-Pro" })).toBe("deepseek-v4-pro");
    expect(findModel(config({}), "kimi/k3")?.upstreamModel).toBe("kimi-k3");
    expect(modelFamilyKey(findModel(config({}), "kimi/k3")!)).toBe(modelFamilyKey(findModel(config({}), "moonshot/kimi-k3")!));
  });

  it("bundled connection defaults reference secrets, never literals", () => {
    for (const catalog of Object.values(BUNDLED_PROVIDERS)) {
      if (catalog.apiKey !== undefined) expect(catalog.apiKey).toMatch(/^env:/);
    }
  });
});

describe("model override validation", () => {
  it("rejects auto on a model row, naming the key", () => {
    expect(rejection({ agents: { defaults: { models: { "openai/gpt-5.6": { codeMode: "auto" } } } } })).toEqual({
      path: 'agents.defaults.models["openai/gpt-5.6"].codeMode',
      message: 'agents.defaults.models["openai/gpt-5.6"].codeMode must be true or false ("auto" belongs on tools.codeMode)',
    });
    expect(rejection({ agents: { entries: { research: { models: { "openai/gpt-5.6": { codeMode: "auto" } } } } } }).path).toBe(
      'agents.entries.research.models["openai/gpt-5.6"].codeMode',
    );
  });

  it("rejects non-boolean model codeMode values", () => {
    expect(rejection({ agents: { defaults: { models: { "openai/gpt-5.6": { codeMode: 1 } } } } }).message).toBe(
      'agents.defaults.models["openai/gpt-5.6"].codeMode must be true or false',
    );
  });

  it("rejects codeMode on wildcard rows instead of ignoring it", () => {
    for (const codeMode of [true, false]) {
      expect(rejection({ agents: { defaults: { models: { "openai/*": { codeMode } } } } })).toEqual({
        path: 'agents.defaults.models["openai/*"].codeMode',
        message: 'agents.defaults.models["openai/*"].codeMode cannot be set on a wildcard model row; use an exact "provider/model" key',
      });
    }
    expect(rejection({ agents: { entries: { a: { models: { "*": { codeMode: true } } } } } }).path).toBe('agents.entries.a.models["*"].codeMode');
  });

  it("wildcard rows without codeMode are accepted", () => {
    const parsed = config({ agents: { defaults: { models: { "openai/*": { agentRuntime: { id: "openclaw" } } } } } });
    expect(parsed.agents.defaults.models["openai/*"]).toEqual({});
  });

  it("rejects codeMode on a key that is not provider/model", () => {
    expect(rejection({ agents: { defaults: { models: { "gpt-5.6": { codeMode: true } } } } }).message).toBe(
      'agents.defaults.models["gpt-5.6"].codeMode can only be set on an exact "provider/model" key',
    );
  });

  it("rejects a model row that is not an object", () => {
    expect(rejection({ agents: { defaults: { models: { "openai/gpt-5.6": true } } } })).toEqual({
      path: 'agents.defaults.models["openai/gpt-5.6"]',
      message: 'agents.defaults.models["openai/gpt-5.6"] must be an object',
    });
  });
});

describe("provider catalog validation", () => {
  const providers = (value: unknown) => ({ models: { providers: value } });

  it("rejects a literal apiKey without echoing it", () => {
    const error = rejection(providers({ openai: { apiKey: "sk-live-secret-123" } }));
    expect(error.path).toBe("models.providers.openai.apiKey");
    expect(error.message).toBe('models.providers.openai.apiKey must reference a Worker secret as "env:SECRET_NAME", never a literal key');
    expect(error.message).not.toContain("sk-live");
    expect(rejection(providers({ openai: { apiKey: "env:" } })).path).toBe("models.providers.openai.apiKey");
  });

  it("accepts env: references and connection fields", () => {
    const parsed = config(providers({ "my-proxy": { api: "anthropic-messages", baseUrl: "http://localhost:8080/v1", apiKey: "env:PROXY_KEY" } }));
    expect(findProvider(parsed, "my-proxy")).toEqual({
      api: "anthropic-messages",
      baseUrl: "http://localhost:8080/v1",
      apiKey: "env:PROXY_KEY",
      models: [],
    });
  });

  it.each([
    [{ openai: { api: "openai-responses" } }, "models.providers.openai.api", 'must be "openai-completions" or "anthropic-messages"'],
    [{ openai: { baseUrl: "ftp://x" } }, "models.providers.openai.baseUrl", "must be an http(s) URL"],
    [{ openai: { baseUrl: "not a url" } }, "models.providers.openai.baseUrl", "must be an http(s) URL"],
    [{ openai: { models: {} } }, "models.providers.openai.models", "must be an array of model rows"],
    [{ openai: { models: [{}] } }, "models.providers.openai.models[0].id", "must be a non-empty string"],
    [{ openai: { models: ["gpt-5.6"] } }, "models.providers.openai.models[0]", "must be an object"],
    [
      { x: { models: [{ id: "m", compat: { codeMode: "auto" } }] } },
      "models.providers.x.models[0].compat.codeMode",
      'must be "preferred" or "capable"',
    ],
    [
      { x: { models: [{ id: "m", compat: { supportsTools: "yes" } }] } },
      "models.providers.x.models[0].compat.supportsTools",
      "must be true or false",
    ],
    [
      { x: { models: [{ id: "m", cost: { input: -1 } }] } },
      "models.providers.x.models[0].cost.input",
      "must be a non-negative number (USD per 1M tokens)",
    ],
    [{ x: { models: [{ id: "m", upstreamModel: "" }] } }, "models.providers.x.models[0].upstreamModel", "must be a non-empty string"],
    [{ x: { models: [{ id: "m" }, { id: "m" }] } }, "models.providers.x.models[1].id", 'duplicates model id "m"'],
    [{ x: { models: [{ id: "m", contextWindow: 0 }] } }, "models.providers.x.models[0].contextWindow", "must be a positive integer (tokens)"],
    [{ x: { models: [{ id: "m", contextWindow: 1.5 }] } }, "models.providers.x.models[0].contextWindow", "must be a positive integer (tokens)"],
    [{ x: { models: [{ id: "m", contextWindow: "128000" }] } }, "models.providers.x.models[0].contextWindow", "must be a positive integer (tokens)"],
    [{ x: { models: [{ id: "m", maxTokens: -1 }] } }, "models.providers.x.models[0].maxTokens", "must be a positive integer (tokens)"],
    [{ x: { models: [{ id: "m", maxTokens: 1e300 }] } }, "models.providers.x.models[0].maxTokens", "must be a positive integer (tokens)"],
    [{ "a/b": {} }, 'models.providers["a/b"]', 'is not a valid provider id (it must be non-empty and contain no "/")'],
    [{ x: 1 }, "models.providers.x", "must be an object"],
    ["openai", "models.providers", "must be an object keyed by provider id"],
  ])("rejects %j", (value, path, problem) => {
    expect(rejection(providers(value))).toEqual({ path, message: `${path} ${problem}` });
  });

  it("accepts unknown keys on providers and rows (kept in raw)", () => {
    const raw = providers({ x: { headers: { a: "b" }, models: [{ id: "m", name: "M", contextTokens: 1000, compat: { reasoning: true } }] } });
    const parsed = config(raw);
    expect(findModel(parsed, "x/m")).toEqual({ provider: "x", id: "m", compat: {} });
    expect(parsed.raw).toBe(raw);
  });

  it("types a row's contextWindow and maxTokens (positive integers)", () => {
    const parsed = config(providers({ x: { models: [{ id: "m", contextWindow: 200_000, maxTokens: 8192 }, { id: "n" }] } }));
    expect(findModel(parsed, "x/m")).toEqual({ provider: "x", id: "m", contextWindow: 200_000, maxTokens: 8192 });
    expect(findModel(parsed, "x/n")).toEqual({ provider: "x", id: "n" });
  });
});

describe("loadGatewayConfig", () => {
  it("DEFAULT_GATEWAY_CONFIG turns code mode on for the demo", () => {
    expect(DEFAULT_GATEWAY_CONFIG).toEqual({ tools: { codeMode: true } });
  });

  it.each([[{}], [{ CODEMODE_CONFIG: "" }], [{ CODEMODE_CONFIG: "  \n" }]])("uses the bundled default when unset (%j)", (env) => {
    const result = loadGatewayConfig(env);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(resolveCodeModeOptions(result.config).enabled).toBe(true);
    expect(resolveActivation(result.config, { model: "ollama/llama4" }).engaged).toBe(true);
  });

  it("CODEMODE_CONFIG is laid over the default: a snippet that does not mention code mode keeps it on", () => {
    const result = loadGatewayConfig({ CODEMODE_CONFIG: JSON.stringify({ tools: { toolSearch: true } }) });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(resolveCodeModeOptions(result.config).enabled).toBe(true);
    expect(result.config.toolSearch).toEqual({ enabled: true });
  });

  it("invalid JSON is an error at CODEMODE_CONFIG that does not quote the text", () => {
    expect(loadGatewayConfig({ CODEMODE_CONFIG: '{ "tools": { "codeMode": tru, "k": "sk-secret" ' })).toEqual({
      ok: false,
      error: { path: "CODEMODE_CONFIG", message: "CODEMODE_CONFIG is not valid JSON: unexpected character (expected a value) at line 1, column 26" },
    });
  });

  it("valid JSON that is not an object is an error at CODEMODE_CONFIG", () => {
    expect(loadGatewayConfig({ CODEMODE_CONFIG: "[1]" })).toEqual({
      ok: false,
      error: { path: "CODEMODE_CONFIG", message: "CODEMODE_CONFIG must be a JSON object" },
    });
  });

  it("validation errors inside CODEMODE_CONFIG keep their key path", () => {
    expect(loadGatewayConfig({ CODEMODE_CONFIG: '{"tools":{"codeMode":{"timeoutMs":"10s"}}}' })).toEqual({
      ok: false,
      error: { path: "tools.codeMode.timeoutMs", message: "tools.codeMode.timeoutMs must be a number" },
    });
  });

  it("follows a changed CODEMODE_CONFIG rather than serving a stale result", () => {
    const on = loadGatewayConfig({ CODEMODE_CONFIG: '{"tools":{"codeMode":true}}' });
    const off = loadGatewayConfig({ CODEMODE_CONFIG: '{"tools":{"codeMode":false}}' });
    expect(on.ok && resolveCodeModeOptions(on.config).enabled).toBe(true);
    expect(off.ok && resolveCodeModeOptions(off.config).enabled).toBe(false);
  });
});

// Seed 004 (Tool Search).
describe("tools.toolSearch", () => {
  it("is off by default; true, or any object without enabled: false, turns it on with seed 004's defaults", () => {
    expect(resolveToolSearchOptions(config({}))).toEqual({
      enabled: false,
      mode: "code",
      codeTimeoutMs: 10_000,
      searchDefaultLimit: 8,
      maxSearchLimit: 20,
    });
    expect(resolveToolSearchOptions(config({ tools: { toolSearch: true } }))).toMatchObject({ enabled: true, mode: "code" });
    expect(resolveToolSearchOptions(config({ tools: { toolSearch: { mode: "tools" } } }))).toMatchObject({ enabled: true, mode: "tools" });
    expect(resolveToolSearchOptions(config({ tools: { toolSearch: { enabled: false, mode: "tools" } } }))).toMatchObject({ enabled: false });
  });

  it("rounds down and clamps numbers, and keeps searchDefaultLimit within maxSearchLimit", () => {
    const o = resolveToolSearchOptions(config({ tools: { toolSearch: { codeTimeoutMs: 5, searchDefaultLimit: 40.9, maxSearchLimit: 500 } } }));
    expect(o).toMatchObject({ codeTimeoutMs: 100, searchDefaultLimit: 40, maxSearchLimit: 50 });
    expect(
      resolveToolSearchOptions(config({ tools: { toolSearch: { codeTimeoutMs: 1e9, searchDefaultLimit: 30, maxSearchLimit: 0 } } })),
    ).toMatchObject({
      codeTimeoutMs: 60_000,
      maxSearchLimit: 1,
      searchDefaultLimit: 1,
    });
  });

  it("an agent's toolSearch lays over the global one field by field; false switches it off for that agent", () => {
    const c = config({
      tools: { toolSearch: { mode: "tools", codeTimeoutMs: 2000 } },
      agents: {
        entries: {
          a: { tools: { toolSearch: { maxSearchLimit: 5 } } },
          b: { tools: { toolSearch: false } },
          c: { tools: { toolSearch: { mode: "code" } } },
        },
      },
    });
    expect(resolveToolSearchOptions(c, "a")).toMatchObject({
      enabled: true,
      mode: "tools",
      codeTimeoutMs: 2000,
      maxSearchLimit: 5,
      searchDefaultLimit: 5,
    });
    expect(resolveToolSearchOptions(c, "b")).toMatchObject({ enabled: false, mode: "tools" });
    expect(resolveToolSearchOptions(c, "c")).toMatchObject({ enabled: true, mode: "code", codeTimeoutMs: 2000 });
    expect(resolveToolSearchOptions(c, "unknown")).toMatchObject({ enabled: true, mode: "tools" });
  });

  it("planSurface: no tools → none; code mode wins; Tool Search needs a model that can call tools; code falls back to tools without a sandbox", () => {
    const c = config({
      tools: { toolSearch: true },
      models: { providers: { local: { models: [{ id: "tiny", compat: { supportsTools: false } }] } } },
    });
    const run = { toolsActive: true, codeModeEngaged: false, sandboxStarts: true };
    expect(planSurface(c, { ...run, toolsActive: false })).toEqual({ kind: "none" });
    expect(planSurface(c, { ...run, codeModeEngaged: true })).toEqual({ kind: "code_mode" });
    expect(planSurface(c, run)).toMatchObject({ kind: "tool_search", options: { mode: "code" } });
    expect(planSurface(c, { ...run, model: "local/tiny" })).toEqual({ kind: "direct" });
    expect(planSurface(c, { ...run, sandboxStarts: false })).toMatchObject({ kind: "tool_search", options: { mode: "tools" }, fallbackFrom: "code" });
    expect(planSurface(config({}), run)).toEqual({ kind: "direct" });
  });
});

describe("mcp.servers", () => {
  it("accepts servers with env: header references and refuses bad ones naming the key", () => {
    const c = config({ mcp: { servers: { github: { url: "https://mcp.example/github", headers: { authorization: "env:GITHUB_TOKEN" } } } } });
    expect(c.mcpServers).toEqual({ github: { url: "https://mcp.example/github", headers: { authorization: "env:GITHUB_TOKEN" } } });
    for (const [raw, path] of [
      [{ mcp: { servers: { a: { url: "ftp://x" } } } }, "mcp.servers.a.url"],
      [{ mcp: { servers: { a: { url: "https://x.example", headers: { authorization: "env:bad name" } } } } }, "mcp.servers.a.headers"],
      [{ mcp: { servers: { a: "https://x.example" } } }, "mcp.servers.a"],
      [{ mcp: { server: {} } }, "mcp.server"],
    ] as const) {
      const r = parseGatewayConfig(raw);
      expect(r.ok, JSON.stringify(raw)).toBe(false);
      if (!r.ok) expect(r.error.path).toBe(path);
    }
  });
});
