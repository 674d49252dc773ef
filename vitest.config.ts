import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

export default defineConfig({
  plugins: [
    cloudflareTest({
      wrangler: { configPath: "./wrangler.toml" },
      miniflare: {
        bindings: { GATEWAY_TOKENS: JSON.stringify({ "test-token-a": "tenant-a", "test-token-b": "tenant-b" }) },
      },
    }),
  ],
});
