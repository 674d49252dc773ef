// The OpenAPI document the gateway serves at /openapi.json, checked with a kept OpenAPI validator
// (@seriousme/openapi-schema-validator compiles with Ajv, which workerd forbids: so a Node test). The
// router is bundled as the gateway builds it (createApp with /mcp and the facades mounted) and asked
// through Hono's own `app.request`; the answers of real routes are checked in workerd by
// test/e2e/openapi-answers.test.ts.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { build } from "esbuild";
import { Validator as OpenApiValidator } from "@seriousme/openapi-schema-validator";
import { Validator as JsonValidator } from "@cfworker/json-schema";

const root = fileURLToPath(new URL("../..", import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), "codemode-openapi-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

let app;
let document;

/** One request to the app; its request log line (console) is not this test's output. */
async function request(path) {
  const log = console.log;
  console.log = () => {};
  try {
    return await app.request(path);
  } finally {
    console.log = log;
  }
}

before(async () => {
  const entry = join(scratch, "entry.ts");
  const { writeFileSync } = await import("node:fs");
  writeFileSync(
    entry,
    `import { createApp } from ${JSON.stringify(join(root, "src/http"))};\n` +
      `import { facades } from ${JSON.stringify(join(root, "src/facades"))};\n` +
      `export const app = createApp({ mcp: async () => new Response(null, { status: 204 }), facades });\n`,
  );
  const out = join(scratch, "app.mjs");
  // The Worker's build in short: workerd conditions, the VM's wasm left out (nothing here runs a cell).
  await build({
    entryPoints: [entry],
    bundle: true,
    platform: "node",
    format: "esm",
    conditions: ["workerd", "worker"],
    loader: { ".wasm": "empty" },
    external: ["cloudflare:*"],
    outfile: out,
    logLevel: "error",
  });
  ({ app } = await import(pathToFileURL(out).href));
  const res = await request("/openapi.json");
  assert.equal(res.status, 200);
  document = await res.json();
});

test("/openapi.json is a valid OpenAPI 3.1 document", async () => {
  assert.equal(document.openapi, "3.1.0");
  const result = await new OpenApiValidator().validate(document);
  assert.deepEqual(result.errors ?? [], []);
  assert.equal(result.valid, true);
});

/** `/v1/sessions/:sessionId` → `/v1/sessions/{sessionId}`. */
const openApiPath = (path) => path.replace(/:([A-Za-z0-9_]+)/g, "{$1}");

test("every route the router serves is in the document, and nothing else is", () => {
  const served = new Set();
  for (const route of app.routes) {
    // Middleware (`use`) is registered under patterns; routes are concrete paths.
    if (route.path.includes("*")) continue;
    const methods = route.method === "ALL" ? ["GET", "POST", "DELETE"] : [route.method];
    for (const method of methods) served.add(`${method.toLowerCase()} ${openApiPath(route.path)}`);
  }
  const documented = new Set();
  for (const [path, item] of Object.entries(document.paths))
    for (const method of Object.keys(item)) if (["get", "post", "delete", "put", "patch"].includes(method)) documented.add(`${method} ${path}`);
  // `app.use("/mcp")` (auth, rate limit) is middleware on a concrete path: it is served through app.all.
  assert.deepEqual([...served].sort(), [...documented].sort());
  for (const expected of [
    "post /v1/sessions/{sessionId}/chat",
    "post /v1/chat/completions",
    "post /v1/messages",
    "get /v1/models",
    "post /mcp",
    "get /healthz",
  ])
    assert.ok(documented.has(expected), expected);
});

test("/v1 and /mcp operations require the bearer token; /healthz, /openapi.json and /docs do not", () => {
  assert.deepEqual(document.components.securitySchemes.bearerAuth, {
    type: "http",
    scheme: "bearer",
    description: "A gateway token (GATEWAY_TOKENS).",
  });
  for (const [path, item] of Object.entries(document.paths))
    for (const [method, op] of Object.entries(item)) {
      const guarded = path.startsWith("/v1/") || path === "/mcp";
      assert.equal(Boolean(op.security?.some((s) => "bearerAuth" in s)), guarded, `${method} ${path}`);
    }
});

/** A schema of the document with the document's components beside it (so its $refs resolve). */
function validatorFor(schema) {
  return new JsonValidator({ ...schema, components: document.components }, "2020-12", false);
}

test("every documented example passes its own schema", () => {
  let checked = 0;
  const visit = (node) => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (node === null || typeof node !== "object") return;
    if (
      "example" in node &&
      typeof node === "object" &&
      ("type" in node || "properties" in node || "anyOf" in node || "oneOf" in node || "$ref" in node)
    ) {
      const { example, ...schema } = node;
      const result = validatorFor(schema).validate(example);
      assert.equal(result.valid, true, `${JSON.stringify(example)}: ${JSON.stringify(result.errors.slice(0, 3))}`);
      checked++;
    }
    Object.values(node).forEach(visit);
  };
  visit(document);
  assert.ok(checked >= 6, `only ${checked} examples found`);
});

test("the chat route documents its JSON answer and its server-sent events, with every event type", () => {
  const content = document.paths["/v1/sessions/{sessionId}/chat"].post.responses["200"].content;
  assert.deepEqual(content["application/json"].schema, { $ref: "#/components/schemas/ChatAnswer" });
  assert.deepEqual(content["text/event-stream"].schema, { $ref: "#/components/schemas/ChatEvent" });
  const types = document.components.schemas.ChatEvent.oneOf.map(
    (ref) =>
      document.components.schemas[ref.$ref.split("/").pop()].properties.type.const ??
      document.components.schemas[ref.$ref.split("/").pop()].properties.type.enum[0],
  );
  assert.deepEqual(types.sort(), [
    "assistant_turn",
    "done",
    "error",
    "nested_call",
    "text",
    "tool_call_end",
    "tool_call_start",
    "tool_update",
    "turn",
  ]);
  for (const name of ["CodeModeResult", "Trajectory", "Error", "OpenTurnRequest", "ChatRequest", "ClientTool"])
    assert.ok(document.components.schemas[name], name);
});

test("the request schemas carry the limits the routes enforce", () => {
  const turn = document.components.schemas.OpenTurnRequest;
  assert.equal(turn.additionalProperties, false);
  assert.equal(turn.properties.allow.maxItems, 512);
  assert.equal(turn.properties.clientTools.maxItems, 1024);
  assert.equal(document.components.schemas.ChatRequest.properties.maxAssistantTurns.maximum, 64);
  assert.equal(document.components.schemas.ChatRequest.properties.messages.maxItems, 256);
});

test("/docs is the reference page for /openapi.json, with no token in it, under a policy that runs only its pinned script and its own", async () => {
  const res = await request("/docs");
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /text\/html/);
  const html = await res.text();
  const scripts = [...html.matchAll(/<script\b[^>]*>/g)].map((m) => m[0]);
  assert.equal(scripts.length, 2);
  assert.match(
    scripts[0],
    /^<script src="https:\/\/cdn\.jsdelivr\.net\/npm\/@scalar\/api-reference@\d+\.\d+\.\d+\/dist\/browser\/standalone\.js" integrity="sha384-[A-Za-z0-9+/]{64}" crossorigin="anonymous">$/,
  );
  assert.equal(scripts[1], '<script src="/docs/init.js">');
  const csp = res.headers.get("content-security-policy") ?? "";
  const pinned = /src="([^"]+)"/.exec(scripts[0])[1];
  assert.match(csp, new RegExp(`(^|; )script-src 'self' ${pinned.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}(;|$)`));
  assert.match(csp, /(^|; )connect-src 'self'(;|$)/);
  assert.match(csp, /(^|; )default-src 'none'(;|$)/);
  const init = await request("/docs/init.js");
  assert.equal(init.status, 200);
  assert.match(init.headers.get("content-type") ?? "", /javascript/);
  assert.match(await init.text(), /url: "\/openapi\.json"/);
  assert.doesNotMatch(html, /test-token|Bearer [A-Za-z0-9]|GATEWAY_TOKENS\s*[:=]/);
  // Neither is there one in the document.
  assert.doesNotMatch(JSON.stringify(document), /test-token/);
});
