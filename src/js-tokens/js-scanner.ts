/**
 * A small JavaScript tokenizer for the pre-execution source checks. It only needs to know what is
 * code and what is not: strings, template literal text, comments and regular expression literals
 * are skipped, so the word `import` inside them never looks like module syntax. Where JavaScript's
 * grammar is ambiguous (is `/` a division or a regex?) it uses the usual previous-token heuristic,
 * refined with brace and parenthesis context so `}` and `)` are classified correctly in the common
 * cases.
 *
 * Cells are hostile and up to a megabyte long, so the scan is one linear pass with a small
 * constant: ASCII fast paths (no regular expression per character), and tokens stored as columns
 * of typed arrays (13 bytes a token) rather than one object each — a megabyte of `;` is a
 * million tokens. Names and punctuators are compared in place; only names written with unicode
 * escapes keep a decoded copy.
 *
 * Lines are editor lines (`\n`, `\r\n`, `\r`; see line-starts.ts), although U+2028/U+2029 still
 * end comments and regex literals as ECMAScript says. Pure and synchronous; it does not load the
 * TypeScript compiler.
 */

import { Tok, TokenList } from "./token-list";

// Tok and TokenList are exported by the folder index.

/** Keywords after which an expression (so a regex literal, or an object literal) may start. */
const EXPRESSION_KEYWORDS = new Set([
  "return",
  "typeof",
  "instanceof",
  "in",
  "of",
  "new",
  "delete",
  "void",
  "throw",
  "case",
  "do",
  "else",
  "yield",
  "await",
  "extends",
]);

const CONTROL_KEYWORDS = new Set(["if", "while", "for", "with"]);

/**
 * Non-ASCII identifier and space classes, built on first use: V8 builds a Unicode property class
 * from ICU when the literal is evaluated, and most sources are ASCII, so startup should not pay.
 */
let unicodeClasses: { idStart: RegExp; idContinue: RegExp; whitespace: RegExp } | undefined;
const unicode = () =>
  (unicodeClasses ??= {
    idStart: /[\p{ID_Start}$_]/u,
    idContinue: /[\p{ID_Continue}$\u200c\u200d]/u,
    whitespace: /[\t\v\f \u00a0\ufeff\p{Zs}]/u,
  });
const NUMBER = /(?:0[xX][\da-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?\d[\d_]*)?)n?/y;
const UNICODE_ESCAPE = /\\u(?:\{([\da-fA-F]+)\}|([\da-fA-F]{4}))/y;

const isLineTerminator = (c: number) => c === 10 || c === 13 || c === 0x2028 || c === 0x2029;
const isDigit = (c: number) => c >= 48 && c <= 57;
const isAsciiIdStart = (c: number) => (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 36 || c === 95;
const isAsciiIdPart = (c: number) => isAsciiIdStart(c) || isDigit(c);

type BraceKind = "block" | "expr" | "template";

/**
 * Length of the punctuator starting with `c` at `pos` (longest match: `>>>=`, `...`, `?.`, `**=`
 * ...), by character codes rather than substrings. `/` and `/=` are handled by the caller.
 */
function punctuatorLength(s: string, pos: number, c: number): number {
  const c1 = s.charCodeAt(pos + 1);
  const c2 = s.charCodeAt(pos + 2);
  switch (c) {
    case 62: // >  >= >> >>= >>> >>>=
      if (c1 === 62) {
        if (c2 === 62) return s.charCodeAt(pos + 3) === 61 ? 4 : 3;
        return c2 === 61 ? 3 : 2;
      }
      return c1 === 61 ? 2 : 1;
    case 60: // <  <= << <<=
      if (c1 === 60) return c2 === 61 ? 3 : 2;
      return c1 === 61 ? 2 : 1;
    case 61: // =  == === =>
      if (c1 === 61) return c2 === 61 ? 3 : 2;
      return c1 === 62 ? 2 : 1;
    case 33: // !  != !==
      if (c1 === 61) return c2 === 61 ? 3 : 2;
      return 1;
    case 42: // *  *= ** **=
    case 38: // &  &= && &&=
    case 124: // |  |= || ||=
      if (c1 === c) return c2 === 61 ? 3 : 2;
      return c1 === 61 ? 2 : 1;
    case 63: // ?  ?? ??= ?.  (but `a?.5:b` is a conditional)
      if (c1 === 63) return c2 === 61 ? 3 : 2;
      return c1 === 46 && !isDigit(c2) ? 2 : 1;
    case 46: // .  ...
      return c1 === 46 && c2 === 46 ? 3 : 1;
    case 43: // +  ++ +=
    case 45: // -  -- -=
      return c1 === c || c1 === 61 ? 2 : 1;
    case 37: // %  %=
    case 94: // ^  ^=
      return c1 === 61 ? 2 : 1;
    default:
      return 1;
  }
}

/**
 * Splits `source` into tokens, skipping whitespace, comments and a leading `#!` line. Malformed
 * input is tolerated rather than rejected: unterminated strings and regex literals stop at the line
 * end, unterminated template literals and block comments run to the end of the source.
 */
export function tokenize(source: string): TokenList {
  const tokens = new TokenList(source);
  const braces: BraceKind[] = [];
  const parens: boolean[] = []; // true when the paren is an if/while/for/with head
  const n = source.length;
  let pos = 0;
  let line = 1;
  // Whether a `/` at this point starts a regex (true) or is a division operator (false).
  let regexAllowed = true;
  let depth = 0;
  const enter = () => {
    if (++depth > tokens.maxDepth) {
      tokens.maxDepth = depth;
      tokens.maxDepthLine = line;
    }
  };
  const leave = () => {
    if (depth > 0) depth--;
  };

  /** Count editor line breaks in [from, to). */
  const countLines = (from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const c = source.charCodeAt(i);
      if (c === 10 || (c === 13 && source.charCodeAt(i + 1) !== 10)) line++;
    }
  };
  const lastIs = (kind: Tok) => tokens.count > 0 && tokens.kind[tokens.count - 1] === kind;
  const lastIsKeyword = (set: Set<string>) => lastIs(Tok.Name) && set.has(tokens.text(tokens.count - 1)) && !tokens.isProperty(tokens.count - 1);

  /** Scan template literal text starting after a backtick or a closing `}` of a substitution. */
  const scanTemplate = () => {
    const startLine = line;
    const start = pos;
    while (pos < n) {
      const c = source.charCodeAt(pos);
      if (c === 92 /* \ */) {
        pos += 2;
      } else if (c === 96 /* ` */) {
        countLines(start, pos);
        tokens.push(Tok.Template, start, pos, startLine);
        pos++;
        regexAllowed = false;
        return;
      } else if (c === 36 /* $ */ && source.charCodeAt(pos + 1) === 123 /* { */) {
        countLines(start, pos);
        tokens.push(Tok.Template, start, pos, startLine);
        pos += 2;
        braces.push("template");
        enter();
        regexAllowed = true;
        return;
      } else {
        pos++;
      }
    }
    // Unterminated: the rest is template text.
    pos = n;
    countLines(start, pos);
    tokens.push(Tok.Template, start, pos, startLine);
  };

  /** Does a `{` at this point open an expression (object literal) rather than a block? */
  const braceOpensExpression = () => {
    if (tokens.count === 0) return false;
    const last = tokens.count - 1;
    const kind = tokens.kind[last];
    if (kind === Tok.Punct) {
      return !(
        tokens.isPunct(last, ")") ||
        tokens.isPunct(last, "]") ||
        tokens.isPunct(last, "}") ||
        tokens.isPunct(last, ";") ||
        tokens.isPunct(last, "=>")
      );
    }
    if (kind === Tok.Name) return lastIsKeyword(EXPRESSION_KEYWORDS);
    return false;
  };

  if (source.startsWith("#!")) {
    while (pos < n && !isLineTerminator(source.charCodeAt(pos))) pos++;
  }

  while (pos < n) {
    const c = source.charCodeAt(pos);

    if (c === 10) {
      line++;
      pos++;
      continue;
    }
    if (c === 13) {
      if (source.charCodeAt(pos + 1) !== 10) line++;
      pos++;
      continue;
    }
    if (c === 32 || c === 9 || c === 11 || c === 12 || c === 0x2028 || c === 0x2029) {
      pos++;
      continue;
    }
    if (c > 127 && unicode().whitespace.test(source[pos]!)) {
      pos++;
      continue;
    }

    // Comments.
    if (c === 47 /* / */ && source.charCodeAt(pos + 1) === 47) {
      while (pos < n && !isLineTerminator(source.charCodeAt(pos))) pos++;
      continue;
    }
    if (c === 47 && source.charCodeAt(pos + 1) === 42 /* * */) {
      const end = source.indexOf("*/", pos + 2);
      const stop = end === -1 ? n : end + 2;
      countLines(pos, stop);
      pos = stop;
      continue;
    }

    // Strings.
    if (c === 34 /* " */ || c === 39 /* ' */) {
      const startLine = line;
      const start = ++pos;
      while (pos < n) {
        const s = source.charCodeAt(pos);
        if (s === c) break;
        if (s === 92) pos++;
        else if (s === 10 || s === 13) break; // unterminated
        pos++;
      }
      const end = Math.min(pos, n);
      countLines(start, end);
      if (pos < n && source.charCodeAt(pos) === c) pos++;
      tokens.push(Tok.String, start, end, startLine);
      regexAllowed = false;
      continue;
    }

    // Template literals.
    if (c === 96) {
      pos++;
      scanTemplate();
      continue;
    }

    // Regex literal or division.
    if (c === 47) {
      if (regexAllowed) {
        const startLine = line;
        const start = ++pos;
        let inClass = false;
        while (pos < n) {
          const r = source.charCodeAt(pos);
          if (r === 92) {
            pos += 2;
            continue;
          }
          if (isLineTerminator(r)) break; // unterminated; stop at the line end
          if (r === 91 /* [ */) inClass = true;
          else if (r === 93 /* ] */) inClass = false;
          else if (r === 47 && !inClass) break;
          pos++;
        }
        const end = Math.min(pos, n);
        if (pos < n && source.charCodeAt(pos) === 47) pos++;
        while (pos < n && (isAsciiIdPart(source.charCodeAt(pos)) || (source.charCodeAt(pos) > 127 && unicode().idContinue.test(source[pos]!)))) pos++; // flags
        tokens.push(Tok.Regex, start, end, startLine);
        regexAllowed = false;
        continue;
      }
      const len = source.charCodeAt(pos + 1) === 61 /* = */ ? 2 : 1;
      tokens.push(Tok.Punct, pos, pos + len, line);
      pos += len;
      regexAllowed = true;
      continue;
    }

    // Numbers (before punctuators so `.5` is a number).
    if (isDigit(c) || (c === 46 /* . */ && isDigit(source.charCodeAt(pos + 1)))) {
      NUMBER.lastIndex = pos;
      const m = NUMBER.exec(source);
      const start = pos;
      pos += m ? m[0].length : 1;
      // Swallow any trailing identifier characters (e.g. invalid `1abc`) so they are not names.
      while (pos < n && isAsciiIdPart(source.charCodeAt(pos))) pos++;
      tokens.push(Tok.Number, start, pos, line);
      regexAllowed = false;
      continue;
    }

    // Identifiers (with unicode escapes decoded) and private names.
    if (
      isAsciiIdStart(c) ||
      c === 92 ||
      (c === 35 /* # */ && pos + 1 < n) ||
      (c > 127 && unicode().idStart.test(String.fromCodePoint(source.codePointAt(pos)!)))
    ) {
      const isPrivate = c === 35;
      if (isPrivate) pos++;
      const start = pos;
      let decoded: string | undefined;
      let empty = true;
      while (pos < n) {
        const ch = source.charCodeAt(pos);
        if (isAsciiIdStart(ch) || (!empty && isDigit(ch))) {
          if (decoded !== undefined) decoded += source[pos];
          pos++;
          empty = false;
          continue;
        }
        if (ch === 92) {
          UNICODE_ESCAPE.lastIndex = pos;
          const m = UNICODE_ESCAPE.exec(source);
          if (!m) break;
          const cp = Number.parseInt(m[1] ?? m[2]!, 16);
          decoded = (decoded ?? source.slice(start, pos)) + (cp <= 0x10ffff ? String.fromCodePoint(cp) : "");
          pos += m[0].length;
          empty = false;
          continue;
        }
        if (ch > 127) {
          const cp = source.codePointAt(pos)!;
          const chr = String.fromCodePoint(cp);
          if (empty ? unicode().idStart.test(chr) : unicode().idContinue.test(chr)) {
            if (decoded !== undefined) decoded += chr;
            pos += chr.length;
            empty = false;
            continue;
          }
        }
        break;
      }
      if (empty && !isPrivate) {
        // A lone backslash or similar: skip it.
        pos++;
        continue;
      }
      tokens.push(isPrivate ? Tok.Private : Tok.Name, start, pos, line, decoded);
      regexAllowed = !isPrivate && lastIsKeyword(EXPRESSION_KEYWORDS);
      continue;
    }

    // Punctuators.
    const len = punctuatorLength(source, pos, c);
    if (len === 1) {
      if (c === 123 /* { */) {
        braces.push(braceOpensExpression() ? "expr" : "block");
        enter();
        tokens.push(Tok.Punct, pos, pos + 1, line);
        pos++;
        regexAllowed = true;
        continue;
      }
      if (c === 125 /* } */) {
        const kind = braces.pop();
        leave();
        if (kind === "template") {
          pos++;
          scanTemplate();
          continue;
        }
        tokens.push(Tok.Punct, pos, pos + 1, line);
        pos++;
        regexAllowed = kind !== "expr";
        continue;
      }
      if (c === 40 /* ( */) {
        parens.push(lastIsKeyword(CONTROL_KEYWORDS));
        enter();
        tokens.push(Tok.Punct, pos, pos + 1, line);
        pos++;
        regexAllowed = true;
        continue;
      }
      if (c === 41 /* ) */) {
        regexAllowed = parens.pop() ?? false;
        leave();
        tokens.push(Tok.Punct, pos, pos + 1, line);
        pos++;
        continue;
      }
    }
    if (c === 91 /* [ */) enter();
    else if (c === 93 /* ] */) leave();
    tokens.push(Tok.Punct, pos, pos + len, line);
    // After `]`, postfix `++`/`--`: an expression just ended. Everything else expects an operand.
    regexAllowed = !(c === 93 /* ] */ || (len === 2 && (c === 43 || c === 45) && source.charCodeAt(pos + 1) === c));
    pos += len;
  }

  return tokens;
}
