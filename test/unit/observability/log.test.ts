import { afterEach, describe, expect, it, vi } from "vitest";
import type { CodeModeResult, CodeModeTelemetry } from "../../../src/code-mode";
import { cellFields, cellTrace, execLanguage } from "../../../src/observability";
import { consoleSink, describeError, logRecord, MAX_LOG_STRING, redact, setLogSink, type LogSink } from "../../../src/observability";

function capture(): { lines: Array<{ line: string; level: string }>; restore: () => void } {
  const lines: Array<{ line: string; level: string }> = [];
  const restore = setLogSink((line, level) => void lines.push({ line, level }));
  return { lines, restore };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("log records: redaction", () => {
  it("keeps only whitelisted fields of the record's kind, kind first", () => {
    const record = redact("request", {
      requestId: "r1",
      method: "POST",
      route: "/v1/sessions/:sessionId/turns",
      status: 201,
      durationMs: 3,
      // Not fields of a request record: dropped however they got there.
      ...({ body: '{"code":"secret"}', authorization: "Bearer tok-123456", path: "/v1/sessions/x?token=1" } as object),
    });
    expect(record).toEqual({ kind: "request", requestId: "r1", method: "POST", route: "/v1/sessions/:sessionId/turns", status: 201, durationMs: 3 });
    expect(Object.keys(record)[0]).toBe("kind");
  });

  it("drops values of the wrong type and numbers that are not finite", () => {
    const record = redact("cell", {
      tool: "exec",
      tenant: "t",
      sessionId: "s",
      turnId: { toString: () => "x" } as unknown as string,
      outcome: "completed",
      durationMs: Number.NaN,
      resultBytes: Number.POSITIVE_INFINITY,
      lost: "yes" as unknown as boolean,
      bridge: { search: 1, describe: "2" as unknown as number, call: 3, extra: 9 } as never,
    });
    expect(record).toEqual({
      kind: "cell",
      tool: "exec",
      tenant: "t",
      sessionId: "s",
      outcome: "completed",
      bridge: { search: 1, describe: 0, call: 3 },
    });
  });

  it("bounds strings", () => {
    const record = redact("host_error", { where: "x".repeat(MAX_LOG_STRING + 50), error: new Error("m".repeat(5000)) });
    expect(record.where).toBe(`${"x".repeat(MAX_LOG_STRING)}…`);
    expect((record.error as { message: string }).message).toHaveLength(MAX_LOG_STRING + 1);
  });

  it("an error becomes name and message: no stack, no own properties", () => {
    const error = Object.assign(new RangeError("out of room"), { token: "tok-abcdef", detail: { input: "payload" } });
    const line = JSON.stringify(redact("host_error", { where: "park.store", error }));
    expect(JSON.parse(line)).toEqual({ kind: "host_error", where: "park.store", error: { name: "RangeError", message: "out of room" } });
    expect(line).not.toContain("tok-abcdef");
    expect(line).not.toContain("payload");
    expect(line).not.toMatch(/at .*\.ts|stack/);
    expect(describeError("plain")).toEqual({ name: "string", message: "plain" });
    expect(describeError({ secret: 1 })).toEqual({ name: "object", message: "" });
  });
});

describe("log records: sinks", () => {
  it("the console sink writes one JSON line per record: console.log for records, console.error for host errors", () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => undefined);
    const error = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const restore = setLogSink(consoleSink);
    try {
      logRecord("image_prune", { pruned: 2 });
      logRecord("host_error", { where: "rate_limit", error: new Error("limiter down") });
    } finally {
      restore();
    }
    expect(log).toHaveBeenCalledTimes(1);
    expect(JSON.parse(log.mock.calls[0]![0] as string)).toEqual({ kind: "image_prune", pruned: 2 });
    expect(error).toHaveBeenCalledTimes(1);
    expect(JSON.parse(error.mock.calls[0]![0] as string)).toEqual({
      kind: "host_error",
      where: "rate_limit",
      error: { name: "Error", message: "limiter down" },
    });
  });

  it("setLogSink returns a restore; a throwing sink never breaks the caller", () => {
    const outer = capture();
    const throwing: LogSink = () => {
      throw new Error("sink down");
    };
    const restore = setLogSink(throwing);
    expect(() => logRecord("image_prune", { pruned: 1 })).not.toThrow();
    restore();
    logRecord("image_prune", { pruned: 3 });
    outer.restore();
    expect(outer.lines).toEqual([{ line: '{"kind":"image_prune","pruned":3}', level: "info" }]);
  });
});

describe("cell records", () => {
  const telemetry = (call: number): CodeModeTelemetry => ({
    catalogSize: 1,
    catalogSources: { openclaw: 1, mcp: 0, client: 0 },
    counters: { search: 2, describe: 1, call },
    counterScope: "scope",
    controlTools: ["exec", "wait"],
  });
  const turn = { tenantId: "t", sessionId: "s", turnId: "u" };

  it("counts only the bridge calls the cell made (telemetry totals minus those at its start)", () => {
    const trace = cellTrace("exec", "req", "typescript");
    trace.before = { search: 2, describe: 0, call: 4 };
    trace.ranAt = trace.arrivedAt;
    const result: CodeModeResult = { status: "completed", value: "x", telemetry: telemetry(7) };
    const fields = cellFields(turn, trace, result);
    expect(fields).toMatchObject({
      tool: "exec",
      requestId: "req",
      outcome: "completed",
      bridge: { search: 0, describe: 1, call: 3 },
      language: "typescript",
      queuedMs: 0,
    });
    expect(fields.resultBytes).toBe(new TextEncoder().encode(JSON.stringify(result)).length);
    expect(JSON.stringify(redact("cell", fields))).not.toContain('"x"');
  });

  it("a waiting result names its run, reason, pending client calls and snapshot size; a failure its code", () => {
    const trace = cellTrace("wait", "req");
    trace.runId = "cm_old";
    const waiting: CodeModeResult = {
      status: "waiting",
      runId: "cm_new",
      reason: "pending_tools",
      pendingToolCalls: [{ callId: "c1", tool: "ask", input: { q: "private question" } }],
      telemetry: telemetry(1),
    };
    const parked = cellFields(turn, trace, waiting, { snapshotBytes: 11_000 });
    expect(parked).toMatchObject({ outcome: "waiting", runId: "cm_new", reason: "pending_tools", pendingToolCalls: 1, snapshotBytes: 11_000 });
    expect(JSON.stringify(redact("cell", parked))).not.toContain("private question");
    const failed = cellFields(turn, trace, { status: "failed", error: "secret message", code: "timeout", telemetry: telemetry(1) });
    expect(failed).toMatchObject({ outcome: "failed", errorCode: "timeout", runId: "cm_old" });
    expect(JSON.stringify(redact("cell", failed))).not.toContain("secret message");
  });

  it("the exec language is the one asked for, the turn's default when none is, and nothing for garbage", () => {
    expect(execLanguage({ code: "1" }, "javascript")).toBe("javascript");
    expect(execLanguage({ code: "1", language: "typescript" }, "javascript")).toBe("typescript");
    expect(execLanguage({ code: "1", language: "<script>" }, "javascript")).toBeUndefined();
    expect(execLanguage(null, "typescript")).toBe("typescript");
  });
});
