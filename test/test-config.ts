/** The gateway config the test workers run with (CODEMODE_CONFIG binding). */
export const TEST_CONFIG = {
  tools: { codeMode: true },
  agents: {
    entries: {
      // Short budgets so hostile cells stop quickly.
      fast: { tools: { codeMode: { timeoutMs: 400 } } },
      tight: { tools: { codeMode: { timeoutMs: 2000, maxOutputBytes: 2048, maxPendingToolCalls: 4, memoryLimitBytes: 8 * 1024 * 1024 } } },
      jsonly: { tools: { codeMode: { languages: ["javascript"] } } },
      off: { tools: { codeMode: false } },
    },
  },
};
