#!/usr/bin/env node
/**
 * Writes dist/client.mjs and dist/ai.mjs: the package's `./client` and `./ai` exports as plain ES
 * modules, so Node ≥ 18, browsers and any bundler run them without a TypeScript step (their types
 * are the sources under src/client and src/ai). The client imports the server's types only, so its
 * bundle holds no server code; `ai` stays an import (an optional peer dependency). Run by prepack
 * and by test/package/package.test.mjs; dist/ is git-ignored.
 */
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

export async function buildClient() {
  // esbuild is wrangler's bundler (pinned by wrangler's own dependency).
  const { build } = await import("esbuild");
  const common = { bundle: true, format: "esm", platform: "neutral", target: "es2022", logLevel: "warning", absWorkingDir: ROOT };
  await build({ ...common, entryPoints: ["src/client/index.ts"], outfile: "dist/client.mjs" });
  await build({ ...common, entryPoints: ["src/ai/index.ts"], outfile: "dist/ai.mjs", external: ["ai"] });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildClient();
