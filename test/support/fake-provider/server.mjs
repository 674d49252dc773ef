// The fake provider server: one Node HTTP server speaking OpenAI Chat Completions
// (`POST /v1/chat/completions`) and Anthropic Messages (`POST /v1/messages`), driven by scripts.
//
//   POST /__scripts { steps: Step[] }        → { scriptId }
//   POST /__scripts/:id/steps { steps }       → { steps: n } appends steps (a test that learns what the
//                                              model should say next, e.g. a runId, adds them then)
//   GET  /__scripts/:id/requests             → RequestRecord[] (waits, ≤ 5 s, until every request
//                                              of the script has ended, so `aborted` is settled)
//   GET  /__scripts/:id/arrived              → { arrived: n } requests received so far (no waiting)
//   GET  /__unscripted                       → RequestRecord[] of requests that named no script
//   DELETE /__scripts/:id                    → { deleted: true } forgets the script and its records (a
//                                              long run, e.g. the chat benchmark, keeps memory bounded)
//
// A request belongs to the script whose marker `[script:<id>]` is in its FIRST user message and
// consumes that script's next step (a request refused by validation or auth consumes none):
//   { text?: string | string[], toolCalls?: [{ id?, name, input }], usage?: { input, output,
//     cacheRead, cacheWrite }, finishReason?: "stop" | "tool-calls" | "length" | "content-filter" }
//   { error: { status, message, headers? } }  the vendor's error JSON with that status
//   { hangMs, text? }                         headers (and the text deltas) sent, then a stall; the
//                                              response then ends without finishing
//   { barrier: { name, count }, ...step }     held until `count` requests reached barrier `name`
//                                              (any script), then answered as the step says
//   { malformed: true, text? }                a stream that breaks mid-event (JSON cut off)
//   { malformed: "shape", text? }             a stream with an event of valid JSON in the wrong shape
//                                              (both carry MALFORMED_MARKER, answers.mjs)
// A step's `rawUsage` ({ openai?, anthropicStart?, anthropicDelta? }: raw JSON text) replaces the
// streamed usage where it names (a hostile provider's counts: `"12"`, `1e400`, `{}`).
// A string tool-call `input` is sent verbatim as the argument text. Past the last step: 500 and a
// recorded problem. `usage.input` counts input tokens neither read from nor written to the cache.
//
// Every request is validated (validate.mjs); problems are recorded and answered 400 in the vendor's
// error format. Keys: any key starting with `fake-key-` is valid, anything else is 401.
import { createServer } from "node:http";
import {
  anthropicEvents,
  anthropicJson,
  anthropicMalformedEvents,
  errorBody,
  openaiEvents,
  openaiJson,
  openaiMalformedEvents,
  planAnswer,
  wrongKeyMessage,
} from "./answers.mjs";
import { anthropicFirstUserText, openaiFirstUserText, validateAnthropic, validateOpenAI } from "./validate.mjs";

const SETTLE_WAIT_MS = 5_000;
const MAX_BODY_BYTES = 8 * 1024 * 1024;
const MARKER = /\[script:([A-Za-z0-9_-]+)\]/;

const WIRES = {
  "/v1/chat/completions": {
    wire: "openai",
    authHeader: "authorization",
    keyOf: (value) => (value.startsWith("Bearer ") ? value.slice("Bearer ".length) : undefined),
    validate: validateOpenAI,
    firstUserText: openaiFirstUserText,
    events: openaiEvents,
    malformed: openaiMalformedEvents,
    json: openaiJson,
    extraHeaderProblems: () => [],
  },
  "/v1/messages": {
    wire: "anthropic",
    authHeader: "x-api-key",
    keyOf: (value) => value,
    validate: validateAnthropic,
    firstUserText: anthropicFirstUserText,
    events: anthropicEvents,
    malformed: anthropicMalformedEvents,
    json: anthropicJson,
    extraHeaderProblems: (headers) => (headers["anthropic-version"] ? [] : ["anthropic-version header is required"]),
  },
};

export function createFakeProviderServer() {
  const scripts = new Map();
  const unscripted = [];
  let counter = 0;
  const ids = { next: (prefix) => `${prefix}fake${(++counter).toString(36)}` };
  const hangs = new Set();

  const server = createServer((req, res) => {
    handle(req, res).catch((error) => {
      if (!res.headersSent) json(res, 500, { error: { message: `fake provider server bug: ${error?.stack ?? error}` } });
      else res.destroy();
    });
  });

  async function handle(req, res) {
    const url = new URL(req.url, "http://fake");
    if (req.method === "POST" && url.pathname === "/__scripts") {
      const body = await readJson(req);
      if (!Array.isArray(body?.steps)) return json(res, 400, { error: "body must be { steps: [...] }" });
      const scriptId = ids.next("s");
      scripts.set(scriptId, { steps: body.steps, next: 0, requests: [] });
      return json(res, 200, { scriptId });
    }
    const more = url.pathname.match(/^\/__scripts\/([^/]+)\/steps$/);
    if (req.method === "POST" && more) {
      const script = scripts.get(more[1]);
      if (!script) return json(res, 404, { error: `no script ${more[1]}` });
      const body = await readJson(req);
      if (!Array.isArray(body?.steps)) return json(res, 400, { error: "body must be { steps: [...] }" });
      script.steps.push(...body.steps);
      return json(res, 200, { steps: script.steps.length });
    }
    const records = url.pathname.match(/^\/__scripts\/([^/]+)\/requests$/);
    if (req.method === "GET" && records) {
      const script = scripts.get(records[1]);
      if (!script) return json(res, 404, { error: `no script ${records[1]}` });
      await settle(script.requests);
      return json(
        res,
        200,
        script.requests.map(({ record }) => record),
      );
    }
    // How many requests reached the script so far, ended or not (no waiting): a test knows a call is in flight.
    const arrived = url.pathname.match(/^\/__scripts\/([^/]+)\/arrived$/);
    if (req.method === "GET" && arrived) {
      const script = scripts.get(arrived[1]);
      if (!script) return json(res, 404, { error: `no script ${arrived[1]}` });
      return json(res, 200, { arrived: script.requests.length });
    }
    const forget = url.pathname.match(/^\/__scripts\/([^/]+)$/);
    if (req.method === "DELETE" && forget) {
      if (!scripts.delete(forget[1])) return json(res, 404, { error: `no script ${forget[1]}` });
      return json(res, 200, { deleted: true });
    }
    if (req.method === "GET" && url.pathname === "/__unscripted") {
      await settle(unscripted);
      return json(
        res,
        200,
        unscripted.map(({ record }) => record),
      );
    }
    const wire = WIRES[url.pathname];
    if (!wire) return json(res, 404, { error: { message: `fake provider: no route ${req.method} ${url.pathname}` } });
    if (req.method !== "POST") return json(res, 405, errorBody(wire.wire, 405, `${req.method} is not allowed here`));
    return answer(wire, url.pathname, req, res);
  }

  async function answer(wire, path, req, res) {
    const problems = [];
    const text = await readText(req);
    let body;
    try {
      body = JSON.parse(text);
    } catch {
      problems.push("the body is not valid JSON");
    }
    const contentType = req.headers["content-type"] ?? "";
    if (!contentType.toLowerCase().startsWith("application/json"))
      problems.push(`content-type must be application/json (got ${JSON.stringify(contentType)})`);

    const authValue = req.headers[wire.authHeader];
    const key = typeof authValue === "string" ? wire.keyOf(authValue) : undefined;
    const keyState = key === undefined ? "missing" : key.startsWith("fake-key-") ? "present" : "wrong";
    if (keyState === "missing") problems.push(`${wire.authHeader} header is missing or malformed`);
    problems.push(...wire.extraHeaderProblems(req.headers));
    if (body !== undefined) problems.push(...wire.validate(body));

    const headers = { ...req.headers };
    if (authValue !== undefined) headers[wire.authHeader] = keyState === "present" ? "present" : "wrong";
    const record = { wire: wire.wire, path, headers, body: body ?? text, problems, aborted: false };
    const ended = track(res, record);

    const scriptId = body === undefined ? undefined : wire.firstUserText(body).match(MARKER)?.[1];
    const script = scriptId === undefined ? undefined : scripts.get(scriptId);
    (script ? script.requests : unscripted).push({ record, ended });

    if (keyState !== "present") {
      const message = keyState === "wrong" ? wrongKeyMessage(wire.wire, key) : `${wire.authHeader} header is required`;
      return json(res, 401, errorBody(wire.wire, 401, message));
    }
    if (problems.length > 0) return json(res, 400, errorBody(wire.wire, 400, problems.join("; ")));
    if (!script) {
      problems.push(`no script: the first user message carries no known [script:<id>] marker (${JSON.stringify(scriptId ?? null)})`);
      return json(res, 500, errorBody(wire.wire, 500, problems.at(-1)));
    }
    const step = script.steps[script.next];
    if (step === undefined) {
      problems.push(`script ${scriptId} has no step left for request ${script.next + 1}`);
      return json(res, 500, errorBody(wire.wire, 500, problems.at(-1)));
    }
    script.next++;
    if (step.barrier)
      return atBarrier(
        step.barrier,
        () => play(wire, step, body, res),
        () => json(res, 500, errorBody(wire.wire, 500, problems.at(-1))),
        problems,
      );
    return play(wire, step, body, res);
  }

  // { barrier: { name, count }, ...step }: held until `count` requests (of any scripts) reached the
  // barrier `name`, then all answered; proves they were in flight at once. Not reached in 10 s: 500.
  const barriers = new Map();
  function atBarrier({ name, count }, go, fail, problems) {
    let b = barriers.get(name);
    if (!b) barriers.set(name, (b = { waiting: [] }));
    b.waiting.push(go);
    if (b.waiting.length >= count) {
      barriers.delete(name);
      clearTimeout(b.timer);
      for (const g of b.waiting) g();
      return;
    }
    if (b.waiting.length === 1)
      b.timer = setTimeout(() => {
        problems.push(`barrier ${name}: only ${b.waiting.length} of ${count} requests arrived`);
        barriers.delete(name);
        fail();
      }, 10_000);
  }

  function play(wire, step, body, res) {
    if (step.error) {
      const { status, message, headers } = step.error;
      return json(res, status, errorBody(wire.wire, status, message), headers);
    }
    const plan = planAnswer(wire.wire, step, ids);
    const meta = { id: ids.next(wire.wire === "openai" ? "chatcmpl-" : "msg_"), created: Math.floor(Date.now() / 1000) };
    if (!body.stream && step.hangMs === undefined && !step.malformed) return json(res, 200, wire.json(plan, body, meta));

    res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", connection: "keep-alive" });
    if (step.malformed) {
      for (const event of wire.malformed(plan, body, meta, step.malformed === "shape" ? "shape" : "json")) res.write(event);
      return res.end();
    }
    if (step.hangMs !== undefined) {
      res.flushHeaders();
      if (plan.deltas.length > 0) for (const event of wire.events(plan, body, meta, "text")) res.write(event);
      const timer = setTimeout(() => (hangs.delete(timer), res.end()), step.hangMs);
      hangs.add(timer);
      res.once("close", () => (clearTimeout(timer), hangs.delete(timer)));
      return;
    }
    for (const event of wire.events(plan, body, meta)) res.write(event);
    res.end();
  }

  server.stopHangs = () => {
    for (const timer of hangs) clearTimeout(timer);
    hangs.clear();
  };
  return server;
}

/** Marks the record `aborted` when the client goes away before the answer ended; resolves at either. */
function track(res, record) {
  return new Promise((resolve) => {
    res.once("close", () => {
      if (!res.writableFinished) record.aborted = true;
      resolve();
    });
  });
}

async function settle(entries) {
  let timer;
  const timeout = new Promise((resolve) => (timer = setTimeout(resolve, SETTLE_WAIT_MS)));
  await Promise.race([Promise.all(entries.map((e) => e.ended)), timeout]);
  clearTimeout(timer);
}

function json(res, status, value, headers = {}) {
  const text = JSON.stringify(value);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...headers });
  res.end(text);
}

async function readText(req) {
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new Error("request body over 8 MiB");
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

async function readJson(req) {
  try {
    return JSON.parse(await readText(req));
  } catch {
    return undefined;
  }
}
