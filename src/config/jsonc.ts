/**
 * A small, tolerant JSON reader for configuration text (JSONC): JSON plus `//` and `/* *\/` comments
 * and trailing commas in objects and arrays, as editors and the seeds' examples write them. Nothing
 * else of JSON5 (no single quotes, unquoted keys, hex or NaN). A problem is reported by line and
 * column (1-based) with a reason that never quotes the text: a config may hold a pasted secret.
 */
export type JsoncResult = { ok: true; value: unknown } | { ok: false; reason: string; line: number; column: number };

/** Objects and arrays nested deeper than this are refused (the reader recurses). */
const MAX_DEPTH = 64;

class JsoncError extends Error {
  constructor(
    readonly reason: string,
    readonly at: number,
  ) {
    super(reason);
  }
}

export function parseJsonc(text: string): JsoncResult {
  const reader = new Reader(text);
  try {
    reader.skip();
    const value = reader.value(0);
    reader.skip();
    if (reader.at < text.length) throw new JsoncError("unexpected text after the document", reader.at);
    return { ok: true, value };
  } catch (error) {
    if (!(error instanceof JsoncError)) throw error;
    const before = text.slice(0, error.at);
    const line = before.split("\n").length;
    const column = error.at - (before.lastIndexOf("\n") + 1) + 1;
    return { ok: false, reason: error.reason, line, column };
  }
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const ESCAPES: Record<string, string> = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };

class Reader {
  at = 0;
  constructor(private readonly text: string) {}

  /** Whitespace and comments. */
  skip(): void {
    const t = this.text;
    for (;;) {
      const c = t[this.at];
      if (c === " " || c === "\t" || c === "\n" || c === "\r" || c === "\uFEFF") this.at++;
      else if (c === "/" && t[this.at + 1] === "/") {
        const end = t.indexOf("\n", this.at);
        this.at = end === -1 ? t.length : end + 1;
      } else if (c === "/" && t[this.at + 1] === "*") {
        const end = t.indexOf("*/", this.at + 2);
        if (end === -1) throw new JsoncError("unterminated /* comment", this.at);
        this.at = end + 2;
      } else return;
    }
  }

  value(depth: number): unknown {
    const t = this.text;
    const c = t[this.at];
    if (c === undefined) throw new JsoncError("unexpected end of input", this.at);
    if (c === "{") return this.object(depth + 1);
    if (c === "[") return this.array(depth + 1);
    if (c === '"') return this.string();
    for (const [word, value] of [
      ["true", true],
      ["false", false],
      ["null", null],
    ] as const) {
      if (t.startsWith(word, this.at)) {
        this.at += word.length;
        return value;
      }
    }
    NUMBER.lastIndex = this.at;
    const number = NUMBER.exec(t);
    if (number) {
      this.at += number[0].length;
      return Number(number[0]);
    }
    throw new JsoncError("unexpected character (expected a value)", this.at);
  }

  private object(depth: number): Record<string, unknown> {
    if (depth > MAX_DEPTH) throw new JsoncError(`nested deeper than ${MAX_DEPTH} levels`, this.at);
    const out: Record<string, unknown> = {};
    this.at++; // {
    for (;;) {
      this.skip();
      if (this.text[this.at] === "}") {
        this.at++;
        return out;
      }
      if (this.text[this.at] !== '"') throw new JsoncError('expected a "quoted" key or }', this.at);
      const key = this.string();
      this.skip();
      if (this.text[this.at] !== ":") throw new JsoncError("expected : after a key", this.at);
      this.at++;
      this.skip();
      // Like JSON.parse: an own property, even for "__proto__".
      Object.defineProperty(out, key, { value: this.value(depth), enumerable: true, writable: true, configurable: true });
      this.skip();
      const next = this.text[this.at];
      if (next === ",") this.at++;
      else if (next !== "}")
        throw new JsoncError(next === undefined ? "unexpected end of input (an object is not closed)" : "expected , or }", this.at);
    }
  }

  private array(depth: number): unknown[] {
    if (depth > MAX_DEPTH) throw new JsoncError(`nested deeper than ${MAX_DEPTH} levels`, this.at);
    const out: unknown[] = [];
    this.at++; // [
    for (;;) {
      this.skip();
      if (this.text[this.at] === "]") {
        this.at++;
        return out;
      }
      out.push(this.value(depth));
      this.skip();
      const next = this.text[this.at];
      if (next === ",") this.at++;
      else if (next !== "]")
        throw new JsoncError(next === undefined ? "unexpected end of input (an array is not closed)" : "expected , or ]", this.at);
    }
  }

  private string(): string {
    const t = this.text;
    const start = this.at;
    this.at++; // "
    let out = "";
    for (;;) {
      const c = t[this.at];
      if (c === undefined) throw new JsoncError("unterminated string", start);
      if (c === '"') {
        this.at++;
        return out;
      }
      if (c < " ") throw new JsoncError("control character in a string (write it as an escape)", this.at);
      if (c !== "\\") {
        out += c;
        this.at++;
        continue;
      }
      const e = t[this.at + 1];
      if (e === "u") {
        const hex = t.slice(this.at + 2, this.at + 6);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw new JsoncError("invalid \\u escape", this.at);
        out += String.fromCharCode(parseInt(hex, 16));
        this.at += 6;
      } else if (e !== undefined && Object.hasOwn(ESCAPES, e)) {
        out += ESCAPES[e];
        this.at += 2;
      } else throw new JsoncError("invalid escape in a string", this.at);
    }
  }
}
