import { describe, expect, it } from "vitest";
import { isExpectedWorkerdLine } from "../support/workerd-log-filter.mjs";

// The console filter of the test runs (vitest.config.ts): only workerd's lines for failures the
// tests provoke on purpose go to a file; any other line, workerd's included, still prints.

const STACK = "stack: /x/workerd@28a3c60 /x/workerd@3ac7580 /x/workerd@3692230\n";

describe("isExpectedWorkerdLine", () => {
  it.each([
    [`exception = rust/worker/ffi.rs:110: disconnected: Connection refused (os error 111)\n${STACK}`],
    ["uncaught exception; source = Uncaught (in promise); stack = Error: Network connection lost.\n"],
    [`uncaught exception; exception = workerd/jsg/value.h:1535: disconnected: jsg.Error: Network connection lost.\n${STACK}`],
    [`exception = kj/async-io.c++:1697: disconnected: abortRead() has been called\n${STACK}`],
  ])("routes workerd's expected line away: %s", (line) => {
    expect(isExpectedWorkerdLine(line)).toBe(true);
    expect(isExpectedWorkerdLine(Buffer.from(line))).toBe(true);
  });

  it.each([
    // An uncaught rejection of our own code is never hidden, even beside a network error.
    [
      "uncaught exception; source = Uncaught (in promise); stack = Error: SQL failed (INSERT INTO turns): string or blob too big\n    at Sql.all (sql.ts:16:10)\n",
    ],
    ["uncaught exception; source = Uncaught (in promise); stack = Error: Network connection lost.\n    at McpClient.connect (mcp-client.ts:1:1)\n"],
    ["exception = rust/worker/ffi.rs:110: disconnected: TLS handshake failed\n"],
    ["*** Fatal uncaught kj::Exception: something broke\n"],
    // The reporter's own output that mentions one of the lines is not a workerd write.
    [" ✓ gateway test/e2e/mcp.test.ts > logs exception = rust/worker/ffi.rs:110: disconnected: Connection refused\n"],
  ])("still prints: %s", (line) => {
    expect(isExpectedWorkerdLine(line)).toBe(false);
  });
});
