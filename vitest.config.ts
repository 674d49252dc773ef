import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { TEST_CONFIG } from "./test/test-config.ts";

export default defineConfig({
  plugins: [
    cloudflareTest({
      wrangler: { configPath: "./wrangler.toml" },
      miniflare: {
        bindings: {
          GATEWAY_TOKENS: JSON.stringify({ "test-token-a": "tenant-a", "test-token-b": "tenant-b" }),
          CODEMODE_CONFIG: JSON.stringify(TEST_CONFIG),
        },
      },
    }),
  ],
});
