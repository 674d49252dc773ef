import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { TEST_CONFIG } from "./test/test-config.ts";

export default defineConfig({
  // CI machines have 2 cores; the first TypeScript cell loads a 9 MB compiler.
  test: { testTimeout: 30_000 },
  plugins: [
    cloudflareTest({
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
    }),
  ],
});
