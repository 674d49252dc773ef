/**
 * The tokens of one cell as columns of typed arrays (js-scanner.ts fills it): a megabyte cell
 * can hold a million tokens, which as one object each would cost tens of megabytes.
 */

/** Token kinds, as stored in `TokenList.kind`. */
export const Tok = { Name: 1, Punct: 2, String: 3, Template: 4, Regex: 5, Number: 6, Private: 7 } as const;
export type Tok = (typeof Tok)[keyof typeof Tok];

/** The tokens of one source, as parallel columns. Index 0 … count-1. */
export class TokenList {
  count = 0;
  kind: Uint8Array;
  start: Int32Array;
  end: Int32Array;
  /** 1-based editor line of the token start. */
  line: Int32Array;
  /** Deepest nesting of `(`, `[`, `{` and template substitutions, and the line it was reached on. */
  maxDepth = 0;
  maxDepthLine = 1;
  /** Decoded values of names written with unicode escapes (`\u0072equire`). */
  private readonly escaped = new Map<number, string>();

  constructor(readonly source: string) {
    // Ordinary code has a token every few characters; grow on demand beyond that.
    const initial = Math.max(16, Math.ceil(source.length / 4));
    this.kind = new Uint8Array(initial);
    this.start = new Int32Array(initial);
    this.end = new Int32Array(initial);
    this.line = new Int32Array(initial);
  }

  push(kind: Tok, start: number, end: number, line: number, decoded?: string): void {
    if (this.count === this.kind.length) this.grow();
    const i = this.count++;
    this.kind[i] = kind;
    this.start[i] = start;
    this.end[i] = end;
    this.line[i] = line;
    if (decoded !== undefined) this.escaped.set(i, decoded);
  }

  private grow(): void {
    // Never more tokens than characters (+1): a megabyte of `;` needs 13 MB here, not 26.
    const size = Math.max(this.kind.length + 1, Math.min(this.kind.length * 2, this.source.length + 1));
    const kind = new Uint8Array(size);
    kind.set(this.kind);
    const start = new Int32Array(size);
    start.set(this.start);
    const end = new Int32Array(size);
    end.set(this.end);
    const line = new Int32Array(size);
    line.set(this.line);
    this.kind = kind;
    this.start = start;
    this.end = end;
    this.line = line;
  }

  /** Name value (unicode escapes decoded), punctuator text, or literal contents. */
  text(i: number): string {
    return this.escaped.get(i) ?? this.source.slice(this.start[i], this.end[i]);
  }

  is(i: number, kind: Tok, value: string): boolean {
    if (i < 0 || i >= this.count || this.kind[i] !== kind) return false;
    if (value.length === 1 && kind === Tok.Punct)
      return this.end[i]! - this.start[i]! === 1 && this.source.charCodeAt(this.start[i]!) === value.charCodeAt(0);
    const start = this.start[i]!;
    if (this.end[i]! - start === value.length && this.source.startsWith(value, start)) return !this.escaped.has(i) || this.escaped.get(i) === value;
    return this.escaped.get(i) === value;
  }

  isPunct(i: number, value: string): boolean {
    return this.is(i, Tok.Punct, value);
  }

  isName(i: number, value?: string): boolean {
    if (value !== undefined) return this.is(i, Tok.Name, value);
    return i >= 0 && i < this.count && this.kind[i] === Tok.Name;
  }

  /** True when the token is a name preceded by `.` or `?.` (a property access). */
  isProperty(i: number): boolean {
    return this.isPunct(i - 1, ".") || this.isPunct(i - 1, "?.");
  }
}
