import { cloudflareTest } from "@cloudflare/vitest-plugin";
import type { Plugin } from "vite";
import { defineConfig } from "vitest/config";
import { freeLoopbackPort } from "./test/support/free-port.mjs";
import { ALLOWED_TEST_ORIGIN, FAKE_PROVIDER_SECRETS, testConfig } from "./test/test-config.ts";
import { buildTypeScriptModule } from "./scripts/build-typescript-module.mjs";
import { routeExpectedWorkerdLines } from "./test/support/workerd-log-filter.mjs";

// src/generated/typescript.mjs (the TypeScript compiler as a module of its own) is generated and
// git-ignored; wrangler builds it before dev/deploy, the tests build it here (a no-op when current).
await buildTypeScriptModule();

/**
 * The fake provider server's port (test/support/fake-providers.mjs), fixed here because the workers'
 * CODEMODE_CONFIG names it in provider base URLs before any worker starts: a free loopback port,
 * probed and released, handed to the globalSetup through the environment (it fails loudly if the
 * port was taken in between). An explicit CODEMODE_FAKE_PROVIDER_PORT wins.
 */
process.env.CODEMODE_FAKE_PROVIDER_PORT ??= String(await freeLoopbackPort());
const FAKE_PROVIDER_PORT = Number(process.env.CODEMODE_FAKE_PROVIDER_PORT);
// The kit project (its own embedding entry) has its own fake provider server: projects may run at once.
process.env.CODEMODE_FAKE_PROVIDER_PORT_KIT ??= String(await freeLoopbackPort());
const KIT_FAKE_PROVIDER_PORT = Number(process.env.CODEMODE_FAKE_PROVIDER_PORT_KIT);

/**
 * Every project but `unit` runs inside workerd through the Workers vitest integration.
 * `requestsPerMinute` replaces the per-tenant RATE_LIMITER limit of wrangler.toml: far above what a
 * suite sends for the functional projects, tiny for the one that proves the 429.
 */
function workers(options: {
  main?: string;
  requestsPerMinute: number;
  fakeProviderPort?: number;
  privateMcp?: boolean;
  corsOrigins?: string[];
  kvNamespaces?: string[];
}) {
  return cloudflareTest({
    ...(options.main ? { main: options.main } : {}),
    wrangler: { configPath: "./wrangler.toml" },
    miniflare: {
      // The test runner ships each dependency to workerd as one WebSocket message; the
      // TypeScript compiler (~3.5 MB) needs more than the default 1 MiB. Test runner only.
      compatibilityFlags: ["increase_websocket_message_size"],
      bindings: {
        GATEWAY_TOKENS: JSON.stringify({ "test-token-a": "tenant-a", "test-token-b": "tenant-b" }),
        CODEMODE_CONFIG: JSON.stringify(
          testConfig(options.fakeProviderPort ?? FAKE_PROVIDER_PORT, { privateMcp: options.privateMcp, corsOrigins: options.corsOrigins }),
        ),
        ...FAKE_PROVIDER_SECRETS,
      },
      ratelimits: { RATE_LIMITER: { namespace_id: "1001", simple: { limit: options.requestsPerMinute, period: 60 } } },
      ...(options.kvNamespaces ? { kvNamespaces: options.kvNamespaces } : {}),
    },
  });
}

// workerd's own lines for failures the tests provoke on purpose (a refused connection to a closed
// port, a cancelled body) go to .wrangler/test-logs/workerd-expected.log; any other line prints.
// Here, not in a globalSetup: the plugin writes them from this (the main) process, to stdout.
routeExpectedWorkerdLines();

// Wrangler announces at info level that it read .dev.vars, once per test file; its warnings and
// errors still print. An explicit WRANGLER_LOG (e.g. debug) wins.
process.env.WRANGLER_LOG ??= "warn";

/**
 * quickjs-wasi's dist files and the MCP SDK's dist files end in sourceMappingURL
 * comments whose maps (or their sources) the packages do not ship, and Vite warns about each on
 * every run. They are loaded without the comment: no source maps for those two dependencies,
 * nothing else changes.
 */
function withoutDanglingSourceMaps(): Plugin {
  const ids = [
    /\/node_modules\/quickjs-wasi\/dist\/[^/]+\.js$/,
    /\/node_modules\/@modelcontextprotocol\/sdk\/dist\/esm\/.+\.js$/,
    // Dependencies of the openai and AI SDK clients the /v1 facade tests drive.
    /\/node_modules\/standardwebhooks\/dist\/.+\.js$/,
    /\/node_modules\/@workflow\/serde\/dist\/.+\.js$/,
  ];
  return {
    name: "codemode:without-dangling-source-maps",
    enforce: "pre",
    async load(id) {
      const file = id.split("?")[0]!;
      if (!ids.some((re) => re.test(file))) return null;
      const code = await this.fs.readFile(file, { encoding: "utf8" });
      return { code: code.replace(/^\/\/# sourceMappingURL=.*$/gm, ""), map: null };
    },
  };
}

/**
 * Unit tests that need workerd: they start a QuickJS VM (its wasm module loads only under
 * workerd), import `cloudflare:workers`, or talk to a server a globalSetup starts. Every other file
 * under test/unit runs in the Node `unit` project, in seconds; a unit test that starts a VM fails
 * there naming this list (test/support/quickjs-wasm-unavailable.ts).
 */
const UNIT_IN_WORKERD = [
  "test/unit/catalog/catalog.test.ts",
  "test/unit/mcp/mcp-client.test.ts",
  "test/unit/runs/run-lifecycle.test.ts",
  "test/unit/session/turn-service.test.ts",
  "test/unit/package-surface.test.ts",
  "test/unit/runtime/guest-abi.test.ts",
  "test/unit/runtime/guest-seed.test.ts",
  "test/unit/runtime/setup-images.test.ts",
  "test/unit/runtime/image-restore.test.ts",
  "test/unit/runtime/image-reset-zero-pages.test.ts",
  "test/unit/runtime/memory-ledger.test.ts",
  "test/unit/runtime/vm-pool-upkeep.test.ts",
  "test/unit/snapshot-store/pristine-image.test.ts",
  "test/unit/snapshot-store/snapshot-codec.test.ts",
  "test/unit/source/typescript-transform.test.ts",
];

/**
 * Files that assert on an isolate's first-use state (the TypeScript compiler not loaded yet) or on
 * which VM instance its pool hands to the next cell (another file's leftover alarms and resumes would
 * take them): they get a fresh workerd runtime each. Every other workerd file shares one runtime per worker
 * (`isolate: false`): starting Miniflare and shipping the modules again for each of ~80 files cost
 * more than half of the suite's time. Those files use their own sessions and tenants, so sharing the
 * runtime changes nothing they assert.
 */
const FRESH_ISOLATE = [
  "test/e2e/typescript-cells.test.ts",
  "test/unit/source/typescript-transform.test.ts",
  "test/unit/source/typescript-strip.test.ts",
  "test/e2e/source-budget.test.ts",
  "test/e2e/vm-reset-zero-pages-hostile.test.ts",
];

/** Gateway log lines go to memory, not the terminal (test/support/log-capture.ts); tests read them. */
const LOG_CAPTURE = ["./test/support/log-capture.ts"];

/**
 * The MCP reference server (server-everything) on a free loopback port, started in Node before the
 * project's tests and stopped after; tests read its URL with `inject("mcpEverythingUrl")`.
 */
const MCP_EVERYTHING = ["./test/support/mcp-everything-server.mjs"];

/** A hostile MCP server (oversized and over-deep answers) in Node; tests read its URL with `inject("mcpHostileUrl")`. */
const MCP_HOSTILE = ["./test/support/mcp-hostile-server.mjs"];

/**
 * The fake provider server (OpenAI Chat Completions + Anthropic Messages, scripted) on the port picked
 * above; tests read its URL with `inject("fakeProviderUrl")`.
 */
const FAKE_PROVIDERS = ["./test/support/fake-providers.mjs"];

export default defineConfig({
  test: {
    // Four test files at once on the 2-core machines CI runs on: the workerd files mostly wait (timers,
    // parked runs, local servers), and with the default (one per core, less one) the suite kept the
    // cores half idle; the gateway project took 3m03s with one worker and 1m33s with four.
    maxWorkers: 4,
    projects: [
      // Pure modules in plain Node, no workerd: the inner loop (`npm run test:unit`). The engine's
      // wasm import resolves to a stand-in that refuses to start a VM.
      {
        plugins: [withoutDanglingSourceMaps()],
        resolve: {
          alias: [
            {
              find: /^(quickjs-wasi\/|\.\/)quickjs\.wasm$/,
              replacement: "/test/support/quickjs-wasm-unavailable.ts",
            },
          ],
        },
        test: {
          name: "unit",
          environment: "node",
          setupFiles: LOG_CAPTURE,
          include: ["test/unit/**/*.test.ts"],
          exclude: [...UNIT_IN_WORKERD, ...FRESH_ISOLATE],
          // One module graph per worker, not per file: a fresh worker per file (~1 s each on 2 cores)
          // was more than half of this project's time. Files hold no shared state they depend on:
          // they pass in any order (checked with --sequence.shuffle.files).
          isolate: false,
          testTimeout: 30_000,
        },
      },
      // The shipped entry's gateway (demo plugin) with dependencies the tests control (test/e2e/entry.ts).
      {
        plugins: [
          withoutDanglingSourceMaps(),
          workers({ main: "./test/e2e/entry.ts", requestsPerMinute: 1_000_000, corsOrigins: [ALLOWED_TEST_ORIGIN] }),
        ],
        test: {
          name: "gateway",
          setupFiles: [...LOG_CAPTURE, "./test/e2e/reset-session-controls.ts"],
          globalSetup: [...MCP_EVERYTHING, ...MCP_HOSTILE, ...FAKE_PROVIDERS],
          include: [...UNIT_IN_WORKERD, "test/e2e/**/*.test.ts"],
          exclude: FRESH_ISOLATE,
          isolate: false,
          testTimeout: 30_000,
        },
      },
      // The same entry, a fresh runtime per file (FRESH_ISOLATE).
      {
        plugins: [withoutDanglingSourceMaps(), workers({ main: "./test/e2e/entry.ts", requestsPerMinute: 1_000_000 })],
        test: {
          name: "fresh",
          setupFiles: [...LOG_CAPTURE, "./test/e2e/reset-session-controls.ts"],
          globalSetup: MCP_EVERYTHING,
          include: FRESH_ISOLATE,
          testTimeout: 30_000,
        },
      },
      // An embedding entry with extra plugins (core tools, a shell-style exec, direct-only and
      // contract-breaking tools) to drive catalog rules through the real path.
      {
        plugins: [
          withoutDanglingSourceMaps(),
          // KIT_KV: the KV namespace the kit's binding tools read and write through `ctx.env` (Miniflare, local).
          workers({ main: "./test/kit/entry.ts", requestsPerMinute: 1_000_000, fakeProviderPort: KIT_FAKE_PROVIDER_PORT, kvNamespaces: ["KIT_KV"] }),
        ],
        test: {
          name: "kit",
          setupFiles: LOG_CAPTURE,
          globalSetup: ["./test/support/fake-providers-kit.mjs"],
          include: ["test/kit/**/*.test.ts"],
          isolate: false,
          testTimeout: 30_000,
        },
      },
      // An embedding with a 400-tool plugin (seed 004's Tool Search E2E) and a surface misconfiguration.
      {
        plugins: [withoutDanglingSourceMaps(), workers({ main: "./test/search/entry.ts", requestsPerMinute: 1_000_000, privateMcp: false })],
        test: { name: "search", setupFiles: LOG_CAPTURE, include: ["test/search/**/*.test.ts"], isolate: false, testTimeout: 30_000 },
      },
      // The shipped entry with a per-tenant limit of 5 requests a minute: proves the 429.
      {
        plugins: [withoutDanglingSourceMaps(), workers({ requestsPerMinute: 5 })],
        test: { name: "ratelimit", setupFiles: LOG_CAPTURE, include: ["test/ratelimit/**/*.test.ts"], testTimeout: 30_000 },
      },
    ],
  },
});
