/** The gateway config the test workers run with (CODEMODE_CONFIG binding), less the fake providers (`testConfig`). */
export const TEST_CONFIG = {
  // Swarm is on by default in production; off here so the Swarm tools join only the turns of the agents below that turn it on.
  tools: { codeMode: true, swarm: false },
  agents: {
    // Per-model override: this model never engages, whatever the global setting.
    defaults: { models: { "openai/gpt-5.5": { codeMode: false } } },
    entries: {
      // Swarm on (test/e2e/swarm.test.ts): a parked cell waits for its sub-agents; "swarmtools": direct tools; "swarmoff": the object form of the opt-out.
      swarm: { tools: { swarm: true, codeMode: { timeoutMs: 1500 } } },
      swarmtools: { tools: { swarm: { enabled: true }, codeMode: false } },
      swarmoff: { tools: { swarm: { enabled: false } } },
      // Swarm with a bound of 3 model calls for all sub-agents of a turn (test/e2e/swarm-model-call-bound.test.ts).
      swarmcapped: { tools: { swarm: { enabled: true, maxModelCalls: 3 }, codeMode: { timeoutMs: 1500 } } },
      // Swarm two levels deep (test/e2e/swarm-depth.test.ts): a child may start a grandchild; a long deadline so a child's cell waits for it in one exec.
      swarmdeep: { tools: { swarm: { enabled: true, maxDepth: 2 }, codeMode: { timeoutMs: 10_000 } } },
      // Swarm with every sessions_spawn gated by an operator (test/e2e/swarm-reissue-admitted.test.ts).
      swarmapprove: { tools: { swarm: true, codeMode: { timeoutMs: 1500 } }, approvals: { require: ["sessions_spawn"], timeoutSeconds: 30 } },
      // Short budgets so hostile cells stop quickly.
      fast: { tools: { codeMode: { timeoutMs: 400 } } },
      // Small output, pending-call and memory caps (2 KB, 4 calls, 8 MiB) to hit each limit.
      tight: { tools: { codeMode: { timeoutMs: 2000, maxOutputBytes: 2048, maxPendingToolCalls: 4, memoryLimitBytes: 8 * 1024 * 1024 } } },
      // JavaScript the only enabled language: TypeScript cells are refused.
      jsonly: { tools: { codeMode: { languages: ["javascript"] } } },
      // TypeScript the only enabled language: the exec schema's default follows.
      tsonly: { tools: { codeMode: { languages: ["typescript"] } } },
      // Code mode off: the model gets every tool directly (the direct surface).
      off: { tools: { codeMode: false } },
      // Short exec deadline so slow tools park; short TTL for expiry tests.
      park: { tools: { codeMode: { timeoutMs: 300, snapshotTtlSeconds: 60 } } },
      // Parks like `park`, with a 2 KB output budget shared across waits and pending inputs bounded by it.
      parktight: { tools: { codeMode: { timeoutMs: 300, maxOutputBytes: 2048 } } },
      // A 1 KB maxSnapshotBytes: any park is snapshot_limit_exceeded.
      tinysnap: { tools: { codeMode: { timeoutMs: 300, maxSnapshotBytes: 1024 } } },
      // "auto" engages only for models their provider catalog marks preferred.
      autoagent: { tools: { codeMode: { enabled: "auto" } } },
      // Room for one fresh snapshot (~1.4 MB) but not for a cell holding a few MB.
      snapcap: { tools: { codeMode: { timeoutMs: 2000, maxSnapshotBytes: 2_000_000 } } },
      // 128 MiB VMs, 64 MiB snapshots: snapshots stored in chunks; a VM asking more than the isolate's memory budget.
      bigsnap: { tools: { codeMode: { timeoutMs: 5000, memoryLimitBytes: 128 * 1024 * 1024, maxSnapshotBytes: 64 * 1024 * 1024 } } },
      // Large VMs for the isolate memory ledger (80 MiB budget): one fits, a second does not.
      bigmem: { tools: { codeMode: { timeoutMs: 20_000, memoryLimitBytes: 48 * 1024 * 1024 } } },
      // The same large VM with a 500 ms deadline: no room within the deadline is runtime_unavailable.
      bigmemquick: { tools: { codeMode: { timeoutMs: 500, memoryLimitBytes: 48 * 1024 * 1024 } } },
      // Tool Search (seed 004) where code mode is off, with the default code bridge (tool_search_code).
      search: { tools: { codeMode: false, toolSearch: true } },
      // Tool Search in `tools` mode (structured tool_search/tool_describe/tool_call) with small search limits.
      searchtools: { tools: { codeMode: false, toolSearch: { mode: "tools", searchDefaultLimit: 2, maxSearchLimit: 3 } } },
      // Short budgets so hostile tool_search_code bodies stop quickly.
      searchfast: {
        tools: { codeMode: { enabled: false, maxOutputBytes: 2048, memoryLimitBytes: 8 * 1024 * 1024 }, toolSearch: { codeTimeoutMs: 400 } },
      },
      // Tool Search handing client tools to the caller (issue 20): a pending-call cap of 2, ask_gated needs an operator.
      searchclient: {
        tools: { codeMode: { enabled: false, maxPendingToolCalls: 2 }, toolSearch: { codeTimeoutMs: 5000 } },
        approvals: { require: ["ask_gated"], timeoutSeconds: 30 },
      },
      // The same in `tools` mode: tool_call hands out client tools.
      searchtoolsclient: {
        tools: { codeMode: { enabled: false, maxPendingToolCalls: 2 }, toolSearch: { mode: "tools" } },
        approvals: { require: ["ask_gated"], timeoutSeconds: 30 },
      },
      // One config, three surfaces: code mode for preferred models, Tool Search for capable ones, direct where both are off.
      mixed: { tools: { codeMode: "auto", toolSearch: true }, models: { "ollama/llama3": { codeMode: false } } },
      // Code mode and Tool Search both off: the direct surface, for comparison with Tool Search turns.
      searchoff: { tools: { codeMode: false, toolSearch: false } },
      // Operator approvals (issue 12): notes_write and every MCP tool of the `everything` server need one.
      // `approve` has a 1 s cell budget: a cell waiting longer for a decision must still complete.
      approve: { tools: { codeMode: { timeoutMs: 1000 } }, approvals: { require: ["notes_write", "everything__*"], timeoutSeconds: 30 } },
      // notes_* gated with 1 s to decide: approvals that time out.
      approvefast: { tools: { codeMode: { timeoutMs: 1000 } }, approvals: { require: ["notes_*"], timeoutSeconds: 1 } },
      // Code mode off: a direct tool call waits for the decision.
      approvedirect: { tools: { codeMode: false }, approvals: { require: ["notes_write"], timeoutSeconds: 30 } },
      // Tool Search `tools` mode: a hidden tool called through tool_call waits for the decision.
      approvesearch: { tools: { codeMode: false, toolSearch: { mode: "tools" } }, approvals: { require: ["notes_write"], timeoutSeconds: 30 } },
      // A 300 ms exec deadline: runs park, and a gated call after a wait resume asks again.
      approvepark: { tools: { codeMode: { timeoutMs: 300 } }, approvals: { require: ["notes_write"], timeoutSeconds: 30 } },
      // Resuming a parked run (the outer wait) needs an operator's approval.
      approvewait: { approvals: { require: ["wait"], timeoutSeconds: 30 } },
      approvedisguised: { approvals: { require: ["disguised__*"], timeoutSeconds: 30 } },
      // Large VMs waiting for a decision give their memory back (test/e2e/approval-wait-memory.test.ts).
      approvebig: {
        tools: { codeMode: { timeoutMs: 20_000, memoryLimitBytes: 48 * 1024 * 1024 } },
        approvals: { require: ["notes_write"], timeoutSeconds: 30 },
      },
      // The same large VM with a 1 s budget: too short to wait for room to wake in after the decision.
      approvebigquick: {
        tools: { codeMode: { timeoutMs: 1000, memoryLimitBytes: 48 * 1024 * 1024 } },
        approvals: { require: ["notes_write"], timeoutSeconds: 30 },
      },
      // The same large VM with a 1 KB maxSnapshotBytes: too large to snapshot, it keeps its VM while it waits.
      approvebigsnapcap: {
        tools: { codeMode: { timeoutMs: 20_000, memoryLimitBytes: 48 * 1024 * 1024, maxSnapshotBytes: 1024 } },
        approvals: { require: ["notes_write"], timeoutSeconds: 30 },
      },
      // Gates `echo` (its `value` takes anything): the approval preview under a padded input.
      approvepreview: { approvals: { require: ["echo"], timeoutSeconds: 30 } },
    },
  },
};

/**
 * Worker secrets of the fake providers (miniflare bindings). The fake server accepts any key starting
 * with `fake-key-`; `FAKE_BAD_KEY` is one it refuses (401 in the vendor's format).
 */
export const FAKE_PROVIDER_SECRETS = {
  FAKE_OPENAI_KEY: "fake-key-openai",
  FAKE_ANTHROPIC_KEY: "fake-key-anthropic",
  FAKE_BAD_KEY: "wrong-key",
};

const tested = { codeMode: "preferred", supportsTools: true } as const;

/**
 * Provider catalogs served by the fake provider server (test/support/fake-providers.mjs) at
 * `baseUrl` (`http://127.0.0.1:<port>/v1`): both wire formats, a model with and one without prices,
 * one with a small context window, and providers whose key the server refuses.
 */
export function fakeProviderCatalogs(baseUrl: string) {
  return {
    fakeoai: {
      api: "openai-completions",
      baseUrl,
      apiKey: "env:FAKE_OPENAI_KEY",
      models: [
        { id: "gpt-fake", compat: tested, cost: { input: 2, output: 8, cacheRead: 0.5, cacheWrite: 0 } },
        { id: "gpt-fake-nocost", compat: tested },
        { id: "gpt-fake-small", compat: tested, contextWindow: 8000, maxTokens: 1000, cost: { input: 2, output: 8 } },
        // Ids of families the AI SDK shapes requests for, which we build the same way (test/e2e/provider-model-families.test.ts).
        { id: "o3", compat: tested },
      ],
    },
    fakeant: {
      api: "anthropic-messages",
      baseUrl,
      apiKey: "env:FAKE_ANTHROPIC_KEY",
      models: [
        { id: "claude-fake", compat: tested, cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } },
        // A Messages-compatible model that is not a current Claude: the wire client sends its sampling settings.
        { id: "messages-fake", compat: tested },
        { id: "claude-sonnet-4-5", compat: tested },
      ],
    },
    "fakeoai-badkey": { api: "openai-completions", baseUrl, apiKey: "env:FAKE_BAD_KEY", models: [{ id: "gpt-fake", compat: tested }] },
    "fakeant-badkey": { api: "anthropic-messages", baseUrl, apiKey: "env:FAKE_BAD_KEY", models: [{ id: "claude-fake", compat: tested }] },
  };
}

/** TEST_CONFIG with the fake providers on `127.0.0.1:<fakeProviderPort>`. */
/** The one browser origin the gateway project's config allows (`gateway.cors.allowedOrigins`). */
export const ALLOWED_TEST_ORIGIN = "https://app.codemode.test";

export function testConfig(fakeProviderPort: number, opts: { privateMcp?: boolean; corsOrigins?: string[] } = {}) {
  return {
    ...TEST_CONFIG,
    // CORS is off by default; the gateway project allows one browser origin (test/e2e/cors.test.ts).
    ...(opts.corsOrigins ? { gateway: { cors: { allowedOrigins: opts.corsOrigins } } } : {}),
    models: {
      providers: fakeProviderCatalogs(`http://127.0.0.1:${fakeProviderPort}/v1`),
      // Names a facade client may send as `model`; `unkeyed` names a bundled model whose key secret the tests never set.
      aliases: { "codemode-fast": "fakeoai/gpt-fake", "codemode-claude": "fakeant/claude-fake", unkeyed: "openai/gpt-5.5" },
    },
    // The MCP peers of the tests listen on loopback; the search project keeps the default (refused).
    ...(opts.privateMcp === false ? {} : { mcp: { allowPrivateAddresses: true } }),
  };
}
