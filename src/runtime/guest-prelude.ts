import { WORK_METER_SOURCE } from "./work-meter";
import { MAX_GUEST_TIMERS } from "../limits";

/**
 * Guest-side half of the bridge, evaluated once in every fresh VM before model code.
 *
 * Everything async lives in guest memory: promises, their resolvers, timer callbacks and
 * unhandled-rejection bookkeeping. The host only ever records requests synchronously and
 * later calls `settle(id, ok, text)`; it never holds a guest promise. That is what lets a
 * snapshot taken mid-flight resume in another process (see ARCHITECTURE.md, bridge).
 *
 * Values cross as strings only: JSON text or error messages produced *inside* the guest,
 * so Proxy traps, getters and toJSON hooks run under the guest's own CPU and memory limits
 * and never on the host.
 */

/**
 * Version of the host ↔ guest ABI: HOST_CALL's name, the HOST_OP codes and their arguments,
 * the request op names ("call", "describe", "search", "yield", "timer") and their payloads,
 * and the GUEST_CONTROL methods (start, settle, status, value, error, installTools,
 * noteRejection, noteHandled, describeError) with their arguments, results and semantics.
 *
 * A parked run is a VM snapshot: once restored it runs the prelude of the build that parked
 * it, from its own memory, whatever this file says now. Prelude code may change freely as
 * long as the ABI does not. Changing any of the above requires bumping this number, and
 * keeping the host able to drive every older version (DRIVABLE_GUEST_ABI in guest-vm.ts) for
 * at least the maximum snapshot TTL (86,400 s) after the deploy, so runs parked before it
 * still resume. Each snapshot records the version it was parked with; one this build cannot
 * drive fails its `wait` with a message saying so.
 */
/**
 * 2: adds HOST_OP.charge (native work metering, work-meter.ts); ABI 1 preludes never send it.
 * 3: adds GUEST_CONTROL.installToolSearch (the `tool_search_code` guest) and installTools' third
 *    argument (the turn's MCP namespace and virtual API files); only fresh VMs get either.
 * 4: adds HOST_OP.taint: the guest reports reading network-written metadata from its own memory
 *    (an API file marked `untrusted`, a client tool handle's description); ABI 3 preludes never send it.
 * 5: adds installTools' fourth argument (the turn's plugin namespaces and their API file) and "call" requests keyed
 *    "ns:<Name>.<method>"; only fresh VMs get the argument, ABI 4 preludes never send the keys.
 * 6: adds the fourth argument's "swarm" field (agents.run, phase, log) and "call" requests keyed "swarm:phase" /
 *    "swarm:log"; only fresh VMs get the field, ABI 5 preludes never send the keys.
 * 7: adds GUEST_CONTROL.seed(a, b, c, d): the guest's Math.random state, set by the host on every VM
 *    restored from the shared image; only fresh VMs get it (a parked run keeps its own state).
 */
export const GUEST_ABI_VERSION = 7;

/** The one host callback, registered by this stable name so `restore` can re-register it. */
export const HOST_CALL = "__cm_host";
/** Its first argument selects the operation. */
export const HOST_OP = { request: 0, output: 1, cancel: 2, charge: 3, taint: 4 } as const;
/**
 * Frozen guest object the host drives the cell through. It is published under this name
 * only while the prelude runs; the host captures it with `exportHandle` (the token survives
 * snapshots) and deletes the global before any model code runs.
 */
export const GUEST_CONTROL = "__codemode";

/**
 * Math.random over a guest-held xoshiro128** state. Every cell VM is restored from one image, so
 * QuickJS's own generator (seeded from the clock when the context was created) would start every
 * cell at the same value; the host seeds this one with 128 fresh bits per VM instead (`seed`).
 * Non-cryptographic, like the engine's (xorshift64*): 53 bits per value from two 32-bit outputs.
 * Unseeded (never in a cell VM) it falls back to the engine's generator.
 */
export const GUEST_RANDOM_SOURCE = String.raw`
  const rs = new Int32Array(4), engineRandom = Math.random, imul = Math.imul;
  function next32() {
    const x = imul(rs[1], 5), r = imul((x << 7) | (x >>> 25), 9), t = rs[1] << 9;
    rs[2] ^= rs[0]; rs[3] ^= rs[1]; rs[1] ^= rs[2]; rs[0] ^= rs[3]; rs[2] ^= t; rs[3] = (rs[3] << 11) | (rs[3] >>> 21);
    return r >>> 0;
  }
  defineProperty(Math, "random", { writable: true, enumerable: false, configurable: true, value: { random() {
    if ((rs[0] | rs[1] | rs[2] | rs[3]) === 0) return engineRandom();
    return ((next32() >>> 5) * 67108864 + (next32() >>> 6)) / 9007199254740992;
  } }.random });
  function seed(a, b, c, d) {
    rs[0] = a; rs[1] = b; rs[2] = c; rs[3] = d | ((a | b | c | d) === 0);
    for (let i = 0; i < 8; i++) next32();
  }
`;

export const GUEST_PRELUDE = String.raw`
(function (g) {
  "use strict";
  const host = g.${HOST_CALL};
  delete g.${HOST_CALL};
  const hostRequest = function (id, op, text) { host(${HOST_OP.request}, id, op, text); };
  const hostOutput = function (kind, text) { host(${HOST_OP.output}, kind, text); };
  const hostCancel = function (id) { host(${HOST_OP.cancel}, id); };
  const hostCharge = function (units) { host(${HOST_OP.charge}, units); };
  // Metadata written outside the gateway, read from guest memory: the cell's result becomes network-derived.
  const hostTaint = function (source) { host(${HOST_OP.taint}, source); };

  // Stack-trace call sites must not hand out function objects (prelude internals sit on
  // the stack under timer callbacks and toJSON hooks): drop getFunction/getThis.
  (function () {
    const saved = g.Error.prepareStackTrace;
    g.Error.prepareStackTrace = function (e, callSites) { return callSites; };
    const sites = new g.Error().stack;
    g.Error.prepareStackTrace = saved;
    if (saved === undefined) delete g.Error.prepareStackTrace;
    if (sites && sites[0]) {
      const proto = Object.getPrototypeOf(sites[0]);
      delete proto.getFunction;
      delete proto.getThis;
    }
  })();

  // Intrinsics captured before model code can replace them.
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const freeze = Object.freeze;
  const defineProperty = Object.defineProperty;
  const PromiseCtor = Promise;
  const ErrorCtor = Error;
  const TypeErrorCtor = TypeError;
  const StringCtor = String;
  const NumberCtor = Number;
  const MapCtor = Map;
  const objectToString = Object.prototype.toString;
  const isArray = Array.isArray;
  const AsyncFunction = (async function () {}).constructor;
  const mapGet = MapCtor.prototype.get, mapSet = MapCtor.prototype.set, mapDelete = MapCtor.prototype.delete;
  const mapHas = MapCtor.prototype.has, mapSize = Object.getOwnPropertyDescriptor(MapCtor.prototype, "size").get;
  const mapValues = MapCtor.prototype.values;
  const mapIteratorNext = Object.getPrototypeOf(new MapCtor().values()).next;
  const promiseThen = PromiseCtor.prototype.then;
  const stringSlice = StringCtor.prototype.slice;
  const ProxyCtor = Proxy;
  const reflectOwnKeys = Reflect.ownKeys;
  const call = Function.prototype.call.bind(Function.prototype.call);
${WORK_METER_SOURCE}
${GUEST_RANDOM_SOURCE}

  function safeString(v) {
    try { return StringCtor(v); } catch (e) {
      try { return call(objectToString, v); } catch (e2) { return "[unprintable value]"; }
    }
  }
  function describeError(e) {
    try {
      if (e !== null && (typeof e === "object" || typeof e === "function")) {
        let name, message;
        try { name = e.name; } catch (x) {}
        try { message = e.message; } catch (x) {}
        if (typeof message === "string") {
          return (typeof name === "string" && name ? name + ": " : "") + message;
        }
      }
      return "Uncaught " + safeString(e);
    } catch (x) {
      return "Uncaught exception";
    }
  }
  function replacer(key, value) {
    return typeof value === "bigint" ? StringCtor(value) : value;
  }
  function toJsonText(value) {
    return stringify(value, replacer);
  }

  // ---- requests to the host --------------------------------------------------------
  const pending = new MapCtor();   // request id -> { resolve, reject }
  let nextId = 1;
  // Swarm's current phase ({ id, name }, set by phase()): every later "call" carries it, so the
  // trajectory groups those records under it. Guest state, so it survives a park.
  let swarmPhase = null;
  function request(op, payload) {
    const id = nextId++;
    if (op === "call" && swarmPhase !== null && payload !== null && typeof payload === "object") payload.phase = swarmPhase;
    let text;
    try {
      text = toJsonText(payload === undefined ? null : payload);
    } catch (e) {
      return PromiseCtor.reject(new TypeErrorCtor("tool input must be JSON-compatible: " + describeError(e)));
    }
    return new PromiseCtor(function (resolve, reject) {
      call(mapSet, pending, id, { resolve: resolve, reject: reject });
      try {
        hostRequest(id, op, text);
      } catch (e) {
        call(mapDelete, pending, id);
        throw e;
      }
    });
  }
  function settle(id, ok, text) {
    const entry = call(mapGet, pending, id);
    if (!entry) return false;
    call(mapDelete, pending, id);
    if (ok) {
      let value;
      try { value = text === undefined ? undefined : parse(text); }
      catch (e) { entry.reject(new ErrorCtor("malformed bridge result")); return true; }
      entry.resolve(value);
    } else {
      entry.reject(new ErrorCtor(StringCtor(text)));
    }
    return true;
  }

  // ---- uncaught errors and unhandled rejections --------------------------------------
  const unhandled = new MapCtor();  // promise -> reason (kept in guest memory across snapshots)
  let uncaught;                      // first uncaught error message (timer callbacks)
  function noteRejection(promise, reason) { call(mapSet, unhandled, promise, reason); }
  function noteHandled(promise) { call(mapDelete, unhandled, promise); }
  function firstFailure() {
    if (uncaught !== undefined) return uncaught;
    if (call(mapSize, unhandled) === 0) return undefined;
    const first = call(mapIteratorNext, call(mapValues, unhandled)).value;
    return "Unhandled promise rejection: " + describeError(first);
  }

  // ---- timers, bridged through the host so they survive snapshot/resume ---------------
  const timers = new MapCtor();     // timer id -> { requestId, cb, args }
  let nextTimer = 1;
  function setTimeout(cb, delay) {
    if (typeof cb !== "function") throw new TypeErrorCtor("setTimeout callback must be a function");
    const args = [];
    for (let i = 2; i < arguments.length; i++) args.push(arguments[i]);
    if (call(mapSize, timers) >= ${MAX_GUEST_TIMERS}) {
      throw new RangeError("too many pending timers (limit ${MAX_GUEST_TIMERS}); clear or await some first");
    }
    const timerId = nextTimer++;
    const requestId = nextId++;
    let ms = NumberCtor(delay);
    if (!(ms > 0)) ms = 0;
    call(mapSet, timers, timerId, { requestId: requestId, cb: cb, args: args });
    call(mapSet, pending, requestId, {
      resolve: function () { fire(timerId); },
      reject: function () { call(mapDelete, timers, timerId); },
    });
    try {
      hostRequest(requestId, "timer", stringify({ delayMs: ms }));
    } catch (e) {
      call(mapDelete, timers, timerId);
      call(mapDelete, pending, requestId);
      throw e;
    }
    return timerId;
  }
  function clearTimeout(timerId) {
    const t = call(mapGet, timers, timerId);
    if (!t) return;
    call(mapDelete, timers, timerId);
    call(mapDelete, pending, t.requestId);
    hostCancel(t.requestId);
  }
  function fire(timerId) {
    const t = call(mapGet, timers, timerId);
    if (!t) return;
    call(mapDelete, timers, timerId);
    try {
      t.cb.apply(undefined, t.args);
    } catch (e) {
      if (uncaught === undefined) uncaught = "Uncaught error in timer callback: " + describeError(e);
    }
  }

  // ---- output ---------------------------------------------------------------------------
  function text(value) {
    hostOutput("text", typeof value === "string" ? value : safeString(value));
  }
  // Models reach for console.log by habit: it writes a text() item. Strings print as they
  // are; other values readably (JSON-like, with errors, Maps, Sets and cycles spelled out).
  const MapProto = MapCtor.prototype, SetProto = Set.prototype;
  const mapEntries = MapProto.entries, setValues = SetProto.values;
  const setSize = Object.getOwnPropertyDescriptor(SetProto, "size").get;
  const ownKeys = Object.keys;
  const INSPECT_DEPTH = 6, INSPECT_ITEMS = 100;
  function isInstance(v, proto) {
    try { for (let p = Object.getPrototypeOf(v); p !== null; p = Object.getPrototypeOf(p)) if (p === proto) return true; } catch (e) {}
    return false;
  }
  function inspect(v, depth, seen) {
    if (typeof v === "string") return depth === 0 ? v : stringify(v);
    if (typeof v === "bigint") return StringCtor(v) + "n";
    if (typeof v === "function") {
      let name;
      try { name = v.name; } catch (e) { name = undefined; }
      return "[Function" + (typeof name === "string" && name ? ": " + name : "") + "]";
    }
    if (v === null || typeof v !== "object") return safeString(v);
    if (seen.indexOf(v) >= 0) return "[Circular]";
    if (isInstance(v, ErrorCtor.prototype)) return depth === 0 ? describeError(v) : "[" + describeError(v) + "]";
    if (depth >= INSPECT_DEPTH) return isArray(v) ? "[Array]" : "[Object]";
    seen.push(v);
    try {
      const parts = [];
      let more = 0;
      if (isInstance(v, MapProto)) {
        const it = call(mapEntries, v);
        for (let e = it.next(); !e.done; e = it.next()) {
          if (parts.length >= INSPECT_ITEMS) { more++; continue; }
          parts.push(inspect(e.value[0], depth + 1, seen) + " => " + inspect(e.value[1], depth + 1, seen));
        }
        return "Map(" + call(mapSize, v) + ") {" + (parts.length ? " " + parts.join(", ") + (more ? ", … " + more + " more" : "") + " " : "") + "}";
      }
      if (isInstance(v, SetProto)) {
        const it = call(setValues, v);
        for (let e = it.next(); !e.done; e = it.next()) {
          if (parts.length >= INSPECT_ITEMS) { more++; continue; }
          parts.push(inspect(e.value, depth + 1, seen));
        }
        return "Set(" + call(setSize, v) + ") {" + (parts.length ? " " + parts.join(", ") + (more ? ", … " + more + " more" : "") + " " : "") + "}";
      }
      if (isInstance(v, Date.prototype)) { try { return v.toISOString(); } catch (e) { return "Invalid Date"; } }
      if (isArray(v)) {
        const n = v.length;
        for (let i = 0; i < n && i < INSPECT_ITEMS; i++) parts.push(inspect(v[i], depth + 1, seen));
        return "[" + parts.join(",") + (n > INSPECT_ITEMS ? ",… " + (n - INSPECT_ITEMS) + " more" : "") + "]";
      }
      const keys = ownKeys(v);
      for (let i = 0; i < keys.length && i < INSPECT_ITEMS; i++) {
        const val = v[keys[i]];
        if (val === undefined) continue;
        parts.push(stringify(keys[i]) + ":" + inspect(val, depth + 1, seen));
      }
      return "{" + parts.join(",") + (keys.length > INSPECT_ITEMS ? ",… " + (keys.length - INSPECT_ITEMS) + " more" : "") + "}";
    } catch (e) {
      return "[unprintable value]";
    } finally {
      seen.pop();
    }
  }
  function logLine() {
    const parts = [];
    for (let i = 0; i < arguments.length; i++) parts.push(inspect(arguments[i], 0, []));
    text(parts.join(" "));
  }
  const console = freeze({ log: logLine, info: logLine, warn: logLine, error: logLine, debug: logLine });
  function json(value) {
    let t;
    try { t = toJsonText(value); } catch (e) {
      throw new TypeErrorCtor("json() value is not JSON-compatible: " + describeError(e));
    }
    hostOutput("json", t === undefined ? "null" : t);
  }
  function yield_control(reason) {
    return request("yield", { reason: reason === undefined ? null : safeString(reason) }).then(function () {});
  }

  // ---- tools ------------------------------------------------------------------------------
  function makeHandle(meta) {
    const callableName = meta.callableName;
    const handle = function (input) { return request("call", { tool: callableName, input: input }); };
    const metadata = freeze(meta);
    // A client tool's description is the client's text: reading it taints the cell (the host is told).
    const foreign = metadata.source === "client";
    for (const key in metadata) {
      const v = metadata[key];
      if (foreign && key === "description") {
        defineProperty(handle, key, { get: function () { hostTaint(callableName); return v; }, enumerable: true });
      } else {
        defineProperty(handle, key, { value: v, enumerable: true });
      }
    }
    defineProperty(handle, "describe", { value: function describe() { return request("describe", { tool: callableName }); } });
    defineProperty(handle, "toJSON", { value: function toJSON() { if (foreign) hostTaint(callableName); return metadata; } });
    return freeze(handle);
  }
  function makeHandles(list) {
    const out = [];
    for (let i = 0; i < list.length; i++) out.push(makeHandle(list[i]));
    return freeze(out);
  }
  // Tool handles are made on first use: a turn may catalog a thousand tools while a cell
  // touches two, so installing only cheap lazy globals keeps every exec fast.
  let toolMetaJson = "[]";
  let toolMeta;          // parsed metadata, in catalog order (parsed on first use)
  const toolHandles = [];  // index -> handle, filled on demand
  let allHandles;
  function metaList() {
    if (toolMeta === undefined) toolMeta = parse(toolMetaJson);
    return toolMeta;
  }
  function handleAt(i) {
    let h = toolHandles[i];
    if (h === undefined) {
      h = makeHandle(metaList()[i]);
      toolHandles[i] = h;
    }
    return h;
  }
  const catalog = freeze({
    search: function search(query, options) {
      const limit = options !== null && typeof options === "object" ? options.limit : undefined;
      return request("search", { query: query === undefined ? null : safeString(query), limit: limit === undefined ? null : limit })
        .then(makeHandles);
    },
    all: function all() {
      if (allHandles === undefined) {
        const out = [];
        const n = metaList().length;
        for (let i = 0; i < n; i++) out.push(handleAt(i));
        allHandles = freeze(out);
      }
      return allHandles;
    },
  });

  function installTools(metaJson, namesJson, mcpJson, namespacesJson) {
    if (mcpJson !== undefined) installMcp(mcpJson);
    freeze(MCP);
    if (namespacesJson !== undefined) installNamespaces(namespacesJson);
    freeze(namespaces);
    toolMetaJson = metaJson;
    const names = namesJson === undefined ? metaList().map(function (m) { return m.callableName; }) : parse(namesJson);
    for (let i = 0; i < names.length; i++) {
      const name = names[i];
      const index = i;
      const settle = function (value) {
        defineProperty(g, name, { value: value, writable: true, configurable: true, enumerable: false });
      };
      defineProperty(g, name, {
        get: function () { const h = handleAt(index); settle(h); return h; },
        set: settle,
        configurable: true,
        enumerable: false,
      });
    }
  }

  // ---- the cell ---------------------------------------------------------------------------
  // Null prototype: model code polluting Object.prototype cannot change what the host reads.
  const cell = Object.create(null);
  cell.state = "idle";
  cell.syntax = false;
  cell.valueJson = undefined;
  cell.error = undefined;
  function start(source) {
    if (cell.state !== "idle") return;
    let fn;
    try {
      fn = new AsyncFunction(source);
    } catch (e) {
      cell.state = "failed";
      cell.error = describeError(e);
      cell.syntax = true;
      return;
    }
    cell.state = "running";
    let p;
    try { p = fn(); } catch (e) { finish(false, e); return; }
    // An async function always returns a native promise; the captured then() cannot be patched.
    call(promiseThen, p, function (v) { finish(true, v); }, function (e) { finish(false, e); });
  }
  function finish(ok, v) {
    if (cell.state !== "running") return;
    if (!ok) { cell.state = "failed"; cell.error = describeError(v); return; }
    try {
      cell.valueJson = toJsonText(v);
      cell.state = "completed";
    } catch (e) {
      cell.state = "unserializable";
      cell.error = "return value is not JSON-compatible: " + describeError(e);
    }
  }
  function status() {
    const failure = firstFailure();
    // Built by hand: JSON.stringify would consult a polluted Object.prototype.toJSON.
    return '{"state":"' + cell.state + '","syntax":' + (cell.syntax === true) +
      ',"hasValue":' + (cell.valueJson !== undefined) + ',"failure":' + (failure !== undefined) +
      ',"pending":' + call(mapSize, pending) + '}';
  }
  // Large strings are handed over raw, never re-encoded inside another JSON document.
  function value() { return cell.valueJson; }
  function error() {
    if (cell.state === "failed" || cell.state === "unserializable") return cell.error;
    return firstFailure();
  }

  // Tool Search's code bridge (seed 004): the guest of a tool_search_code body sees only
  // console.* and openclaw.tools.search/describe/call. Ids are Tool Search ids (the host maps them).
  function installToolSearch() {
    for (const name in globals) if (name !== "console") delete g[name];
    const tools = freeze({
      search: function search(query, options) {
        const limit = options !== null && typeof options === "object" ? options.limit : undefined;
        return request("search", { query: query === undefined ? null : safeString(query), limit: limit === undefined ? null : limit });
      },
      describe: function describe(id) { return request("describe", { tool: safeString(id) }); },
      call: function callTool(id, args) { return request("call", { tool: safeString(id), input: args === undefined ? {} : args }); },
    });
    defineProperty(g, "openclaw", { value: freeze({ tools: tools }), writable: false, configurable: false, enumerable: false });
  }

  defineProperty(g, "${GUEST_CONTROL}", {
    value: freeze({ start: start, settle: settle, status: status, value: value, error: error, installTools: installTools,
      noteRejection: noteRejection, noteHandled: noteHandled, describeError: describeError, installToolSearch: installToolSearch,
      seed: seed }),
    enumerable: false, writable: false, configurable: true,
  });
  // MCP servers live under MCP.<server> (installTools' third argument). Calls go through the
  // "call" op with a key no bare global can have ("mcp:<server>.<tool>", "mcp:<server>/<op>").
  // The virtual API files are served here, from guest memory: reading them is no bridge call.
  const MCP = Object.create(null);
  const apiFiles = new MapCtor();   // path -> { path, bytes, description, content }
  // Member names of MCP (server names) and of MCP.<server> (tool names) are written outside the
  // gateway: listing them (Object.keys/entries/getOwnPropertyNames, for-in, spread,
  // JSON.stringify, console.log) taints the cell, as reading a server's .d.ts does. Reaching a
  // member by the name one already knows does not, nor does a listing of the gateway's own
  // members alone ($api, resources, prompts: the last "own" keys of a server; an empty MCP).
  function listingTaints(target, source, own) {
    return new ProxyCtor(target, {
      ownKeys: function (t) {
        const keys = reflectOwnKeys(t);
        if (keys.length > own) hostTaint(source);
        return keys;
      },
    });
  }
  const mcpView = listingTaints(MCP, "MCP", 0);
  function mcpOp(server, op, input) {
    return request("call", { tool: "mcp:" + server + "/" + op, input: input === undefined ? {} : input });
  }
  function installMcp(mcpJson) {
    const spec = parse(mcpJson);
    for (let i = 0; i < spec.servers.length; i++) {
      const s = spec.servers[i];
      const ns = Object.create(null);
      for (let j = 0; j < s.tools.length; j++) {
        const key = "mcp:" + s.name + "." + s.tools[j];
        ns[s.tools[j]] = function (input) { return request("call", { tool: key, input: input === undefined ? {} : input }); };
      }
      const name = s.name;
      ns.$api = function $api(toolName, options) {
        const schema = options !== null && typeof options === "object" && options.schema === true;
        return mcpOp(name, "$api", { toolName: toolName === undefined ? null : safeString(toolName), schema: schema });
      };
      ns.resources = freeze({
        list: function list(input) { return mcpOp(name, "resources/list", input); },
        read: function read(input) { return mcpOp(name, "resources/read", input); },
      });
      ns.prompts = freeze({
        list: function list(input) { return mcpOp(name, "prompts/list", input); },
        get: function get(input) { return mcpOp(name, "prompts/get", input); },
      });
      MCP[name] = listingTaints(freeze(ns), "MCP." + name, 3);
    }
    for (let i = 0; i < spec.files.length; i++) call(mapSet, apiFiles, spec.files[i].path, freeze(spec.files[i]));
  }
  function quotedPath(p) { return stringify(p.length > 100 ? p.slice(0, 100) + "\u2026" : p); }
  function pathProblem(p, allowTrailingSlash) {
    if (p.charAt(0) === "/") return quotedPath(p) + ' is absolute; API paths are relative, like "mcp/index.d.ts"';
    if (p.indexOf("\\") >= 0) return quotedPath(p) + ' contains a backslash; API paths use "/"';
    const segments = (allowTrailingSlash && p.charAt(p.length - 1) === "/" ? p.slice(0, -1) : p).split("/");
    for (let i = 0; i < segments.length; i++) {
      if (segments[i] === "." || segments[i] === "..") return quotedPath(p) + ' has a "." or ".." segment; those are not allowed';
      if (segments[i] === "") return quotedPath(p) + " has an empty segment";
    }
    return undefined;
  }
  const API = freeze({
    list: function list(prefix) {
      if (prefix !== undefined && typeof prefix !== "string") return PromiseCtor.reject(new TypeErrorCtor("API.list: the prefix must be a string"));
      if (prefix) {
        const problem = pathProblem(prefix, true);
        if (problem) return PromiseCtor.reject(new ErrorCtor("API.list: " + problem));
      }
      const out = [];
      const it = call(mapValues, apiFiles);
      for (let e = call(mapIteratorNext, it); !e.done; e = call(mapIteratorNext, it)) {
        const f = e.value;
        if (!prefix || f.path.indexOf(prefix) === 0) out.push(freeze({ path: f.path, bytes: f.bytes, description: f.description }));
      }
      return PromiseCtor.resolve(freeze(out));
    },
    read: function read(path) {
      if (typeof path !== "string" || path === "") return PromiseCtor.reject(new TypeErrorCtor('API.read needs a path, like "mcp/index.d.ts"'));
      const problem = pathProblem(path, false);
      if (problem) return PromiseCtor.reject(new ErrorCtor("API.read: " + problem));
      const f = call(mapGet, apiFiles, path);
      if (!f) return PromiseCtor.reject(new ErrorCtor("API.read: no file " + quotedPath(path) + "; API.list() shows the files"));
      if (f.untrusted === true) hostTaint(f.path);
      return PromiseCtor.resolve(f.content);
    },
  });
  // Plugin namespaces (installTools' fourth argument): each is a direct global and namespaces.<Name>,
  // frozen, with a null prototype, so a method is only ever one the host declared. A call goes
  // through the "call" op keyed "ns:<Name>.<method>"; the host maps it to the plugin's tool.
  const namespaces = Object.create(null);
  function installNamespaces(namespacesJson) {
    const spec = parse(namespacesJson);
    const list = spec.namespaces;
    if (spec.file) call(mapSet, apiFiles, spec.file.path, freeze(spec.file));
    if (spec.swarm) installSwarm(spec.swarm);
    for (let i = 0; i < list.length; i++) {
      const name = list[i].name;
      const ns = Object.create(null);
      for (let j = 0; j < list[i].methods.length; j++) {
        const key = "ns:" + name + "." + list[i].methods[j];
        ns[list[i].methods[j]] = function (input) { return request("call", { tool: key, input: input === undefined ? {} : input }); };
      }
      namespaces[name] = freeze(ns);
      defineProperty(g, name, { value: namespaces[name], writable: true, configurable: true, enumerable: false });
    }
  }
  // Swarm (installTools' fourth argument, "swarm"; only when the turn's native sessions_spawn is
  // allowed): agents.run() launches sub-agents through that tool, at most "slots" at once (the rest
  // queue here, so a fan-out never overflows the bridge); a failed sub-agent is a value unless the
  // call passes { throwOnFailure: true }.
  // phase() and log() are trajectory records ("call" keyed "swarm:phase" / "swarm:log").
  function installSwarm(swarm) {
    const MAX_FAILURE_CHARS = 1000;
    if (swarm.file) call(mapSet, apiFiles, swarm.file.path, freeze(swarm.file));
    const waiting = new MapCtor();
    let active = 0, head = 0, tail = 0;
    function next() {
      active--;
      if (head === tail) return;
      const go = call(mapGet, waiting, head);
      call(mapDelete, waiting, head++);
      go();
    }
    function task(t) {
      if (typeof t === "string") return { prompt: t, wait: true };
      if (t === null || typeof t !== "object") return { prompt: safeString(t), wait: true };
      const out = { prompt: typeof t.prompt === "string" ? t.prompt : safeString(t.prompt), wait: true };
      const keys = ["label", "agentId", "model", "allow", "deny"];
      for (let i = 0; i < keys.length; i++) if (t[keys[i]] !== undefined) out[keys[i]] = t[keys[i]];
      return out;
    }
    function launch(t) {
      let input;
      try { input = task(t); } catch (e) { return PromiseCtor.resolve(freeze({ status: "failed", text: "", error: describeError(e) })); }
      return new PromiseCtor(function (resolve) {
        const go = function () {
          active++;
          call(promiseThen, request("call", { tool: swarm.spawn, input: input }),
            function (r) { next(); resolve(r); },
            function (e) {
              next();
              const failed = { status: "failed", text: "", error: describeError(e) };
              if (typeof input.label === "string") failed.label = input.label;
              resolve(freeze(failed));
            });
        };
        if (active < swarm.slots) go(); else call(mapSet, waiting, tail++, go);
      });
    }
    // { throwOnFailure: true }: the call still waits for every task (siblings are never cut off), then
    // rejects with the first failed task's error, in task order, as a plain Error of bounded length.
    function throwing(options) {
      if (options === undefined) return false;
      if (options === null || typeof options !== "object") throw new TypeErrorCtor("agents.run: options must be an object like { throwOnFailure: true }");
      for (const key in options) {
        if (key !== "throwOnFailure") throw new TypeErrorCtor("agents.run: unknown option " + stringify(safeString(key)) + "; the only option is throwOnFailure");
      }
      return options.throwOnFailure === true;
    }
    function failure(r, index) {
      const named = typeof r.label === "string" && r.label !== "" ? " (label " + stringify(r.label) + ")" : "";
      const who = index === undefined ? "the sub-agent" : "tasks[" + index + "]";
      const message = "agents.run: " + who + named + " failed: " + (typeof r.error === "string" ? r.error : "no error was given");
      return new ErrorCtor(message.length > MAX_FAILURE_CHARS ? call(stringSlice, message, 0, MAX_FAILURE_CHARS - 1) + "\u2026" : message);
    }
    function run(tasks, options) {
      let strict;
      try { strict = throwing(options); } catch (e) { return PromiseCtor.reject(e); }
      if (!isArray(tasks)) {
        const one = launch(tasks);
        return strict ? call(promiseThen, one, function (r) { if (r.status === "failed") throw failure(r); return r; }) : one;
      }
      const list = [];
      for (let i = 0; i < tasks.length; i++) list.push(launch(tasks[i]));
      const all = PromiseCtor.all(list);
      if (!strict) return all;
      return call(promiseThen, all, function (rs) {
        for (let i = 0; i < rs.length; i++) if (rs[i].status === "failed") throw failure(rs[i], i);
        return rs;
      });
    }
    const agents = freeze({ run: run });
    let phases = 0;
    function phase(name) {
      const named = safeString(name);
      swarmPhase = freeze({ id: ++phases, name: named });
      return request("call", { tool: "swarm:phase", input: { name: named } });
    }
    function log() {
      const values = [];
      for (let i = 0; i < arguments.length; i++) values.push(inspect(arguments[i], 0, []));
      return request("call", { tool: "swarm:log", input: { values: values } });
    }
    const swarmGlobals = { agents: agents, phase: phase, log: log };
    for (const name in swarmGlobals) {
      defineProperty(g, name, { value: swarmGlobals[name], writable: true, configurable: true, enumerable: false });
    }
  }
  const globals = { text: text, json: json, setTimeout: setTimeout, clearTimeout: clearTimeout,
    yield_control: yield_control, catalog: catalog, MCP: mcpView, namespaces: namespaces, API: API,
    console: console };
  for (const name in globals) {
    defineProperty(g, name, { value: globals[name], writable: true, configurable: true, enumerable: false });
  }
})(globalThis);
`;
