import { describe, expect, it } from "vitest";
import { approvalPreview } from "../../durable-objects/session/approval-broker";
import { NESTED_PREVIEW_BYTES } from "../../src/limits";

const NONE = { secrets: [], patterns: [] };
const bytes = (s: string) => new TextEncoder().encode(s).length;

describe("approvalPreview: what the operator sees of a call to approve", () => {
  it("a padded field cannot push a later key out of view: strings shorten evenly until every key fits", () => {
    const value: Record<string, string> = {};
    for (let i = 0; i < 12; i++) value[`f${i}`] = "x".repeat(300);
    const preview = approvalPreview({ value, amount: 9000, to: "mallory" }, NONE);
    expect(bytes(preview)).toBeLessThanOrEqual(NESTED_PREVIEW_BYTES);
    expect(preview).not.toMatch(/bytes omitted\]$/);
    expect(preview).toContain('"amount":9000');
    expect(preview).toContain('"to":"mallory"');
    for (let i = 0; i < 12; i++) expect(preview).toContain(`"f${i}"`);
  });

  it("long key names are shortened too, each cut saying how much is left out", () => {
    const input: Record<string, string> = {};
    for (let i = 0; i < 30; i++) input[`${"k".repeat(120)}${i}`] = "v";
    input.to = "mallory";
    const preview = approvalPreview(input, NONE);
    expect(bytes(preview)).toBeLessThanOrEqual(NESTED_PREVIEW_BYTES);
    expect(preview).toContain('"to":"mallory"');
    expect(preview).toMatch(/k+…\[\d+ more characters\]/);
  });

  it("past the last level, keys are dropped with an explicit count, never silently", () => {
    const input: Record<string, number> = {};
    for (let i = 0; i < 400; i++) input[`key_${"z".repeat(40)}_${i}`] = i;
    const preview = approvalPreview(input, NONE);
    expect(bytes(preview)).toBeLessThanOrEqual(NESTED_PREVIEW_BYTES);
    expect(preview).toMatch(/"…":"\d+ more keys"/);
    const shown = Object.keys(JSON.parse(preview)).filter((k) => k !== "…").length;
    expect(shown + Number(/(\d+) more keys/.exec(preview)![1])).toBe(400);
  });

  it("deep padding cannot hide a key either: nesting is shortened too, down to the top-level keys", () => {
    const value: Record<string, unknown> = {};
    for (let i = 0; i < 9; i++) {
      const o: Record<string, Record<string, number>> = {};
      for (let j = 0; j < 10; j++) {
        o["b" + j] = {};
        for (let k = 0; k < 10; k++) o["b" + j]!["c" + k] = 1;
      }
      value["p" + i] = o;
    }
    value.recipient = "attacker@evil.example";
    const preview = approvalPreview(value, NONE);
    expect(bytes(preview)).toBeLessThanOrEqual(NESTED_PREVIEW_BYTES);
    expect(preview).not.toMatch(/bytes omitted\]$/);
    expect(preview).toContain('"recipient"');
  });

  it("at worst, the top-level keys with their values elided, and a count of the rest; never a silent cut", () => {
    const input: Record<string, unknown> = {};
    for (let i = 0; i < 200; i++) input["键".repeat(60) + i] = { deep: { deeper: "x".repeat(100) } };
    const preview = approvalPreview(input, NONE);
    expect(bytes(preview)).toBeLessThanOrEqual(NESTED_PREVIEW_BYTES);
    expect(preview).not.toMatch(/bytes omitted\]$/);
    expect(preview).toMatch(/"…":"184 more keys"/);
  });

  it("keys of control characters (6 bytes each as JSON) cannot overflow the last level either", () => {
    const input: Record<string, unknown> = {};
    for (let i = 0; i < 15; i++) input[String.fromCharCode(1 + i) + "\u0001".repeat(99)] = "\u0001".repeat(100);
    input.to = "attacker@example.com";
    input.amount = 1000000;
    const preview = approvalPreview(input, NONE);
    expect(bytes(preview)).toBeLessThanOrEqual(NESTED_PREVIEW_BYTES);
    expect(preview).not.toMatch(/bytes omitted\]$/);
    expect(preview).toMatch(/more keys/);
  });

  it("names that collide once cut both stay, numbered; an own __proto__ key stays visible", () => {
    const input = JSON.parse(`{"__proto__":"hidden?","${"a".repeat(300)}1":"first","${"a".repeat(300)}2":"second","pad":"${"p".repeat(3000)}"}`);
    const preview = approvalPreview(input, NONE);
    expect(preview).toContain('"__proto__":"hidden?"');
    expect(preview).toContain('"first"');
    expect(preview).toContain('"second"');
    expect(preview).toMatch(/ #2"/);
  });

  it("a secret is masked before any cut, in values and in key names", () => {
    const token = "sk-ant-api03-" + "Q".repeat(60);
    const preview = approvalPreview({ [token]: "x".repeat(4000), note: `use ${token} please`, pad: "y".repeat(4000) }, { secrets: [], patterns: [] });
    expect(preview).not.toContain("QQQQ");
    expect(preview).toContain("***");
  });
});
