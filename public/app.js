// The playground (docs/playground.md): plain DOM over the typed client. Everything that came from
// the gateway — values, output, tool names, descriptions, previews — is set as text (el()'s `text`,
// textContent), never parsed as markup: a tool is not trusted to write this page.
import { CodemodeClient } from "/generated/codemode-client.mjs";

const TOKEN_KEY = "codemode-edge.token";
const $ = (id) => document.getElementById(id);

/** One element; `text` becomes textContent, `cls` the class; children are appended as they are. */
function el(tag, { text, cls, attrs } = {}, ...children) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = String(text);
  for (const [k, v] of Object.entries(attrs ?? {})) node.setAttribute(k, v);
  for (const c of children) if (c) node.append(c);
  return node;
}

const json = (v) => (v === undefined ? "undefined" : JSON.stringify(v, null, 2));
const bytes = (s) => new TextEncoder().encode(s).length;
const ms = (n) => (typeof n === "number" ? `${n} ms` : "");
const statusSpan = (s) => el("span", { text: s ?? "?", cls: `status-${String(s).replace(/[^a-z_]/gi, "")}` });

const state = {
  client: null,
  sessionId: "",
  turnId: "",
  runId: "",
  running: 0,
  pending: [],
  delivered: new Set(),
  // The /chat turn waiting on client tools (Continue), and the running /chat call's stop.
  chatTurn: "",
  chatStop: null,
};

function say(id, text, bad = false) {
  const node = $(id);
  node.textContent = text;
  node.className = bad ? "status-failed" : "";
}

function errorText(error) {
  return `${error.code} (${error.status}): ${error.message}`;
}

// ---- 1. token (sessionStorage only: never in a URL, a cookie or the page) ----

function useToken(token) {
  state.client = token ? new CodemodeClient({ baseUrl: location.origin, token }) : null;
  say("token-status", token ? "Token set for this tab." : "No token: enter one to start.");
}

$("token-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const token = $("token").value.trim();
  sessionStorage.setItem(TOKEN_KEY, token);
  $("token").value = "";
  useToken(token);
});
$("token-forget").addEventListener("click", () => {
  sessionStorage.removeItem(TOKEN_KEY);
  useToken("");
});

function needClient() {
  if (!state.client) say("token-status", "Enter a gateway token first.", true);
  return state.client;
}

// ---- 2. session and turn ----

function addToolRow(name = "", description = "") {
  const row = $("client-tool-row").content.firstElementChild.cloneNode(true);
  row.querySelector(".tool-name").value = name;
  row.querySelector(".tool-description").value = description;
  row.querySelector(".tool-remove").addEventListener("click", () => row.remove());
  $("client-tools").append(row);
  row.querySelector(".tool-name").focus();
}
$("add-tool").addEventListener("click", () => addToolRow());

$("turn-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const client = needClient();
  if (!client) return;
  const sessionId = $("session-id").value.trim();
  const body = {};
  if ($("agent-id").value.trim()) body.agentId = $("agent-id").value.trim();
  if ($("model").value.trim()) body.model = $("model").value.trim();
  const tools = declaredTools();
  if (tools.length) body.clientTools = tools;
  say("turn-status", "Opening…");
  const r = await client.openTurn(sessionId, body);
  if (!r.ok) return say("turn-status", errorText(r.error), true);
  selectTurn(sessionId, r.value.turnId);
  showSurface(r.value);
});

/** The client tools declared in the form (a new turn, or a new /chat turn, gets them). */
function declaredTools() {
  return [...$("client-tools").querySelectorAll(".tool-row")]
    .map((row) => ({ name: row.querySelector(".tool-name").value, description: row.querySelector(".tool-description").value }))
    .filter((t) => t.name)
    .map((t) => (t.description ? t : { name: t.name }));
}

$("use-turn").addEventListener("click", () => {
  if (!needClient()) return;
  const turnId = $("existing-turn").value.trim();
  if (turnId) selectTurn($("session-id").value.trim(), turnId);
});

function selectTurn(sessionId, turnId) {
  Object.assign(state, { sessionId, turnId, runId: "", pending: [], delivered: new Set() });
  say("turn-status", `Turn ${turnId} in session ${sessionId}.`);
  renderPending();
  refreshTrajectory();
  refreshApprovals();
}

// ---- 3. the model-visible surface ----

function showSurface(answer) {
  const text = JSON.stringify(answer.tools);
  const surface = answer.telemetry?.surface;
  const parts = [
    `${answer.tools.length} tool(s), ${bytes(text)} bytes of tool definitions`,
    answer.codeModeEngaged ? "code mode engaged" : "code mode off",
    `catalog: ${answer.telemetry?.catalogSize ?? "?"} tools`,
  ];
  if (answer.toolSearchEngaged) parts.push(`Tool Search (${answer.toolSearchMode})`);
  if (surface) parts.push(`surface ${surface.kind}: ${surface.tools} tools, ${surface.bytes} bytes`);
  $("surface-summary").textContent = parts.join(" · ");
  // The gateway measures both (the answer's `surface`); an older gateway gives only the tools.
  const size = answer.surface;
  $("surface-size").textContent = size
    ? `Model-visible tool definitions: ${size.bytes} bytes. The same catalog exposed directly (code mode off): ${size.directBytes} bytes` +
      (size.directBytes > 0 ? ` (${Math.round((100 * size.bytes) / size.directBytes)}% of it).` : ".")
    : "This gateway does not report what direct exposure of the catalog would cost.";
  const list = $("surface-tools");
  list.replaceChildren();
  for (const tool of answer.tools) {
    const def = tool.function ?? tool;
    list.append(
      el(
        "li",
        { cls: "card" },
        el("span", { text: def.name, cls: "label" }),
        el("span", { text: `${bytes(JSON.stringify(tool))} bytes`, cls: "meta" }),
        el(
          "details",
          {},
          el("summary", { text: "description and parameters" }),
          el("pre", { text: def.description ?? "" }),
          el("pre", { text: json(def.parameters ?? def.inputSchema) }),
        ),
      ),
    );
  }
}

// ---- 4. cells: exec, and wait after client results ----

$("cell-form").addEventListener("submit", (e) => {
  e.preventDefault();
  runCell();
});
$("cell").addEventListener("keydown", (e) => {
  if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
    e.preventDefault();
    runCell();
  }
});

function needTurn() {
  if (!needClient()) return false;
  if (!state.turnId) say("turn-status", "Open a turn first.", true);
  return Boolean(state.turnId);
}

async function runCell() {
  if (!needTurn()) return;
  await track(() => state.client.exec(state.sessionId, state.turnId, { code: $("cell").value, language: $("language").value }));
}

$("wait").addEventListener("click", async () => {
  if (!needTurn() || !state.runId) return;
  await track(() => state.client.wait(state.sessionId, state.turnId, state.runId));
});

/** One exec/wait: approvals and the trajectory refresh every second until it answers. */
async function track(call) {
  state.running++;
  $("run").disabled = true;
  $("wait").disabled = true;
  $("result").replaceChildren(el("p", { text: "Running…", cls: "status-waiting" }));
  const poll = setInterval(() => {
    refreshApprovals();
    refreshTrajectory();
  }, 1000);
  try {
    const r = await call();
    showResult(r);
  } finally {
    clearInterval(poll);
    state.running--;
    $("run").disabled = false;
    refreshTrajectory();
    refreshApprovals();
    renderPending();
  }
}

function showResult(r) {
  const box = $("result");
  if (!r.ok) return box.replaceChildren(el("p", { text: errorText(r.error), cls: "status-failed" }));
  const res = r.value;
  const parts = [
    el("p", {}, el("span", { text: "Status: " }), statusSpan(res.status), res.runId ? el("span", { text: ` run ${res.runId}`, cls: "meta" }) : null),
  ];
  if (res.status === "completed") parts.push(el("h3", { text: "Value" }), el("pre", { text: json(res.value), attrs: { id: "result-value" } }));
  if (res.error !== undefined)
    parts.push(
      el("h3", { text: "Error" }),
      el("pre", { text: typeof res.error === "string" ? res.error : json(res.error), attrs: { id: "result-error" } }),
    );
  if (res.output?.length) {
    const out = el("ol", { cls: "plain", attrs: { id: "result-output" } });
    for (const o of res.output) out.append(el("li", {}, el("pre", { text: o.type === "text" ? o.text : json(o.value) })));
    parts.push(el("h3", { text: "Output" }), out);
  }
  if (res.telemetry) parts.push(el("details", {}, el("summary", { text: "Telemetry" }), el("pre", { text: json(res.telemetry) })));
  box.replaceChildren(...parts);
  if (res.status === "waiting") {
    state.runId = res.runId;
    state.pending = res.pendingToolCalls ?? [];
    state.delivered = new Set();
  } else {
    state.runId = "";
    state.pending = [];
  }
}

// ---- 5. /chat with its server-sent events shown as they arrive ----

$("chat-form").addEventListener("submit", (e) => {
  e.preventDefault();
  if (!needClient()) return;
  const sessionId = $("session-id").value.trim();
  const body = { model: $("chat-model").value.trim(), messages: [{ role: "user", content: $("chat-message").value }] };
  if ($("chat-agent").value.trim()) body.agentId = $("chat-agent").value.trim();
  const tools = declaredTools();
  if (tools.length) body.clientTools = tools;
  runChat(sessionId, body);
});
$("chat-continue").addEventListener("click", () => {
  if (needClient() && state.chatTurn) runChat(state.sessionId, { turnId: state.chatTurn });
});
$("chat-stop").addEventListener("click", () => state.chatStop?.abort());

/** One /chat call: each event is shown as it arrives; approvals and the trajectory refresh meanwhile. */
async function runChat(sessionId, body) {
  const stop = new AbortController();
  Object.assign(state, { chatStop: stop, chatTurn: "" });
  state.running++;
  $("chat-send").disabled = $("chat-continue").disabled = true;
  $("chat-stop").disabled = false;
  $("chat-text").textContent = "";
  $("chat-events").replaceChildren();
  say("chat-status", "Calling the model…");
  const poll = setInterval(() => {
    refreshApprovals();
    refreshTrajectory();
  }, 1000);
  try {
    const r = await state.client.chatEvents(sessionId, body, { signal: stop.signal });
    if (!r.ok) return say("chat-status", errorText(r.error), true);
    for await (const event of r.value) showChatEvent(sessionId, event);
  } catch (error) {
    say("chat-status", stop.signal.aborted ? "Stopped (the gateway cancels the turn's running work)." : `The stream broke: ${error}`, true);
  } finally {
    clearInterval(poll);
    state.running--;
    state.chatStop = null;
    $("chat-send").disabled = false;
    $("chat-stop").disabled = true;
    $("chat-continue").disabled = !state.chatTurn;
    refreshTrajectory();
    refreshApprovals();
    renderPending();
  }
}

function chatEvent(type, summary, detail) {
  const item = el(
    "li",
    { cls: "card chat-event", attrs: { "data-type": type } },
    el("p", {}, el("span", { text: type, cls: "label" }), el("span", { text: summary, cls: "meta" })),
    detail === undefined ? null : el("pre", { text: detail }),
  );
  $("chat-events").append(item);
  return item;
}

function showChatEvent(sessionId, e) {
  const list = $("chat-events");
  switch (e.type) {
    case "turn":
      // Follow the chat's turn: the trajectory and approvals below are this turn's.
      selectTurn(sessionId, e.turnId);
      chatEvent(e.type, `${e.turnId} · ${e.codeModeEngaged ? "code mode engaged" : "code mode off"}${e.continued ? " · continued" : ""}`);
      break;
    case "text": {
      $("chat-text").append(e.delta);
      // Consecutive deltas grow one entry.
      const last = list.lastElementChild;
      if (last?.dataset.type === "text") last.querySelector("pre").append(e.delta);
      else chatEvent("text", "", e.delta);
      break;
    }
    case "assistant_turn":
      chatEvent(
        e.type,
        `model call ${e.n} · ${e.finishReason} · ${e.usage?.inputTokens ?? 0} in / ${e.usage?.outputTokens ?? 0} out tokens · ${e.requestBytes} request bytes`,
      );
      break;
    case "tool_call_start": {
      const code = e.input && typeof e.input === "object" && typeof e.input.code === "string" ? e.input.code : json(e.input);
      chatEvent(e.type, `${e.name} · ${e.callId}`, code);
      break;
    }
    case "nested_call":
      chatEvent(e.type, `${e.tool} · ${e.source} · ${e.ok ? "ok" : "failed"} · ${ms(e.durationMs)} · under ${e.parentCallId}`);
      break;
    case "tool_update":
      chatEvent(e.type, `${e.tool} · under ${e.parentCallId}`, e.partial);
      break;
    case "tool_call_end":
      chatEvent(e.type, `${e.name} · ${e.status}${e.untrusted ? " · untrusted content" : ""} · ${e.callId}`, e.result);
      break;
    case "done": {
      const a = e.answer;
      const m = a.meta ?? {};
      chatEvent(
        e.type,
        `${a.status} · ${m.stopReason ?? ""} · ${m.assistantTurns} model call(s) · ${m.toolSummary?.calls ?? 0} tool call(s)${m.costUsd !== undefined ? ` · $${m.costUsd}` : ""}`,
        a.pendingToolCalls?.length ? json(a.pendingToolCalls) : undefined,
      );
      say("chat-status", a.status === "waiting" ? "Waiting on client tools: deliver them below, then Continue." : "Completed.");
      if (a.status === "waiting") {
        // The turn continues with /chat { turnId } once every pending call has a result.
        Object.assign(state, { chatTurn: a.turnId, runId: "", pending: a.pendingToolCalls ?? [], delivered: new Set() });
      }
      break;
    }
    case "error":
      chatEvent(e.type, `${e.error.code}${e.error.providerStatus ? ` (provider ${e.error.providerStatus})` : ""}`, e.error.message);
      say("chat-status", `${e.error.code}: ${e.error.message}`, true);
      break;
    default:
      // A newer gateway's event: shown as data.
      chatEvent(String(e.type), "", json(e));
  }
}

// ---- 6. pending client calls: deliver a value or an error, then wait ----

function renderPending() {
  const list = $("pending");
  list.replaceChildren();
  $("pending-empty").hidden = state.pending.length > 0;
  $("wait").disabled = !state.runId || state.running > 0;
  state.pending.forEach((call, i) => {
    const id = `call-${i}`;
    const done = state.delivered.has(call.callId);
    const value = el("textarea", { attrs: { id: `${id}-value`, rows: "2", spellcheck: "false" } });
    value.value = '"ok"';
    const asError = el("input", { attrs: { id: `${id}-error`, type: "checkbox" } });
    const send = el("button", { text: done ? "Delivered" : "Deliver", attrs: { type: "button" } });
    send.disabled = done;
    const status = el("span", { attrs: { role: "status" } });
    send.addEventListener("click", async () => {
      let body;
      if (asError.checked) body = { callId: call.callId, error: { message: value.value } };
      else {
        try {
          body = { callId: call.callId, value: JSON.parse(value.value) };
        } catch {
          status.textContent = "The value must be JSON (a string needs quotes).";
          return;
        }
      }
      const r = await state.client.deliver(state.sessionId, state.turnId, body);
      if (!r.ok) return void (status.textContent = errorText(r.error));
      state.delivered.add(call.callId);
      renderPending();
      $("wait").focus();
    });
    list.append(
      el(
        "li",
        { cls: "card pending-call" },
        el(
          "p",
          {},
          el("span", { text: "Tool " }),
          el("span", { text: call.tool, cls: "label" }),
          el("span", { text: ` call ${call.callId}`, cls: "meta" }),
        ),
        el("pre", { text: json(call.input) }),
        el("label", { text: "Value (JSON) or error message", attrs: { for: `${id}-value` } }),
        value,
        el("div", { cls: "row" }, asError, el("label", { text: "Deliver as an error", attrs: { for: `${id}-error` } }), send, status),
      ),
    );
  });
}

// ---- 7. approvals ----

$("approvals-refresh").addEventListener("click", () => refreshApprovals());

let approvalsBusy = false;
async function refreshApprovals() {
  if (!state.client || !state.sessionId || approvalsBusy) return;
  approvalsBusy = true;
  try {
    const r = await state.client.approvals(state.sessionId);
    if (!r.ok) return say("approvals-status", errorText(r.error), true);
    say("approvals-status", r.value.length ? `${r.value.length} pending` : "No pending approvals.");
    const list = $("approvals");
    list.replaceChildren();
    for (const a of r.value) {
      const allow = el("button", { text: "Allow", attrs: { type: "button" } });
      const deny = el("button", { text: "Deny", attrs: { type: "button" } });
      const decide = (decision) => async () => {
        allow.disabled = deny.disabled = true;
        const d = await state.client.decide(state.sessionId, a.approvalId, { decision });
        say("approvals-status", d.ok ? `${decision === "allow" ? "Allowed" : "Denied"} ${a.tool}.` : errorText(d.error), !d.ok);
        refreshTrajectory();
      };
      allow.addEventListener("click", decide("allow"));
      deny.addEventListener("click", decide("deny"));
      list.append(
        el(
          "li",
          { cls: "card approval" },
          el(
            "p",
            {},
            el("span", { text: a.tool, cls: "label" }),
            el("span", { text: ` turn ${a.turnId} · requested ${new Date(a.requestedAt).toLocaleTimeString()}`, cls: "meta" }),
          ),
          el("pre", { text: typeof a.inputPreview === "string" ? a.inputPreview : json(a.inputPreview) }),
          el("div", { cls: "row" }, allow, deny),
        ),
      );
    }
  } finally {
    approvalsBusy = false;
  }
}

// ---- 8. trajectory: outer calls with their nested calls, refreshed while the turn is open ----

$("trajectory-refresh").addEventListener("click", () => refreshTrajectory());
setInterval(() => {
  if ($("trajectory-follow").checked && state.turnId && !state.running) refreshTrajectory();
}, 1000);

let trajectoryBusy = false;
async function refreshTrajectory() {
  if (!state.client || !state.turnId || trajectoryBusy) return;
  trajectoryBusy = true;
  try {
    const r = await state.client.trajectory(state.sessionId, state.turnId);
    if (!r.ok) return say("trajectory-summary", errorText(r.error), true);
    renderTrajectory(r.value);
  } finally {
    trajectoryBusy = false;
  }
}

function renderTrajectory(t) {
  const nestedCount = t.calls.reduce((n, c) => n + c.nested.length, 0);
  let summary = `Turn ${t.turnId} (${t.status}): ${t.calls.length} outer call(s), ${nestedCount} nested, ${t.modelCalls.length} model call(s)`;
  if (t.omittedEvents || t.droppedEvents) summary += `; ${t.omittedEvents} events omitted, ${t.droppedEvents} dropped`;
  say("trajectory-summary", summary);
  const tree = $("trajectory");
  tree.replaceChildren();
  for (const call of t.calls) {
    const head = el(
      "p",
      {},
      el("span", { text: call.tool, cls: "label" }),
      el("span", { text: " " }),
      statusSpan(call.status ?? "running"),
      el("span", {
        text: [call.via, ms(call.durationMs), call.decision, call.code, call.runId && `run ${call.runId}`].filter(Boolean).join(" · "),
        cls: "meta",
      }),
    );
    const input = call.input && typeof call.input === "object" && typeof call.input.code === "string" ? call.input.code : json(call.input);
    const nested = el("ol", { attrs: { "aria-label": `nested calls of ${call.tool}` } });
    for (const n of call.nested) {
      const detail = [n.input && `input ${n.input}`, n.result && `result ${n.result}`, n.error && `error ${n.error}`].filter(Boolean).join("\n");
      nested.append(
        el(
          "li",
          { cls: "nested-call" },
          el(
            "p",
            {},
            el("span", { text: n.tool, cls: "label" }),
            el("span", { text: " " }),
            statusSpan(n.status),
            el("span", { text: [n.source, ms(n.durationMs), n.decision && `policy: ${n.decision}`].filter(Boolean).join(" · "), cls: "meta" }),
          ),
          detail ? el("pre", { text: detail }) : null,
        ),
      );
    }
    tree.append(el("li", { cls: "outer-call" }, head, el("details", {}, el("summary", { text: "input" }), el("pre", { text: input })), nested));
  }
  const events = [
    ...t.snapshots.map((s) => ({ at: s.at, text: `snapshot ${s.event} run ${s.runId}${s.callId ? ` call ${s.callId}` : ""}` })),
    ...t.limitsHit.map((l) => ({ at: l.at, text: `limit ${l.limit}${l.detail ? `: ${l.detail}` : ""}` })),
    ...t.modelCalls.map((m) => ({ at: m.at, text: `model ${m.model ?? ""} ${m.status ?? ""} ${ms(m.durationMs)}` })),
  ].sort((a, b) => a.at - b.at);
  $("trajectory-events").replaceChildren(...events.map((e) => el("li", { text: `${new Date(e.at).toLocaleTimeString()} ${e.text}` })));
}

// ---- start ----

$("session-id").value = `playground-${Math.random().toString(36).slice(2, 8)}`;
useToken(sessionStorage.getItem(TOKEN_KEY) ?? "");
