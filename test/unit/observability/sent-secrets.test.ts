import { describe, expect, it } from "vitest";
import { maskSentSecrets, maskSentSecretsIn, secretForms, SentSecretStream, sentSecretList } from "../../../src/observability/sent-secrets";

describe("secretForms: what a peer may echo of a sent value", () => {
  it("a bearer header: the whole value and its token, never the scheme word", () => {
    expect(secretForms("Bearer abcdef123456")).toEqual(["Bearer abcdef123456", "abcdef123456"]);
  });

  it("a Basic header: also the decoded user:password and the password", () => {
    expect(secretForms(`Basic ${btoa("someone:hunter2-long")}`)).toEqual(
      expect.arrayContaining(["someone:hunter2-long", "hunter2-long", btoa("someone:hunter2-long")]),
    );
  });

  it("values under 8 characters are not secrets (they would mask words)", () => {
    expect(secretForms("short")).toEqual([]);
    expect(sentSecretList(["Bearer abc", "a-longer-token"])).toEqual(["a-longer-token", "Bearer abc"]);
  });
});

describe("maskSentSecretsIn: a JSON value", () => {
  const secrets = sentSecretList(["Bearer tok-123456789"]);

  it("masks every string and every key, keeps everything else", () => {
    const value = { a: ["x Bearer tok-123456789 y", 3, null], "tok-123456789": { deep: "tok-123456789" }, keep: "fine" };
    expect(maskSentSecretsIn(value, secrets)).toEqual({ a: ["x *** y", 3, null], "***": { deep: "***" }, keep: "fine" });
  });

  it("a value without a secret comes back as the same reference", () => {
    const value = { a: "nothing here" };
    expect(maskSentSecretsIn(value, secrets)).toBe(value);
  });

  it("a secret with JSON-special characters is found too", () => {
    const odd = sentSecretList(['quo"te\\secret']);
    expect(maskSentSecretsIn({ t: 'say quo"te\\secret' }, odd)).toEqual({ t: "say ***" });
  });
});

describe("SentSecretStream: a secret split across deltas never leaves in pieces", () => {
  const run = (secrets: string[], deltas: string[]) => {
    const stream = new SentSecretStream(sentSecretList(secrets));
    const shown = deltas.map((d) => stream.push(d));
    shown.push(stream.flush());
    return shown;
  };

  it("holds back only what could still become a secret", () => {
    const shown = run(["sk-secret-value"], ["key: sk-", "secret-", "value, then sk-s", "omething else"]);
    expect(shown.join("")).toBe("key: ***, then sk-something else");
    for (const piece of shown) expect(piece).not.toMatch(/secret-value/);
    expect(shown[0]).toBe("key: ");
  });

  it("a held tail that never completes is shown at the end", () => {
    expect(run(["sk-secret-value"], ["ends with sk-secret-va"]).join("")).toBe("ends with sk-secret-va");
  });

  it("one character at a time", () => {
    const text = "a sk-secret-value b sk-secret-value";
    expect(run(["sk-secret-value"], [...text]).join("")).toBe("a *** b ***");
  });

  it("no secrets: the text passes unchanged", () => {
    expect(maskSentSecrets("anything", [])).toBe("anything");
    expect(run([], ["a", "b"])).toEqual(["a", "b", ""]);
  });
});
