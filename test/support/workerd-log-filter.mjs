// workerd prints some lines of its own that tests provoke on purpose and the Worker handles: a
// fetch to a closed port (an unreachable MCP server) logs the refused connection and an "uncaught"
// Network connection lost even when the Worker catches the failed fetch, and a cancelled request
// body logs abortRead(). The Workers vitest plugin writes workerd's lines with
// `process.stdout.write` (its handleStructuredLogs: error/warn levels to stderr, these arrive at
// info level, so to stdout). This routes exactly those lines to a file
// (.wrangler/test-logs/workerd-expected.log, rewritten each run) so a green run is quiet; every
// other workerd line, and everything else, still prints.
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";

/** The workerd lines a green run produces by design (one chunk: the message and its `stack:` line). */
export const EXPECTED_WORKERD_LINES = [
  /^exception = rust\/worker\/ffi\.rs:\d+: disconnected: Connection refused \(os error \d+\)/,
  /^uncaught exception; source = Uncaught \(in promise\); stack = Error: Network connection lost\.\n?$/,
  /^uncaught exception; exception = workerd\/jsg\/value\.h:\d+: disconnected: jsg\.Error: Network connection lost\./,
  /^exception = kj\/async-io\.c\+\+:\d+: disconnected: abortRead\(\) has been called/,
];

/** Is `chunk` (one write of the plugin: a whole workerd message) one of the expected lines? */
export function isExpectedWorkerdLine(chunk) {
  const text = typeof chunk === "string" ? chunk : Buffer.isBuffer(chunk) || chunk instanceof Uint8Array ? Buffer.from(chunk).toString("utf8") : "";
  return EXPECTED_WORKERD_LINES.some((re) => re.test(text));
}

const INSTALLED = Symbol.for("codemode.workerdLogFilter");

/** Wraps stdout and stderr once per process; `file` receives the routed lines. */
export function routeExpectedWorkerdLines(file = resolve(".wrangler/test-logs/workerd-expected.log")) {
  if (globalThis[INSTALLED]) return;
  globalThis[INSTALLED] = true;
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `# workerd lines the tests provoke on purpose, routed here from the console (test/support/workerd-log-filter.mjs)\n`);
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream);
    stream.write = (chunk, ...rest) => {
      if (!isExpectedWorkerdLine(chunk)) return write(chunk, ...rest);
      appendFileSync(file, typeof chunk === "string" ? chunk : Buffer.from(chunk));
      const callback = rest.find((arg) => typeof arg === "function");
      if (callback) queueMicrotask(() => callback());
      return true;
    };
  }
}
