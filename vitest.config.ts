import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { TEST_CONFIG } from "./test/test-config.ts";

/** Both projects run inside workerd through the Workers vitest integration. */
function workers(main?: string) {
  return cloudflareTest({
    ...(main ? { main } : {}),
    wrangler: { configPath: "./wrangler.toml" },
    miniflare: {
      // The test runner ships each dependency to workerd as one WebSocket message; the
      // TypeScript compiler (~9 MB) needs more than the default 1 MiB. Test runner only.
      compatibilityFlags: ["increase_websocket_message_size"],
      bindings: {
        GATEWAY_TOKENS: JSON.stringify({ "test-token-a": "tenant-a", "test-token-b": "tenant-b" }),
        CODEMODE_CONFIG: JSON.stringify(TEST_CONFIG),
      },
    },
  });
}

export default defineConfig({
  test: {
    projects: [
      // The shipped entry (src/index.ts: demo plugin).
      { plugins: [workers()], test: { name: "gateway", include: ["test/unit/**/*.test.ts", "test/e2e/**/*.test.ts"], testTimeout: 30_000 } },
      // An embedding entry with extra plugins (core tools, a shell-style exec, direct-only and
      // contract-breaking tools) to drive catalog rules through the real path.
      { plugins: [workers("./test/kit/entry.ts")], test: { name: "kit", include: ["test/kit/**/*.test.ts"], testTimeout: 30_000 } },
    ],
  },
});
