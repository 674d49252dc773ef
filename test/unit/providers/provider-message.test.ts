import { describe, expect, it } from "vitest";
import { MAX_PROVIDER_MESSAGE_CHARS } from "../../../src/limits";
import { providerMessage } from "../../../src/providers/provider-message";

const MAX = MAX_PROVIDER_MESSAGE_CHARS;

describe("providerMessage", () => {
  it("short text is kept as it is", () => {
    expect(providerMessage("Rate limit reached for requests", {})).toBe("Rate limit reached for requests");
    expect(providerMessage("x".repeat(MAX), {})).toBe("x".repeat(MAX));
  });

  it("longer text keeps MAX characters and says how many more there were", () => {
    expect(MAX).toBe(1_000);
    expect(providerMessage("x".repeat(MAX + 1), {})).toBe(`${"x".repeat(MAX)}…[1 more characters]`);
    expect(providerMessage("a".repeat(100_000), {})).toBe(`${"a".repeat(MAX)}…[99000 more characters]`);
  });

  it("never splits a surrogate pair at the cut", () => {
    const text = "x".repeat(MAX - 1) + "😀" + "tail";
    const out = providerMessage(text, {});
    expect(out).toBe(`${"x".repeat(MAX - 1)}…[6 more characters]`);
    expect(out).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
  });

  it("masks registered secrets, recognizable tokens and configured patterns", () => {
    const text = "key sk-proj-AbCdEf0123456789xyz, token gateway-token-0123456789, ref ACME-123456";
    expect(providerMessage(text, { secrets: ["gateway-token-0123456789"], patterns: [/ACME-\d{6}/g] })).toBe("key ***, token ***, ref ***");
  });

  it("masks before it cuts: a secret across the cut leaves no part of itself", () => {
    const secret = "gateway-token-0123456789";
    const text = "x".repeat(MAX - 5) + secret + "y".repeat(50);
    const out = providerMessage(text, { secrets: [secret] });
    expect(out).toBe(`${"x".repeat(MAX - 5)}***${"y".repeat(2)}…[48 more characters]`);
    expect(out).not.toContain("gatew");
  });
});
