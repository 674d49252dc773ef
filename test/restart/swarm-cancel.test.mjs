// Deleting a parent session stops its sub-agents, down the tree, under `wrangler dev` (each step a
// request of its own, as on the platform). A parent cell fans out to a child whose model call hangs
// (or to a child whose cell fans out to such a grandchild); the session is deleted; the fake
// provider must see that request end (aborted). The grandchild kept running before a cancelled
// child turn cancelled its own sub-agents. Runs under node's test runner (npm test), not workerd.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { gatewayWithFakeProvider } from "./gateway-process.mjs";

const TOKEN = "swarm-cancel-token";
const config = {
  // Two levels: a child may start a grandchild.
  tools: { codeMode: true, swarm: { enabled: true, maxDepth: 2 } },
};
const persist = mkdtempSync(join(tmpdir(), "codemode-swarm-cancel-"));
const port = 8990 + Math.floor(Math.random() * 9);
let providerBase;
let closeGateway;

before(async () => {
  ({ providerBase, close: closeGateway } = await gatewayWithFakeProvider({ port, persist, token: TOKEN, config }));
});

after(async () => {
  await closeGateway?.();
  rmSync(persist, { recursive: true, force: true });
});

async function api(method, path, body) {
  const r = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: r.status, json: await r.json() };
}

/** A script on the fake provider; its marker goes into a prompt. */
async function script(steps) {
  const r = await fetch(`${providerBase}/__scripts`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ steps }),
  });
  return (await r.json()).scriptId;
}

/** A parent cell in `session` whose code runs `agents.run` on one task; parked (`waiting`) on it. */
async function parkedParent(session, prompt) {
  const opened = await api("POST", `/v1/sessions/${session}/turns`, { model: "fakeoai/gpt-fake" });
  assert.equal(opened.status, 201, JSON.stringify(opened.json));
  const code = `await agents.run([{ prompt: ${JSON.stringify(prompt)}, label: "t" }]); return 1;`;
  const run = await api("POST", `/v1/sessions/${session}/turns/${opened.json.turnId}/tools/exec`, { code });
  assert.equal(run.json.status, "waiting", JSON.stringify(run.json));
}

/** Once the hanging model call of `scriptId` is in flight, delete `session`: that call must end, aborted. */
async function deletingAborts(session, scriptId) {
  for (let i = 0; i < 300; i++) {
    const { arrived } = await (await fetch(`${providerBase}/__scripts/${scriptId}/arrived`)).json();
    if (arrived > 0) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal((await api("DELETE", `/v1/sessions/${session}`)).status, 200);
  const records = await (await fetch(`${providerBase}/__scripts/${scriptId}/requests`)).json();
  assert.equal(records.length, 1);
  assert.equal(records[0].aborted, true);
}

const HANG = [{ hangMs: 60_000, text: "never" }];

test("deleting the parent session aborts a child's model call in flight", { timeout: 90_000 }, async () => {
  const child = await script(HANG);
  const session = `cancel-${Date.now()}`;
  await parkedParent(session, `[script:${child}] hang`);
  await deletingAborts(session, child);
});

test("the same when the parent's cell runs in a facade /chat call still open", { timeout: 90_000 }, async () => {
  const child = await script(HANG);
  const code = `await agents.run([{ prompt: "[script:${child}] hang", label: "hangs" }]); return 1;`;
  const parent = await script([{ toolCalls: [{ id: "e1", name: "exec", input: { code } }] }, ...HANG]);
  const session = `cancel-chat-${Date.now()}`;
  const pending = fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json", "x-session-id": session },
    body: JSON.stringify({ model: "fakeoai/gpt-fake", messages: [{ role: "user", content: `[script:${parent}] go` }] }),
  }).catch((e) => e);
  await deletingAborts(session, child);
  await pending;
});

test("two levels down: deleting the parent session aborts a grandchild's model call in flight", { timeout: 90_000 }, async () => {
  const grandchild = await script(HANG);
  const inner = `await agents.run([{ prompt: "[script:${grandchild}] hang", label: "deep" }]); return 1;`;
  const child = await script([{ toolCalls: [{ id: "c1", name: "exec", input: { code: inner } }] }, ...HANG]);
  const session = `cancel-deep-${Date.now()}`;
  await parkedParent(session, `[script:${child}] go down`);
  await deletingAborts(session, grandchild);
});
