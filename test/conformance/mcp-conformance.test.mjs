// The MCP conformance suite's server scenarios (@modelcontextprotocol/conformance) against
// POST /mcp of a gateway under `wrangler dev`. The runner's client sends no headers of its own,
// so it talks to a loopback proxy that adds the bearer token. Runs under node's test runner
// (npm test), not workerd. README ("Code mode over MCP") lists what passes and what does not apply.
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { gatewayProcess } from "../restart/gateway-process.mjs";
import { authProxy } from "./auth-proxy.mjs";

/** Scenarios we claim: every check in them must be SUCCESS (or INFO). */
const CLAIMED = ["server-initialize", "ping", "tools-list", "server-sse-multiple-streams"];

/**
 * Scenarios that do not apply: they call fixture tools (`test_simple_text`, `test_error_handling`, …),
 * resources, prompts, completions or logging, none of which a code-mode server offers; or, for
 * dns-rebinding-protection, expect a localhost Host allow-list (the endpoint needs a bearer token
 * instead, and Workers route by hostname).
 */
const NOT_APPLICABLE = new Set([
  "logging-set-level",
  "completion-complete",
  "tools-call-simple-text",
  "tools-call-image",
  "tools-call-audio",
  "tools-call-embedded-resource",
  "tools-call-mixed-content",
  "tools-call-with-logging",
  "tools-call-error",
  "tools-call-with-progress",
  "tools-call-sampling",
  "tools-call-elicitation",
  "elicitation-sep1034-defaults",
  "elicitation-sep1330-enums",
  "resources-list",
  "resources-read-text",
  "resources-read-binary",
  "resources-templates-read",
  "resources-subscribe",
  "resources-unsubscribe",
  "prompts-list",
  "prompts-get-simple",
  "prompts-get-with-args",
  "prompts-get-embedded-resource",
  "prompts-get-with-image",
  "dns-rebinding-protection",
]);

const token = "conformance-test-token";
const persist = mkdtempSync(join(tmpdir(), "codemode-conformance-"));
const out = mkdtempSync(join(tmpdir(), "codemode-conformance-out-"));
const port = 8950 + Math.floor(Math.random() * 40);
const gateway = gatewayProcess({ cwd: process.cwd(), port, persist, token });
const proxy = authProxy({ target: `http://127.0.0.1:${port}`, token });
const cli = join(dirname(createRequire(import.meta.url).resolve("@modelcontextprotocol/conformance/package.json")), "dist/index.js");

after(async () => {
  await proxy.close();
  await gateway.stop();
  rmSync(persist, { recursive: true, force: true });
  rmSync(out, { recursive: true, force: true });
});

/** Run the active server suite; checks by scenario (from the runner's `checks.json` files). */
async function runSuite(url) {
  const child = spawn(process.execPath, [cli, "server", "--url", url, "-o", out], { stdio: ["ignore", "pipe", "pipe"] });
  let log = "";
  child.stdout.on("data", (d) => (log += d));
  child.stderr.on("data", (d) => (log += d));
  await new Promise((resolve) => child.on("exit", resolve));
  const byScenario = new Map();
  for (const dir of readdirSync(out)) {
    const scenario = dir.replace(/^server-/, "").replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, "");
    byScenario.set(scenario, JSON.parse(readFileSync(join(out, dir, "checks.json"), "utf8")));
  }
  return { byScenario, log };
}

test("MCP conformance: the claimed server scenarios pass against /mcp", { timeout: 150_000 }, async () => {
  await gateway.start();
  const base = await proxy.listen();
  const { byScenario, log } = await runSuite(`${base}/mcp`);
  for (const scenario of CLAIMED) {
    const checks = byScenario.get(scenario);
    assert.ok(checks && checks.length > 0, `${scenario} ran no checks:\n${log}`);
    const bad = checks.filter((c) => c.status !== "SUCCESS" && c.status !== "INFO");
    assert.deepEqual(bad, [], `${scenario}`);
  }
  // Everything else that fails is one of the scenarios README names as not applicable.
  const failing = [...byScenario].filter(([, checks]) => checks.some((c) => c.status === "FAILURE")).map(([s]) => s);
  assert.deepEqual(
    failing.filter((s) => !NOT_APPLICABLE.has(s)),
    [],
    log,
  );
});
