/** The gateway config the test workers run with (CODEMODE_CONFIG binding), less the fake providers (`testConfig`). */
export const TEST_CONFIG = {
  tools: { codeMode: true },
  agents: {
    // Per-model override: this model never engages, whatever the global setting.
    defaults: { models: { "openai/gpt-5.5": { codeMode: false } } },
    entries: {
      // Short budgets so hostile cells stop quickly.
      fast: { tools: { codeMode: { timeoutMs: 400 } } },
      tight: { tools: { codeMode: { timeoutMs: 2000, maxOutputBytes: 2048, maxPendingToolCalls: 4, memoryLimitBytes: 8 * 1024 * 1024 } } },
      jsonly: { tools: { codeMode: { languages: ["javascript"] } } },
      tsonly: { tools: { codeMode: { languages: ["typescript"] } } },
      off: { tools: { codeMode: false } },
      // Short exec deadline so slow tools park; short TTL for expiry tests.
      park: { tools: { codeMode: { timeoutMs: 300, snapshotTtlSeconds: 60 } } },
      parktight: { tools: { codeMode: { timeoutMs: 300, maxOutputBytes: 2048 } } },
      tinysnap: { tools: { codeMode: { timeoutMs: 300, maxSnapshotBytes: 1024 } } },
      // "auto" engages only for models their provider catalog marks preferred.
      autoagent: { tools: { codeMode: { enabled: "auto" } } },
      // Room for one fresh snapshot (~1.4 MB) but not for a cell holding a few MB.
      snapcap: { tools: { codeMode: { timeoutMs: 2000, maxSnapshotBytes: 2_000_000 } } },
      bigsnap: { tools: { codeMode: { timeoutMs: 5000, memoryLimitBytes: 128 * 1024 * 1024, maxSnapshotBytes: 64 * 1024 * 1024 } } },
      // Large VMs for the isolate memory ledger (80 MiB budget): one fits, a second does not.
      bigmem: { tools: { codeMode: { timeoutMs: 20_000, memoryLimitBytes: 48 * 1024 * 1024 } } },
      bigmemquick: { tools: { codeMode: { timeoutMs: 500, memoryLimitBytes: 48 * 1024 * 1024 } } },
      // Tool Search (seed 004) where code mode is off: the default code bridge, and the structured tools.
      search: { tools: { codeMode: false, toolSearch: true } },
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
      searchtoolsclient: {
        tools: { codeMode: { enabled: false, maxPendingToolCalls: 2 }, toolSearch: { mode: "tools" } },
        approvals: { require: ["ask_gated"], timeoutSeconds: 30 },
      },
      // One config, three surfaces: code mode for preferred models, Tool Search for capable ones, direct where both are off.
      mixed: { tools: { codeMode: "auto", toolSearch: true }, models: { "ollama/llama3": { codeMode: false } } },
      searchoff: { tools: { codeMode: false, toolSearch: false } },
      // Operator approvals (issue 12): notes_write and every MCP tool of the `everything` server need one.
      // `approve` has a 1 s cell budget: a cell waiting longer for a decision must still complete.
      approve: { tools: { codeMode: { timeoutMs: 1000 } }, approvals: { require: ["notes_write", "everything__*"], timeoutSeconds: 30 } },
      approvefast: { tools: { codeMode: { timeoutMs: 1000 } }, approvals: { require: ["notes_*"], timeoutSeconds: 1 } },
      approvedirect: { tools: { codeMode: false }, approvals: { require: ["notes_write"], timeoutSeconds: 30 } },
      approvesearch: { tools: { codeMode: false, toolSearch: { mode: "tools" } }, approvals: { require: ["notes_write"], timeoutSeconds: 30 } },
      approvepark: { tools: { codeMode: { timeoutMs: 300 } }, approvals: { require: ["notes_write"], timeoutSeconds: 30 } },
      // Resuming a parked run (the outer wait) needs an operator's approval.
      approvewait: { approvals: { require: ["wait"], timeoutSeconds: 30 } },
      // Large VMs waiting for a decision give their memory back (test/e2e/approval-wait-memory.test.ts);
      // `quick` has 1 s to get it back, `snapcap` is too large to snapshot and keeps its VM.
      approvebig: {
        tools: { codeMode: { timeoutMs: 20_000, memoryLimitBytes: 48 * 1024 * 1024 } },
        approvals: { require: ["notes_write"], timeoutSeconds: 30 },
      },
      approvebigquick: {
        tools: { codeMode: { timeoutMs: 1000, memoryLimitBytes: 48 * 1024 * 1024 } },
        approvals: { require: ["notes_write"], timeoutSeconds: 30 },
      },
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
    models: { providers: fakeProviderCatalogs(`http://127.0.0.1:${fakeProviderPort}/v1`) },
    // The MCP peers of the tests listen on loopback; the search project keeps the default (refused).
    ...(opts.privateMcp === false ? {} : { mcp: { allowPrivateAddresses: true } }),
  };
}
