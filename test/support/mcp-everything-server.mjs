// Vitest globalSetup (runs in Node, before the project's workerd tests): the MCP reference server
// `@modelcontextprotocol/server-everything` over Streamable HTTP on a free loopback port, the real
// peer of the MCP client tests. Tests inside workerd read its URL with
// `inject("mcpEverythingUrl")` (e.g. "http://127.0.0.1:41234/mcp"). The server comes from
// node_modules (installed by `npm ci`): nothing is fetched at test time.
//
// Robustness: the port is picked by binding 127.0.0.1:0 and released, so another process may take
// it before the server binds: a start that fails is retried on a new port (3 attempts). The setup
// waits until the port accepts TCP connections (15 s at most) and fails loudly with the server's
// own output otherwise. The server runs in its own process group; teardown ends the whole group
// (SIGTERM, then SIGKILL after 3 s).
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { connect } from "node:net";
import { dirname, join } from "node:path";
import { freeLoopbackPort } from "./free-port.mjs";

const START_TIMEOUT_MS = 15_000;
const ATTEMPTS = 3;

function serverEntry() {
  const require = createRequire(import.meta.url);
  const pkgPath = require.resolve("@modelcontextprotocol/server-everything/package.json");
  const pkg = require(pkgPath);
  return join(dirname(pkgPath), pkg.bin["mcp-server-everything"]);
}

function accepts(port) {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => (socket.destroy(), resolve(true)));
    socket.once("error", () => (socket.destroy(), resolve(false)));
  });
}

function startOn(port) {
  const child = spawn(process.execPath, [serverEntry(), "streamableHttp"], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let output = "";
  const keep = (chunk) => (output = (output + chunk).slice(-8_000));
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  return { child, exited, output: () => output };
}

async function waitUntilListening(server, port) {
  const deadline = Date.now() + START_TIMEOUT_MS;
  let exit;
  server.exited.then((e) => (exit = e));
  while (Date.now() < deadline) {
    if (exit) return { ok: false, why: `exited (code ${exit.code}, signal ${exit.signal})` };
    if (await accepts(port)) return { ok: true };
    await new Promise((r) => setTimeout(r, 100));
  }
  return { ok: false, why: `did not accept connections on port ${port} within ${START_TIMEOUT_MS} ms` };
}

async function stop(server) {
  const { child, exited } = server;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const group = (signal) => {
    try {
      process.kill(-child.pid, signal);
    } catch {}
  };
  group("SIGTERM");
  const killed = await Promise.race([exited.then(() => true), new Promise((r) => setTimeout(() => r(false), 3_000))]);
  if (!killed) {
    group("SIGKILL");
    await exited;
  }
}

export default async function setup(project) {
  const failures = [];
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const port = await freeLoopbackPort();
    const server = startOn(port);
    const ready = await waitUntilListening(server, port);
    if (ready.ok) {
      project.provide("mcpEverythingUrl", `http://127.0.0.1:${port}/mcp`);
      return async () => stop(server);
    }
    await stop(server);
    failures.push(`attempt ${attempt}: server-everything ${ready.why}\n${server.output()}`);
  }
  throw new Error(`could not start @modelcontextprotocol/server-everything for the MCP tests:\n${failures.join("\n")}`);
}
