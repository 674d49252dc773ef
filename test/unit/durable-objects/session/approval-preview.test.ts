import { describe, expect, it } from "vitest";
import { approvalPreview } from "../../../../durable-objects/session/approval-broker";
import { NESTED_PREVIEW_BYTES } from "../../../../src/limits";
import { redactedPreview } from "../../../../src/observability";

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

describe("approvalPreview: the whole input when it fits", () => {
  const whole = (input: unknown) => JSON.stringify(input);
  it.each([
    ["a string longer than any shortening level", { to: "mallory", memo: "m".repeat(1500) + "END" }],
    ["a long key name", { ["k".repeat(600) + "_amount"]: 9000, to: "mallory" }],
    ["a list longer than any shortening level", { to: "mallory", ids: Array.from({ length: 200 }, (_, i) => i) }],
    ["nesting deeper than any shortening level", { a: { b: { c: { d: { e: { f: { to: "mallory" } } } } } } }],
    ["many keys", Object.fromEntries(Array.from({ length: 120 }, (_, i) => [`k${i}`, i]))],
    ["a bare string", "s".repeat(1900)],
  ])("%s is shown whole, exactly as its JSON", (_name, input) => {
    expect(bytes(whole(input))).toBeLessThanOrEqual(NESTED_PREVIEW_BYTES);
    expect(approvalPreview(input, NONE)).toBe(whole(input));
  });

  it("an input one byte over the bound is shortened, and says so; at the bound it is whole", () => {
    const overhead = bytes(whole({ memo: "" }));
    const fits = { memo: "x".repeat(NESTED_PREVIEW_BYTES - overhead) };
    expect(approvalPreview(fits, NONE)).toBe(whole(fits));
    const over = { memo: "x".repeat(NESTED_PREVIEW_BYTES - overhead + 1) };
    const preview = approvalPreview(over, NONE);
    expect(bytes(preview)).toBeLessThanOrEqual(NESTED_PREVIEW_BYTES);
    expect(preview).toMatch(/x…\[\d+ more characters\]"/);
  });

  it("redaction applies to a whole preview too: credential-named values and recognizable secrets are masked", () => {
    const token = "sk-ant-api03-" + "Q".repeat(60);
    const preview = approvalPreview({ apiKey: "plain-value", note: `use ${token}`, to: "mallory" }, NONE);
    expect(preview).not.toContain("plain-value");
    expect(preview).not.toContain("QQQQ");
    expect(preview).toContain('"apiKey":"***"');
    expect(preview).toContain('"to":"mallory"');
  });
});

describe("approvalPreview: characters that disguise text are shown escaped, in keys and values", () => {
  const DISGUISING: Array<[string, number]> = [
    ["right-to-left override", 0x202e],
    ["left-to-right embedding", 0x202a],
    ["right-to-left embedding", 0x202b],
    ["pop directional formatting", 0x202c],
    ["left-to-right override", 0x202d],
    ["left-to-right isolate", 0x2066],
    ["right-to-left isolate", 0x2067],
    ["first strong isolate", 0x2068],
    ["pop directional isolate", 0x2069],
    ["right-to-left mark", 0x200f],
    ["Arabic letter mark", 0x061c],
    ["zero-width space", 0x200b],
    ["zero-width non-joiner", 0x200c],
    ["zero-width joiner", 0x200d],
    ["word joiner", 0x2060],
    ["invisible separator", 0x2063],
    ["byte order mark", 0xfeff],
    ["soft hyphen", 0x00ad],
    ["Mongolian vowel separator", 0x180e],
    ["Hangul choseong filler", 0x115f],
    ["Hangul jungseong filler", 0x1160],
    ["Hangul filler", 0x3164],
    ["halfwidth Hangul filler", 0xffa0],
    ["combining grapheme joiner", 0x034f],
    ["Khmer inherent vowel", 0x17b4],
    ["variation selector-16", 0xfe0f],
    ["variation selector-17", 0xe0100],
    ["Mongolian variation selector", 0x180b],
    ["tag latin small a", 0xe0061],
    ["language tag", 0xe0001],
    ["cancel tag", 0xe007f],
    ["line separator", 0x2028],
    ["paragraph separator", 0x2029],
    ["delete", 0x007f],
    ["next line (C1)", 0x0085],
    ["control sequence introducer (C1)", 0x009b],
    ["braille pattern blank", 0x2800],
  ];
  /** The JSON escape of a code point: `\u202E`, or a surrogate pair's two escapes. */
  const escaped = (cp: number) =>
    String.fromCodePoint(cp)
      .split("")
      .map((unit) => "\\u" + unit.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0"))
      .join("");

  it.each(DISGUISING)("%s is escaped in a value and a key; the preview is still JSON of the same input", (_name, cp) => {
    const ch = String.fromCodePoint(cp);
    const input = { [`to${ch}`]: `mallory${ch}gro.elpmaxe`, amount: 10 };
    const preview = approvalPreview(input, NONE);
    expect(preview).not.toContain(ch);
    expect(preview).toBe(`{"to${escaped(cp)}":"mallory${escaped(cp)}gro.elpmaxe","amount":10}`);
    expect(JSON.parse(preview)).toEqual(input);
  });

  it("escapes survive shortening, and count against the bound", () => {
    const input = { to: "mallory\u202Eexe.txt", pad: "\u200B".repeat(3000) };
    const preview = approvalPreview(input, NONE);
    expect(bytes(preview)).toBeLessThanOrEqual(NESTED_PREVIEW_BYTES);
    expect(preview).toContain('"to":"mallory\\u202Eexe.txt"');
    expect(preview).not.toMatch(/[\u200B\u202E]/u);
    expect(preview).toMatch(/more characters\]/);
  });

  it("ordinary text, accents, CJK, right-to-left letters and emoji stay as they are; a literal backslash-u stays distinguishable", () => {
    const input = { note: "héllo 键 שלום 😀", literal: "\\u202E" };
    const preview = approvalPreview(input, NONE);
    expect(preview).toBe('{"note":"héllo 键 שלום 😀","literal":"\\\\u202E"}');
    expect(JSON.parse(preview)).toEqual(input);
  });

  it("a secret is still masked where disguising characters surround it", () => {
    const token = "sk-ant-api03-" + "Q".repeat(60);
    const preview = approvalPreview({ note: `\u2067${token}\u2069 \u202Eok` }, NONE);
    expect(preview).not.toContain("QQQQ");
    expect(preview).toContain("***");
    expect(preview).toContain("\\u2067");
    expect(preview).toContain("\\u202E");
  });
});

describe("redactedPreview (nested-call previews in the trajectory) escapes disguising characters too", () => {
  it("in keys and values, still JSON of the same value", () => {
    const value = { ["file\u202Etxt.exe"]: "a\u2066b\u200Bc", list: ["\u3164"] };
    const preview = redactedPreview(value, 1000);
    expect(preview).toBe('{"file\\u202Etxt.exe":"a\\u2066b\\u200Bc","list":["\\u3164"]}');
    expect(JSON.parse(preview)).toEqual(value);
  });
});
