import { describe, expect, it } from "vitest";
import {
  ERROR_TRUNCATED_SUFFIX,
  OUTPUT_ENVELOPE_OVERHEAD_BYTES,
  OutputBudget,
  type OutputBudgetState,
  TRUNCATION_GUIDANCE,
  type TruncationMarker,
  utf8Prefix,
} from "../../../src/code-mode";
import { jsonStringBytes, jsonStringPrefixLength, utf8ByteLength } from "../../../src/code-mode";
import type { CodeModeOutput } from "../../../src/code-mode";

const enc = new TextEncoder();
const bytes = (s: string): number => enc.encode(s).length;
const ser = (v: unknown): number => bytes(JSON.stringify(v));

/** Deterministic PRNG (mulberry32) so failures are reproducible. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const POOL = ["a", "b", " ", "é", "中", "😀", '"', "\\", "\n", "\u0001", "\u2028", "\ud83d" /* lone */];
function randString(r: () => number, maxLen: number): string {
  const len = Math.floor(r() * (maxLen + 1));
  let s = "";
  for (let i = 0; i < len; i++) s += POOL[Math.floor(r() * POOL.length)];
  return s;
}
function randLen(r: () => number): number {
  return [3, 20, 200, 2000][Math.floor(r() * 4)] as number;
}
function randValue(r: () => number): unknown {
  const k = r();
  if (k < 0.4) return randString(r, randLen(r));
  if (k < 0.6) return Math.floor(r() * 1e9);
  if (k < 0.9) return Array.from({ length: Math.floor(r() * 30) }, () => randString(r, 20));
  return { list: [randString(r, randLen(r)), 1, null, true] };
}

function isMarker(v: unknown): v is TruncationMarker {
  if (!v || typeof v !== "object") return false;
  const m = v as Record<string, unknown>;
  return (
    m.truncated === true &&
    typeof m.prefix === "string" &&
    typeof m.omittedBytes === "number" &&
    m.guidance === TRUNCATION_GUIDANCE &&
    Object.keys(m).length === 4
  );
}

/** The prefix must be a code-point-safe prefix of `original` and omittedBytes exact. */
function checkMarkerDescribes(m: TruncationMarker, original: string): void {
  expect(original.startsWith(m.prefix)).toBe(true);
  const last = m.prefix.charCodeAt(m.prefix.length - 1);
  const next = original.charCodeAt(m.prefix.length);
  expect(last >= 0xd800 && last <= 0xdbff && next >= 0xdc00 && next <= 0xdfff).toBe(false);
  expect(m.omittedBytes).toBe(bytes(original) - bytes(m.prefix));
  expect(m.omittedBytes).toBeGreaterThan(0);
}

/** Check an output projection against the original items; returns its serialized size. */
function checkOutput(output: CodeModeOutput[] | undefined, items: CodeModeOutput[]): number {
  if (items.length === 0) {
    expect(output).toBeUndefined();
    return 0;
  }
  expect(output).toBeDefined();
  const out = output as CodeModeOutput[];
  const last = out[out.length - 1] as CodeModeOutput;
  if (last.type === "json" && isMarker(last.value)) {
    const k = out.length - 1;
    expect(out.slice(0, k)).toEqual(items.slice(0, k));
    expect(k).toBeLessThan(items.length);
    checkMarkerDescribes(last.value, JSON.stringify(items.slice(k)));
  } else {
    expect(out).toEqual(items);
  }
  return ser(out);
}

function checkBound(total: number, max: number): void {
  expect(total).toBeLessThanOrEqual(max + OUTPUT_ENVELOPE_OVERHEAD_BYTES);
  if (max >= 1024) expect(total).toBeLessThanOrEqual(max);
}

function roundTrip(b: OutputBudget): OutputBudget {
  return OutputBudget.fromJSON(JSON.parse(JSON.stringify(b.toJSON())) as OutputBudgetState);
}

describe("utf8 helpers", () => {
  it("utf8Prefix never splits a character and is maximal", () => {
    expect(utf8Prefix("é", 1)).toBe("");
    expect(utf8Prefix("é", 2)).toBe("é");
    expect(utf8Prefix("中中", 5)).toBe("中");
    expect(utf8Prefix("a😀", 4)).toBe("a");
    expect(utf8Prefix("a😀", 5)).toBe("a😀");
    const r = rng(1);
    for (let i = 0; i < 500; i++) {
      const s = randString(r, 40);
      const max = Math.floor(r() * 80);
      const p = utf8Prefix(s, max);
      expect(s.startsWith(p)).toBe(true);
      expect(bytes(p)).toBeLessThanOrEqual(max);
      const c = p.charCodeAt(p.length - 1);
      const n = s.charCodeAt(p.length);
      expect(c >= 0xd800 && c <= 0xdbff && n >= 0xdc00 && n <= 0xdfff).toBe(false);
      if (p.length < s.length) {
        const step = s.codePointAt(p.length)! > 0xffff ? 2 : 1;
        expect(bytes(s.slice(0, p.length + step))).toBeGreaterThan(max);
      }
    }
  });

  it("byte counts match TextEncoder and JSON.stringify", () => {
    const r = rng(2);
    for (let i = 0; i < 500; i++) {
      const s = randString(r, 60);
      expect(utf8ByteLength(s)).toBe(bytes(s));
      expect(jsonStringBytes(s)).toBe(ser(s));
      const max = Math.floor(r() * 100);
      const len = jsonStringPrefixLength(s, max);
      expect(ser(s.slice(0, len)) - 2).toBeLessThanOrEqual(max);
    }
  });
});

describe("OutputBudget projection", () => {
  it("passes everything through under budget, in call order", () => {
    const b = new OutputBudget(10_000);
    const expected: CodeModeOutput[] = [];
    for (let i = 0; i < 50; i++) {
      if (i % 3 === 0) {
        b.pushJson(JSON.stringify({ i, xs: [i, "中"] }));
        expected.push({ type: "json", value: { i, xs: [i, "中"] } });
      } else {
        b.pushText(`line ${i} 😀`);
        expected.push({ type: "text", text: `line ${i} 😀` });
      }
    }
    expect(b.completed(JSON.stringify({ ok: true }))).toEqual({ value: { ok: true }, output: expected });
    expect(b.failed("boom")).toEqual({ error: "boom", output: expected });
    expect(b.pending()).toEqual(expected);
  });

  it("omits output when there are no items; undefined value becomes null", () => {
    const b = new OutputBudget(100);
    const c = b.completed(undefined);
    expect(c).toEqual({ value: null });
    expect("output" in c).toBe(false);
    expect("output" in b.failed("x")).toBe(false);
    expect(b.pending()).toBeUndefined();
  });

  it("treats unparseable JSON as a string value and never throws on odd input", () => {
    const b = new OutputBudget(10_000);
    b.pushJson("not json{");
    b.pushJson(undefined as unknown as string);
    b.pushText(123 as unknown as string);
    b.pushJson('"\ud800"'); // raw lone surrogate inside a JSON string
    expect(b.completed("nope}")).toEqual({
      value: "nope}",
      output: [
        { type: "json", value: "not json{" },
        { type: "json", value: null },
        { type: "text", text: "123" },
        { type: "json", value: "\ud800" },
      ],
    });
    expect(JSON.stringify(b.toJSON())).toContain("\\\\ud800"); // normalized to an escape
  });

  it("bounds an oversized value with an exact UTF-8 prefix and omittedBytes", () => {
    const max = 1000;
    const json = JSON.stringify("a".repeat(5000)); // 5002 bytes
    const r = new OutputBudget(max).completed(json);
    expect(isMarker(r.value)).toBe(true);
    const m = r.value as TruncationMarker;
    const fixed = ser({ truncated: true, prefix: "", omittedBytes: 5002, guidance: TRUNCATION_GUIDANCE });
    // the leading quote escapes to 2 bytes, each 'a' to 1: the marker fills the budget exactly
    expect(m.prefix).toBe('"' + "a".repeat(max - fixed - 2));
    expect(m.omittedBytes).toBe(5002 - bytes(m.prefix));
    expect(ser(m)).toBe(max);
    expect(m.guidance).toMatch(/paginate/);
    expect("error" in r).toBe(false);
  });

  it("cuts multi-byte values only at character boundaries, maximally", () => {
    for (const ch of ["é", "中", "😀"]) {
      const json = JSON.stringify(ch.repeat(2000));
      for (let max = 300; max < 420; max++) {
        const m = new OutputBudget(max).completed(json).value as TruncationMarker;
        expect(isMarker(m)).toBe(true);
        checkMarkerDescribes(m, json);
        expect(ser(m)).toBeLessThanOrEqual(max);
        const fixed = ser({ truncated: true, prefix: "", omittedBytes: bytes(json), guidance: TRUNCATION_GUIDANCE });
        expect(ser(m.prefix + ch) - 2).toBeGreaterThan(max - fixed); // one more char would not fit
      }
    }
  });

  it("truncates oversized errors keeping the leading cause; still a failure", () => {
    const cause = "TypeError: cannot read properties of undefined (reading 'x')";
    const err = `${cause}\n${"    at frame (中😀 file.js:1:1)\n".repeat(500)}`;
    for (const max of [0, 50, 200, 1000, 4000]) {
      const r = new OutputBudget(max).failed(err);
      expect("value" in r).toBe(false);
      expect(r.error.endsWith("[error truncated]")).toBe(true);
      expect(r.error.startsWith(cause.slice(0, 40))).toBe(true);
      expect(err.startsWith(r.error.slice(0, -ERROR_TRUNCATED_SUFFIX.length))).toBe(true);
      checkBound(ser(r.error), max);
      if (max >= 200) expect(r.error.startsWith(cause)).toBe(true);
    }
    const small = new OutputBudget(1000).failed("short failure");
    expect(small.error).toBe("short failure");
  });

  it("error keeps at least half the budget when output is large", () => {
    const b = new OutputBudget(2000);
    for (let i = 0; i < 100; i++) b.pushText("x".repeat(50));
    const r = b.failed("E".repeat(5000));
    expect(ser(r.error)).toBeGreaterThan(900);
    expect(ser(r.error)).toBeLessThanOrEqual(1000);
    expect(ser(r.output)).toBeLessThanOrEqual(1000);
  });

  describe("reservation", () => {
    it("small output: value may use the rest of the budget", () => {
      const b = new OutputBudget(1000);
      b.pushText("hello"); // output array: [{"type":"text","text":"hello"}] = 32 bytes
      expect(ser(b.pending())).toBe(32);
      const fits = JSON.stringify("v".repeat(1000 - 32 - 2));
      expect(b.completed(fits).value).toBe(JSON.parse(fits));
      const tooBig = JSON.stringify("v".repeat(1000 - 32 - 1));
      const r = b.completed(tooBig);
      expect(isMarker(r.value)).toBe(true);
      expect(r.output).toEqual([{ type: "text", text: "hello" }]);
    });

    it("small value: keeps full size, output gets the rest", () => {
      const b = new OutputBudget(1000);
      b.pushText("x".repeat(1000 - 27)); // exactly 1000-byte output array: fits pending()
      expect(ser(b.pending())).toBe(1000);
      expect(b.pending()).toEqual([{ type: "text", text: "x".repeat(973) }]);
      const r = b.completed(undefined); // null reserves 4 bytes
      expect(r.value).toBeNull();
      const out = r.output as CodeModeOutput[];
      expect(out).toHaveLength(1);
      expect(isMarker((out[0] as { value: unknown }).value)).toBe(true);
      expect(ser(out)).toBeLessThanOrEqual(996);
      const c = new OutputBudget(1000);
      c.pushText("x".repeat(1000 - 27 - 4));
      expect(c.completed(undefined)).toEqual({ value: null, output: [{ type: "text", text: "x".repeat(969) }] });
    });

    it("both large: each gets half", () => {
      const b = new OutputBudget(2000);
      for (let i = 0; i < 60; i++) b.pushText(`item ${i} ${"y".repeat(20)}`);
      const r = b.completed(JSON.stringify("z".repeat(3000)));
      expect(ser(r.output)).toBeLessThanOrEqual(1000);
      expect(ser(r.output)).toBeGreaterThan(950);
      expect(ser(r.value)).toBeLessThanOrEqual(1000);
      expect(ser(r.value)).toBeGreaterThan(990);
      expect((r.output as CodeModeOutput[]).length).toBeGreaterThan(10);
    });
  });

  it("represents a single huge text item by the marker without storing it", () => {
    const b = new OutputBudget(1000);
    b.pushText("x".repeat(100_000));
    b.pushText("after");
    expect(JSON.stringify(b.toJSON()).length).toBeLessThan(2 * 1000 + 300);
    const r = b.completed("1");
    expect(r.value).toBe(1);
    const out = r.output as CodeModeOutput[];
    expect(out).toHaveLength(1);
    const m = (out[0] as { value: TruncationMarker }).value;
    expect(m.prefix.startsWith('[{"type":"text","text":"xxx')).toBe(true);
    checkMarkerDescribes(
      m,
      JSON.stringify([
        { type: "text", text: "x".repeat(100_000) },
        { type: "text", text: "after" },
      ]),
    );
    checkBound(ser(out) + 1, 1000);
  });

  it("keeps a flood of 1,000,000 tiny texts bounded in memory and exact in accounting", () => {
    const max = 4096;
    const b = new OutputBudget(max);
    for (let i = 0; i < 1_000_000; i++) b.pushText("x");
    // stored raw content <= 2 * max (kept items + omitted prefix); JSON escaping of quotes inflates it
    expect(JSON.stringify(b.toJSON()).length).toBeLessThan(3 * max);
    const r = b.completed(undefined);
    const out = r.output as CodeModeOutput[];
    const k = out.length - 1;
    expect(k).toBeGreaterThan(100);
    for (let i = 0; i < k; i++) expect(out[i]).toEqual({ type: "text", text: "x" });
    const m = (out[k] as { value: TruncationMarker }).value;
    expect(isMarker(m)).toBe(true);
    const omitted = 1_000_000 - k; // each item {"type":"text","text":"x"} is 26 bytes
    expect(m.omittedBytes).toBe(2 + 26 * omitted + (omitted - 1) - bytes(m.prefix));
    expect(("[" + '{"type":"text","text":"x"},'.repeat(400)).startsWith(m.prefix)).toBe(true);
    checkBound(ser(out) + ser(r.value), max);
    const p = b.pending() as CodeModeOutput[];
    expect(ser(p)).toBeLessThanOrEqual(max);
  }, 60_000);

  it("shares one budget across waits through toJSON/fromJSON", () => {
    const max = 1200;
    const wait1 = Array.from({ length: 20 }, (_, i) => `wait one line ${i} é中😀`);
    const wait2 = Array.from({ length: 20 }, (_, i) => `wait two line ${i} é中😀`);
    const first = new OutputBudget(max);
    const twin = new OutputBudget(max);
    for (const t of wait1) {
      first.pushText(t);
      twin.pushText(t);
    }
    expect(first.pending()).toEqual(wait1.map((text) => ({ type: "text", text })));
    const resumed = roundTrip(first);
    expect(resumed.toJSON()).toEqual(first.toJSON());
    for (const t of wait2) {
      resumed.pushText(t);
      twin.pushText(t);
    }
    const r = roundTrip(resumed).completed(JSON.stringify("done"));
    expect(r).toEqual(twin.completed(JSON.stringify("done")));
    const out = r.output as CodeModeOutput[];
    expect(isMarker((out[out.length - 1] as { value: unknown }).value)).toBe(true); // budget not reset
    expect(out.length).toBeGreaterThan(10); // leading items of wait 1 are kept (checked below)
    checkOutput(
      r.output,
      [...wait1, ...wait2].map((text) => ({ type: "text", text })),
    );
    // A fresh budget holding only the second wait's output would not truncate.
    const fresh = new OutputBudget(max);
    for (const t of wait2) fresh.pushText(t);
    expect(fresh.completed(JSON.stringify("done")).output).toHaveLength(20);
  });

  it("pending() is bounded, shows a marker only after drops, and consumes nothing", () => {
    const b = new OutputBudget(1500);
    b.pushText("one");
    expect(b.pending()).toEqual([{ type: "text", text: "one" }]);
    for (let i = 0; i < 200; i++) b.pushJson(JSON.stringify({ i, pad: "p".repeat(30) }));
    const p = b.pending() as CodeModeOutput[];
    expect(ser(p)).toBeLessThanOrEqual(1500);
    expect(isMarker((p[p.length - 1] as { value: unknown }).value)).toBe(true);
    const before = JSON.stringify(b.toJSON());
    const r1 = b.completed("42");
    for (let i = 0; i < 5; i++) b.pending();
    expect(JSON.stringify(b.toJSON())).toBe(before);
    expect(b.completed("42")).toEqual(r1);
  });

  it("rejects malformed persisted state", () => {
    expect(() => OutputBudget.fromJSON({} as OutputBudgetState)).toThrow(TypeError);
    const good = new OutputBudget(10).toJSON();
    expect(() => OutputBudget.fromJSON({ ...good, kept: [{ type: "nope" }] } as unknown as OutputBudgetState)).toThrow(TypeError);
    expect(() => OutputBudget.fromJSON({ ...good, overflowBytes: -1 })).toThrow(TypeError);
  });

  it("stays within the envelope overhead on tiny budgets", () => {
    for (let max = 0; max <= 1100; max += 7) {
      const b = new OutputBudget(max);
      for (let i = 0; i < 5; i++) b.pushText("中".repeat(3000));
      const c = b.completed(JSON.stringify("😀".repeat(3000)));
      checkBound(ser(c.output) + ser(c.value), max);
      const f = b.failed("Error: bad\n" + "e".repeat(5000));
      checkBound(ser(f.output) + ser(f.error), max);
      expect(f.error.startsWith("Error: bad")).toBe(true);
    }
  });

  it("property: any mix of items, budgets and waits stays bounded and faithful", () => {
    const r = rng(42);
    for (let iter = 0; iter < 400; iter++) {
      const max = r() < 0.2 ? Math.floor(r() * 600) : Math.floor(r() * 8000);
      let b = new OutputBudget(max);
      const twin = new OutputBudget(max);
      const items: CodeModeOutput[] = [];
      const n = Math.floor(r() * 30);
      for (let i = 0; i < n; i++) {
        if (r() < 0.5) {
          const t = randString(r, randLen(r));
          b.pushText(t);
          twin.pushText(t);
          items.push({ type: "text", text: t });
        } else {
          const v = randValue(r);
          b.pushJson(JSON.stringify(v));
          twin.pushJson(JSON.stringify(v));
          items.push({ type: "json", value: JSON.parse(JSON.stringify(v)) });
        }
        if (r() < 0.15) {
          b = roundTrip(b); // a wait boundary
          const pend = b.pending();
          checkBound(checkOutput(pend, items), max);
          expect(pend).toEqual(twin.pending());
        }
      }
      if (r() < 0.6) {
        const v = r() < 0.1 ? undefined : JSON.stringify(randValue(r));
        const c = b.completed(v);
        expect(c).toEqual(twin.completed(v));
        const outBytes = checkOutput(c.output, items);
        if (v === undefined) expect(c.value).toBeNull();
        else if (isMarker(c.value)) checkMarkerDescribes(c.value, v);
        else expect(c.value).toEqual(JSON.parse(v));
        checkBound(outBytes + ser(c.value), max);
      } else {
        const e = randString(r, randLen(r) * 2);
        const f = b.failed(e);
        expect(f).toEqual(twin.failed(e));
        const outBytes = checkOutput(f.output, items);
        if (f.error !== e) {
          expect(f.error.endsWith("[error truncated]")).toBe(true);
          expect(e.startsWith(f.error.slice(0, -ERROR_TRUNCATED_SUFFIX.length))).toBe(true);
          expect(f.error.length).toBeGreaterThan(ERROR_TRUNCATED_SUFFIX.length);
        }
        checkBound(outBytes + ser(f.error), max);
      }
    }
  });
});
