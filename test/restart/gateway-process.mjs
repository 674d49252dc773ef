// A gateway under `wrangler dev --persist-to DIR`, started and stopped by the restart tests.
import { spawn } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { createFakeProviderServer } from "../support/fake-provider/server.mjs";

/**
 * `wrangler`: the CLI's path (default `npx wrangler`, found from `cwd`); `vars`: more `--var`s (e.g. CODEMODE_CONFIG);
 * `records()`: the gateway's structured log records printed so far (src/observability/log.ts), with `capture`.
 */
export function gatewayProcess({ cwd, port, persist, token, wrangler, vars = {}, capture = false }) {
  const base = `http://127.0.0.1:${port}`;
  let child = null;
  let printed = "";

  async function start() {
    const [command, ...prefix] = wrangler ? [wrangler] : ["npx", "wrangler"];
    child = spawn(
      command,
      [
        ...prefix,
        "dev",
        "--ip",
        "127.0.0.1",
        "--port",
        String(port),
        "--persist-to",
        persist,
        "--var",
        `GATEWAY_TOKENS:{"${token}":"restart"}`,
        ...Object.entries(vars).flatMap(([k, v]) => ["--var", `${k}:${v}`]),
      ],
      {
        cwd,
        stdio: ["ignore", capture ? "pipe" : "ignore", capture ? "pipe" : "ignore"],
        detached: true,
        env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
      },
    );
    if (capture) for (const stream of [child.stdout, child.stderr]) stream.on("data", (chunk) => (printed += chunk));
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      try {
        const r = await fetch(`${base}/healthz`);
        if (r.ok) return;
      } catch {}
      await new Promise((r) => setTimeout(r, 250));
    }
    throw new Error("gateway did not start");
  }

  async function stop() {
    if (!child) return;
    const proc = child;
    child = null;
    try {
      process.kill(-proc.pid, "SIGTERM");
    } catch {}
    // The whole process group (npx, wrangler, workerd) must be gone before the storage is reused.
    const deadline = Date.now() + 5000;
    while (groupAlive(proc.pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    try {
      process.kill(-proc.pid, "SIGKILL");
    } catch {}
    while (groupAlive(proc.pid)) await new Promise((r) => setTimeout(r, 100));
  }

  async function post(path, body) {
    const r = await fetch(`${base}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return { status: r.status, json: await r.json() };
  }

  /** Each printed line's `{"kind":…}` record (wrangler colours error lines; the codes are dropped). */
  function records() {
    const out = [];
    for (const line of printed.replace(/\u001b\[[0-9;]*m/g, "").split("\n")) {
      const at = line.indexOf('{"kind":');
      if (at < 0) continue;
      try {
        out.push(JSON.parse(line.slice(at).trim()));
      } catch {}
    }
    return out;
  }

  return { start, stop, post, records };
}

function groupAlive(pgid) {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** SQLite files of one Durable Object class in a `--persist-to` directory. */
export function durableObjectFiles(persist, className) {
  const out = [];
  const walk = (dir) => {
    if (!existsSync(dir)) return;
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith(".sqlite") && e.name !== "metadata.sqlite" && dir.includes(className)) out.push(p);
    }
  };
  walk(persist);
  return out;
}

/**
 * The scripted fake provider (test/support/fake-provider/server.mjs) on a free loopback port, and a
 * gateway under `wrangler dev` whose CODEMODE_CONFIG is `config` with that provider as `fakeoai`
 * (model `fakeoai/gpt-fake`, code mode preferred; its key set).
 * `close` stops both, the provider's hanging answers included.
 */
export async function gatewayWithFakeProvider({ port, persist, token, config }) {
  const providers = createFakeProviderServer();
  await new Promise((resolve, reject) => {
    providers.once("error", reject);
    providers.listen(0, "127.0.0.1", resolve);
  });
  const providerPort = providers.address().port;
  const gateway = gatewayProcess({
    cwd: process.cwd(),
    port,
    persist,
    token,
    vars: {
      CODEMODE_CONFIG: JSON.stringify({ ...config, models: { providers: { fakeoai: fakeoai(providerPort) } } }),
      FAKE_OPENAI_KEY: "fake-key-openai",
    },
  });
  const close = async () => {
    await gateway.stop();
    providers.stopHangs();
    providers.closeAllConnections();
    await new Promise((resolve) => providers.close(resolve));
  };
  try {
    await gateway.start();
  } catch (error) {
    await close();
    throw error;
  }
  return { gateway, providerBase: `http://127.0.0.1:${providerPort}`, close };
}

function fakeoai(providerPort) {
  return {
    api: "openai-completions",
    baseUrl: `http://127.0.0.1:${providerPort}/v1`,
    apiKey: "env:FAKE_OPENAI_KEY",
    models: [{ id: "gpt-fake", compat: { codeMode: "preferred", supportsTools: true } }],
  };
}
