import { describe, expect, it } from "vitest";
import { logRecord, MAX_DEBUG_SNAPSHOT_CHARS, parseDebugFlags, redactSecrets } from "../../../src/observability";
import { mark, recordsSince } from "../../support/log-capture";

describe("CODEMODE_DEBUG flags", () => {
  it("parses the seed's switches, keeps the stronger of two, and lists unknown flags", () => {
    expect(parseDebugFlags(undefined)).toMatchObject({ codeMode: false, payload: "off", transport: false, sse: "off", unknown: [] });
    expect(parseDebugFlags(" code-mode, payload=tools ")).toMatchObject({ codeMode: true, payload: "tools" });
    expect(parseDebugFlags("payload=full-redacted,payload=tools")).toMatchObject({ payload: "full-redacted" });
    expect(parseDebugFlags("transport sse=peek sse=events")).toMatchObject({ transport: true, sse: "peek" });
    expect(parseDebugFlags("code-mode,verbose,payload=all").unknown).toEqual(["verbose", "payload=all"]);
  });
});

describe("redactSecrets", () => {
  it("masks recognizable tokens, bearer credentials, credential-named values and registered secrets in full", () => {
    const text = [
      "key sk-ant-api03-abcdefghijklmnopqrstuvwx and sk-proj-ABCDEFGHIJKLMNOPQRST",
      "gh ghp_abcdefghijklmnopqrstuvwxyz0123 slack xoxb-1234567890-abcdef",
      "aws AKIAABCDEFGHIJKLMNOP jwt eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.SflKxwRJSMeKKF2QT4fw",
      'Authorization: Bearer abc.def-ghi_jkl {"apiKey": "plain-value-1", "password":"hunter22"} token=abcd1234',
      "my registered secret: tenant-token-xyz",
    ].join("\n");
    const out = redactSecrets(text, ["tenant-token-xyz", "short"]);
    for (const leak of [
      "abcdefghijklmnopqrstuvwx",
      "ABCDEFGHIJKLMNOPQRST",
      "ghp_abc",
      "xoxb-123",
      "AKIAABCD",
      "eyJzdWIi",
      "abc.def-ghi",
      "plain-value-1",
      "hunter22",
      "abcd1234",
      "tenant-token-xyz",
    ]) {
      expect(out, leak).not.toContain(leak);
    }
    expect(out).toContain('"apiKey": "***"');
    expect(redactSecrets("curl -H 'x: Bearer abcdefgh12345'")).toBe("curl -H 'x: Bearer ***'");
    expect(out).toContain("token=***");
  });

  it("keeps ordinary text, including words like token in prose", () => {
    const text = "Count tokens in a document; returns the token count for the model.";
    expect(redactSecrets(text)).toBe(text);
  });

  it("a debug snapshot is capped in the log record", () => {
    const m = mark();
    logRecord("debug", {
      event: "model_payload",
      payload: "x".repeat(MAX_DEBUG_SNAPSHOT_CHARS + 10),
      toolNames: Array.from({ length: 250 }, (_, i) => `t${i}`),
    });
    const [r] = recordsSince(m);
    expect(r!.payload).toHaveLength(MAX_DEBUG_SNAPSHOT_CHARS + "…[truncated]".length);
    expect(r!.toolNames).toHaveLength(201);
    expect(r!.toolNames[200]).toBe("… 50 more");
  });
});
