// The playground (public/, docs/playground.md) in headless Chromium against the gateway under
// `wrangler dev`: one gateway and one browser for every case. Runs under node's test runner
// (npm test). Each case saves a screenshot under .wrangler/test-screenshots/.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { chromium } from "playwright-core";
import { gatewayWithFakeProvider } from "../restart/gateway-process.mjs";

const TOKEN = "playground-test-token";
/** The gateway's config; `fakeoai/gpt-fake` is the scripted fake provider (gatewayWithFakeProvider). */
const config = {
  tools: { codeMode: true, swarm: false },
  // notes_write (the demo plugin's) needs an operator's decision for agent `approve`.
  agents: { entries: { approve: { approvals: { require: ["notes_write"], timeoutSeconds: 120 } } } },
};
const SHOTS = join(process.cwd(), ".wrangler", "test-screenshots");
const persist = mkdtempSync(join(tmpdir(), "codemode-playground-"));
const profile = mkdtempSync(join(tmpdir(), "codemode-chromium-"));
const port = 8950 + Math.floor(Math.random() * 40);
const base = `http://127.0.0.1:${port}`;
let providerBase;
let gateway;
let closeGateway;
let browser;

before(async () => {
  mkdirSync(SHOTS, { recursive: true });
  ({ gateway, providerBase, close: closeGateway } = await gatewayWithFakeProvider({ port, persist, token: TOKEN, config }));
  browser = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
    viewport: { width: 1100, height: 1400 },
  });
});

after(async () => {
  await browser?.close();
  await closeGateway?.();
  rmSync(persist, { recursive: true, force: true });
  rmSync(profile, { recursive: true, force: true });
});

/** A fresh tab on the playground with the token entered; `page.marks` collects dialogs and console lines. */
async function openPlayground() {
  const page = await browser.newPage();
  page.marks = [];
  page.on("dialog", (d) => {
    page.marks.push(`dialog:${d.message()}`);
    d.dismiss().catch(() => {});
  });
  page.on("console", (m) => page.marks.push(`console:${m.text()}`));
  await page.goto(base + "/");
  await page.getByLabel("Gateway token").fill(TOKEN);
  await page.getByRole("button", { name: "Use token" }).click();
  await page.getByText("Token set for this tab.").waitFor();
  return page;
}

async function openTurn(page, { session, agent, tools = [] }) {
  await page.getByLabel("Session id").fill(session);
  if (agent) await page.getByLabel("Agent (optional)").fill(agent);
  for (const t of tools) {
    await page.getByRole("button", { name: "Add a client tool" }).click();
    const row = page.locator(".tool-row").last();
    await row.locator(".tool-name").fill(t.name);
    await row.locator(".tool-description").fill(t.description ?? "");
  }
  await page.getByRole("button", { name: "Open turn" }).click();
  await page.locator("#turn-status", { hasText: `in session ${session}` }).waitFor();
}

async function runCell(page, code) {
  await page.getByLabel("Code (Ctrl+Enter runs it)").fill(code);
  await page.getByRole("button", { name: "Run exec" }).click();
}

const shot = (page, name) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });

test("a cell returning 1 + 2 shows 3, and the model-visible surface lists exec and wait", { timeout: 60_000 }, async () => {
  const page = await openPlayground();
  await openTurn(page, { session: "pg-basic" });
  await page.locator("#surface-tools .label", { hasText: "exec" }).first().waitFor();
  assert.match(await page.locator("#surface-summary").textContent(), /2 tool\(s\), \d+ bytes of tool definitions · code mode engaged/);
  // Both sizes are the gateway's own (the open-turn answer's `surface`), direct exposure beside code mode's.
  const { json: same } = await gateway.post("/v1/sessions/pg-basic-api/turns", {});
  assert.ok(same.surface.directBytes > 0 && same.surface.bytes > 0);
  assert.equal(
    await page.locator("#surface-size").textContent(),
    `Model-visible tool definitions: ${same.surface.bytes} bytes. The same catalog exposed directly (code mode off): ${same.surface.directBytes} bytes (${Math.round((100 * same.surface.bytes) / same.surface.directBytes)}% of it).`,
  );
  await runCell(page, "return 1 + 2");
  await page.locator("#result-value").waitFor();
  assert.equal(await page.locator("#result-value").textContent(), "3");
  assert.equal(await page.locator("#result .status-completed").textContent(), "completed");
  await shot(page, "basic");
  await page.close();
});

test("a client tool call is answered through the form and the cell completes after wait", { timeout: 60_000 }, async () => {
  const page = await openPlayground();
  await openTurn(page, { session: "pg-client", tools: [{ name: "ask_user", description: "Ask the person at the keyboard." }] });
  await runCell(page, "const name = await ask_user({ q: 'name?' }); return 'hello ' + name;");
  const call = page.locator(".pending-call");
  await call.waitFor();
  assert.equal(await call.locator(".label").textContent(), "ask_user");
  assert.match(await call.locator("pre").textContent(), /"q": "name\?"/);
  await call.getByLabel("Value (JSON) or error message").fill('"Ada"');
  await call.getByRole("button", { name: "Deliver" }).click();
  await call.getByRole("button", { name: "Delivered" }).waitFor();
  await page.getByRole("button", { name: "Wait", exact: true }).click();
  await page.locator("#result-value").waitFor();
  assert.equal(await page.locator("#result-value").textContent(), '"hello Ada"');
  await shot(page, "client-tool");
  await page.close();
});

test("the trajectory shows a cell's two nested calls under it, with their policy decision", { timeout: 60_000 }, async () => {
  const page = await openPlayground();
  await openTurn(page, { session: "pg-trajectory" });
  await runCell(page, "const a = await echo({ value: 'first' }); const b = await shipping_list({}); return [a, b.length];");
  await page.locator("#result-value").waitFor();
  const outer = page.locator("#trajectory > li.outer-call").filter({ has: page.locator(".nested-call") });
  await outer.first().waitFor();
  assert.equal(await outer.count(), 1);
  assert.equal(await outer.locator(":scope > p .label").textContent(), "exec");
  const nested = outer.locator(".nested-call > p .label");
  assert.deepEqual(await nested.allTextContents(), ["echo", "shipping_list"]);
  assert.match(await outer.locator(".nested-call").first().textContent(), /ok.*policy: allowed/);
  await shot(page, "trajectory");
  await page.close();
});

test("an approval listed on the page is allowed from it and the waiting cell completes", { timeout: 90_000 }, async () => {
  const page = await openPlayground();
  await openTurn(page, { session: "pg-approval", agent: "approve" });
  await runCell(page, "return await notes_write({ key: 'greeting', text: 'hi' });");
  const approval = page.locator(".approval");
  await approval.waitFor();
  assert.equal(await approval.locator(".label").textContent(), "notes_write");
  assert.match(await approval.locator("pre").textContent(), /greeting/);
  await shot(page, "approval-pending");
  await approval.getByRole("button", { name: "Allow" }).click();
  await page.locator("#result-value").waitFor();
  assert.deepEqual(JSON.parse(await page.locator("#result-value").textContent()), { key: "greeting", bytes: 2 });
  await page.locator(".nested-call", { hasText: "policy: approved" }).waitFor();
  await shot(page, "approval");
  await page.close();
});

test("hostile tool names, descriptions, output and results are shown as text and run no script", { timeout: 90_000 }, async () => {
  const name = `<img src=x onerror="console.log('XSS-name');alert('name')">`;
  const description = `<script>console.log('XSS-description')</script><img src=x onerror="alert('description')">`;
  const value = `<img src=x onerror="console.log('XSS-value');alert('value')"><script>alert('value2')</script>`;
  const page = await openPlayground();
  const response = await page.request.get(base + "/");
  assert.match(response.headers()["content-security-policy"], /script-src 'self';.*connect-src 'self'/);
  await openTurn(page, { session: "pg-hostile", tools: [{ name, description }] });
  await runCell(
    page,
    [
      "const h = (await catalog.all()).find((t) => t.callableName.startsWith('_img'));",
      `text(${JSON.stringify(value)});`,
      "const answer = await globalThis[h.callableName]({ html: (await h.describe()).description });",
      "return { answer, described: await h.describe() };",
    ].join("\n"),
  );
  const call = page.locator(".pending-call");
  await call.waitFor();
  // The text() output came with the waiting result (the cell's output before it parked).
  assert.equal(await page.locator("#result-output pre").first().textContent(), value);
  assert.equal(await call.locator(".label").textContent(), name);
  assert.match(await call.locator("pre").textContent(), /<script>console\.log\('XSS-description'\)<\/script>/);
  await call.getByLabel("Value (JSON) or error message").fill(JSON.stringify(value));
  await call.getByRole("button", { name: "Deliver" }).click();
  await call.getByRole("button", { name: "Delivered" }).waitFor();
  await page.getByRole("button", { name: "Wait", exact: true }).click();
  await page.locator("#result-value").waitFor();
  const shown = JSON.parse(await page.locator("#result-value").textContent());
  assert.equal(shown.answer, value);
  assert.equal(shown.described.name, name);
  assert.equal(shown.described.description, description);
  await page.locator(".nested-call .label", { hasText: "<img" }).first().waitFor();
  // Nothing became markup: no image or extra script element exists, and no handler ran.
  assert.equal(await page.locator("img").count(), 0);
  assert.equal(await page.locator("script").count(), 1);
  await shot(page, "hostile");
  assert.deepEqual(
    page.marks.filter((m) => /XSS|dialog/.test(m)),
    [],
  );
  await page.close();
});

test("a tool name of the longest length allowed wraps inside the page: nothing scrolls sideways", { timeout: 90_000 }, async () => {
  const name = "W".repeat(128);
  const page = await openPlayground();
  await openTurn(page, { session: "pg-long-name", tools: [{ name, description: "long" }] });
  await runCell(page, "const h = (await catalog.all()).find((t) => t.callableName.startsWith('W'));\nreturn await globalThis[h.callableName]({});");
  const call = page.locator(".pending-call");
  await call.waitFor();
  assert.equal(await call.locator(".label").textContent(), name);
  const { scroll, width } = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, width: window.innerWidth }));
  assert.ok(scroll <= width, `the page is ${scroll} px wide in a ${width} px window`);
  await page.close();
});

/** Registers a script on the fake provider server; its marker goes into the user message. */
async function providerScript(steps) {
  const r = await fetch(`${providerBase}/__scripts`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ steps }),
  });
  assert.equal(r.status, 200);
  const { scriptId } = await r.json();
  return `[script:${scriptId}]`;
}

test(
  "a /chat turn from the page shows its events as they arrive: the exec call, its nested call and result, then the final text",
  { timeout: 90_000 },
  async () => {
    const marker = await providerScript([
      {
        text: ["Let me ", "look. "],
        toolCalls: [{ id: "tc_exec", name: "exec", input: { code: "const r = await echo({ value: 'from <b>chat</b>' }); return r;" } }],
      },
      { text: ["The echo ", "said <i>hi</i>."] },
    ]);
    const page = await openPlayground();
    await page.getByLabel("Session id").fill("pg-chat");
    await page.getByLabel("Model of the chat turn").fill("fakeoai/gpt-fake");
    await page.getByLabel("User message").fill(`${marker} echo something`);
    await page.getByRole("button", { name: "Send" }).click();
    await page.locator("#chat-status", { hasText: "Completed." }).waitFor();
    const events = page.locator("#chat-events > li");
    const types = await events.evaluateAll((items) => items.map((i) => i.dataset.type));
    // Model calls (assistant_turn) are reported as each ends; the rest in this order.
    assert.equal(types.filter((t) => t === "assistant_turn").length, 2);
    assert.deepEqual(
      types.filter((t) => t !== "assistant_turn"),
      ["turn", "text", "tool_call_start", "nested_call", "tool_call_end", "text", "done"],
    );
    const start = page.locator('#chat-events > li[data-type="tool_call_start"]');
    assert.match(await start.locator(".meta").textContent(), /^exec · /);
    assert.equal(await start.locator("pre").textContent(), "const r = await echo({ value: 'from <b>chat</b>' }); return r;");
    assert.match(await page.locator('#chat-events > li[data-type="nested_call"] .meta').textContent(), /^echo · openclaw · ok/);
    const end = page.locator('#chat-events > li[data-type="tool_call_end"]');
    assert.match(await end.locator(".meta").textContent(), /^exec · completed/);
    assert.match(await end.locator("pre").textContent(), /from <b>chat<\/b>/);
    // Text deltas are appended as text: the model's markup stays characters.
    assert.equal(await page.locator("#chat-text").textContent(), "Let me look. The echo said <i>hi</i>.");
    assert.equal(await page.locator('#chat-events > li[data-type="text"] pre').last().textContent(), "The echo said <i>hi</i>.");
    assert.equal(await page.locator("#chat-text i, #chat-events b").count(), 0);
    assert.match(
      await page.locator('#chat-events > li[data-type="done"] .meta').textContent(),
      /^completed · final · 2 model call\(s\) · 1 tool call\(s\)/,
    );
    // The page follows the chat's turn: its trajectory shows the exec call with the nested echo.
    await page.locator("#trajectory .nested-call .label", { hasText: "echo" }).waitFor();
    await shot(page, "chat");
    await page.close();
  },
);

test(
  "while a /chat turn waits on an approval its events so far are on the page; allowed from the page, the turn answers",
  { timeout: 90_000 },
  async () => {
    const marker = await providerScript([
      { toolCalls: [{ id: "tc_gated", name: "exec", input: { code: "return await notes_write({ key: 'chat', text: 'hello' });" } }] },
      { text: "Saved the note." },
    ]);
    const page = await openPlayground();
    await page.getByLabel("Session id").fill("pg-chat-approval");
    await page.getByLabel("Agent of the chat turn").fill("approve");
    await page.getByLabel("Model of the chat turn").fill("fakeoai/gpt-fake");
    await page.getByLabel("User message").fill(`${marker} save a note`);
    await page.getByRole("button", { name: "Send" }).click();
    // The stream is still open (the cell waits for the operator): what arrived so far is already shown.
    const approval = page.locator(".approval");
    await approval.waitFor();
    assert.equal(await approval.locator(".label").textContent(), "notes_write");
    assert.match(await page.locator('#chat-events > li[data-type="tool_call_start"] .meta').textContent(), /^exec · /);
    assert.equal(await page.locator('#chat-events > li[data-type="done"]').count(), 0);
    assert.equal(await page.getByRole("button", { name: "Stop" }).isEnabled(), true);
    await shot(page, "chat-approval-pending");
    await approval.getByRole("button", { name: "Allow" }).click();
    await page.locator("#chat-status", { hasText: "Completed." }).waitFor();
    assert.match(await page.locator('#chat-events > li[data-type="tool_call_end"] pre').textContent(), /"key":"chat"/);
    assert.equal(await page.locator("#chat-text").textContent(), "Saved the note.");
    await shot(page, "chat-approval");
    await page.close();
  },
);

test("a /chat turn waiting on a client tool is answered through the form and continued from the page", { timeout: 90_000 }, async () => {
  const marker = await providerScript([
    { toolCalls: [{ id: "tc_ask", name: "exec", input: { code: "return 'hello ' + (await ask_user({ q: 'name?' }));" } }] },
  ]);
  const page = await openPlayground();
  await page.getByLabel("Session id").fill("pg-chat-client");
  await page.getByRole("button", { name: "Add a client tool" }).click();
  await page.locator(".tool-row .tool-name").fill("ask_user");
  await page.getByLabel("Model of the chat turn").fill("fakeoai/gpt-fake");
  await page.getByLabel("User message").fill(`${marker} greet me`);
  await page.getByRole("button", { name: "Send" }).click();
  await page.locator("#chat-status", { hasText: "Waiting on client tools" }).waitFor();
  const call = page.locator(".pending-call");
  assert.equal(await call.locator(".label").textContent(), "ask_user");
  const [pending] = JSON.parse(await page.locator('#chat-events > li[data-type="done"] pre').textContent());
  // What the model says next needs the parked run's id: added to the script now.
  const scriptId = marker.slice("[script:".length, -1);
  const more = await fetch(`${providerBase}/__scripts/${scriptId}/steps`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ steps: [{ toolCalls: [{ id: "tc_wait", name: "wait", input: { runId: pending.runId } }] }, { text: "Hi, Ada." }] }),
  });
  assert.equal(more.status, 200);
  await call.getByLabel("Value (JSON) or error message").fill('"Ada"');
  await call.getByRole("button", { name: "Deliver" }).click();
  await call.getByRole("button", { name: "Delivered" }).waitFor();
  await page.getByRole("button", { name: "Continue" }).click();
  await page.locator("#chat-status", { hasText: "Completed." }).waitFor();
  assert.match(await page.locator('#chat-events > li[data-type="turn"] .meta').textContent(), /· continued$/);
  assert.match(await page.locator('#chat-events > li[data-type="tool_call_end"] pre').textContent(), /hello Ada/);
  assert.equal(await page.locator("#chat-text").textContent(), "Hi, Ada.");
  await shot(page, "chat-client-tool");
  await page.close();
});

test("a model's text shows while its answer is still streaming, and Stop ends the /chat call", { timeout: 90_000 }, async () => {
  // The fake provider sends the text, then stalls without finishing the answer.
  const marker = await providerScript([{ hangMs: 60_000, text: ["Thinking ", "hard"] }]);
  const page = await openPlayground();
  await page.getByLabel("Session id").fill("pg-chat-stop");
  await page.getByLabel("Model of the chat turn").fill("fakeoai/gpt-fake");
  await page.getByLabel("User message").fill(`${marker} take your time`);
  await page.getByRole("button", { name: "Send" }).click();
  await page.locator("#chat-text", { hasText: "Thinking hard" }).waitFor();
  assert.equal(await page.locator("#chat-status").textContent(), "Calling the model…");
  await page.getByRole("button", { name: "Stop" }).click();
  await page.locator("#chat-status", { hasText: "Stopped" }).waitFor();
  assert.equal(await page.getByRole("button", { name: "Send" }).isEnabled(), true);
  assert.equal(await page.locator('#chat-events > li[data-type="done"]').count(), 0);
  await page.close();
});

/**
 * The file /docs pins, from its npm package (jsDelivr serves the package's files unchanged): fetched
 * once with `npm pack` into .wrangler/cache.
 */
function scalarPackageFile(version) {
  const dir = join(process.cwd(), ".wrangler", "cache", `scalar-api-reference-${version}`);
  const file = join(dir, "package", "dist", "browser", "standalone.js");
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true });
    const packed = execFileSync("npm", ["pack", `@scalar/api-reference@${version}`, "--silent", "--pack-destination", dir], {
      encoding: "utf8",
    }).trim();
    execFileSync("tar", ["-xzf", join(dir, packed.split("\n").pop()), "-C", dir, "package/dist/browser/standalone.js"]);
  }
  return readFileSync(file);
}

/** /docs's pinned script, from the page the gateway serves. */
async function docsScript() {
  const html = await (await fetch(base + "/docs")).text();
  const [, src, integrity] = /<script src="([^"]+)" integrity="([^"]+)" crossorigin="anonymous"><\/script>/.exec(html) ?? [];
  const version = /^https:\/\/cdn\.jsdelivr\.net\/npm\/@scalar\/api-reference@(\d+\.\d+\.\d+)\/dist\/browser\/standalone\.js$/.exec(src ?? "")?.[1];
  assert.ok(version, `a pinned script in ${html}`);
  return { src, integrity, version };
}

/** A tab that has the token set, then follows the page's "API reference" link, the CDN answered by `serve`. */
async function openDocs(serve) {
  const page = await openPlayground();
  const offOrigin = [];
  await page.route(
    (url) => !url.href.startsWith(base),
    (route) => {
      offOrigin.push(route.request().url());
      return serve(route);
    },
  );
  await page.getByRole("link", { name: "API reference" }).click();
  await page.waitForURL(base + "/docs");
  return { page, offOrigin };
}

test("/docs renders the API reference from its pinned script, whose hash is the npm package's file", { timeout: 120_000 }, async () => {
  const { src, integrity, version } = await docsScript();
  const file = scalarPackageFile(version);
  assert.equal(integrity, "sha384-" + createHash("sha384").update(file).digest("base64"));
  const { page, offOrigin } = await openDocs((route) =>
    route.request().url() === src
      ? route.fulfill({ status: 200, body: file, headers: { "content-type": "application/javascript", "access-control-allow-origin": "*" } })
      : route.abort(),
  );
  // An operation of /openapi.json, rendered by Scalar.
  await page.getByText("This OpenAPI 3.1 document").first().waitFor({ timeout: 60_000 });
  await page.screenshot({ path: join(SHOTS, "docs.png") });
  // Nothing but the pinned script left this origin (no fonts, telemetry or proxy).
  assert.deepEqual([...new Set(offOrigin)], [src]);
  const blocked = page.marks.filter((m) => /Content Security Policy/.test(m) && /script/i.test(m));
  assert.deepEqual(blocked, []);
  await page.close();
});

test("/docs refuses a changed script from the CDN: it never runs, and the playground's token stays unread", { timeout: 90_000 }, async () => {
  const { src } = await docsScript();
  const hostile = `window.__read = sessionStorage.getItem("codemode-edge.token"); window.Scalar = { createApiReference() { window.__ran = true; } };`;
  const { page } = await openDocs((route) =>
    route.request().url() === src
      ? route.fulfill({ status: 200, body: hostile, headers: { "content-type": "application/javascript", "access-control-allow-origin": "*" } })
      : route.abort(),
  );
  await page.waitForLoadState("load");
  assert.equal(await page.evaluate(() => window.__read), undefined);
  assert.equal(await page.evaluate(() => window.__ran), undefined);
  assert.ok(
    page.marks.some((m) => /integrity/i.test(m)),
    `the browser reports the integrity failure: ${page.marks.join(" | ")}`,
  );
  await page.close();
});
