/**
 * A small JavaScript tokenizer for the pre-execution source checks. It only needs to know what is
 * code and what is not: strings, template literal text, comments and regular expression literals
 * are skipped, so the word `import` inside them never looks like module syntax. Where JavaScript's
 * grammar is ambiguous (is `/` a division or a regex?) it uses the usual previous-token heuristic,
 * refined with brace and parenthesis context so `}` and `)` are classified correctly in the common
 * cases.
 *
 * Pure and synchronous; it does not load the TypeScript compiler.
 */

export type TokenType = "name" | "punct" | "string" | "template" | "regex" | "number" | "private";

export type Token = {
  type: TokenType;
  /** Identifier value with unicode escapes decoded; punctuator text; literal contents otherwise. */
  value: string;
  /** 1-based line of the token start. */
  line: number;
};

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

// Longest first.
const PUNCTUATORS = [
  ">>>=",
  "...",
  "===",
  "!==",
  "**=",
  "<<=",
  ">>=",
  ">>>",
  "&&=",
  "||=",
  "??=",
  "=>",
  "==",
  "!=",
  "<=",
  ">=",
  "&&",
  "||",
  "??",
  "?.",
  "++",
  "--",
  "+=",
  "-=",
  "*=",
  "%=",
  "&=",
  "|=",
  "^=",
  "**",
  "<<",
  ">>",
];

const ID_START = /[\p{ID_Start}$_]/u;
const ID_CONTINUE = /[\p{ID_Continue}$\u200c\u200d]/u;
const LINE_TERMINATOR = /[\n\r\u2028\u2029]/;
const WHITESPACE = /[\t\v\f \u00a0\ufeff\p{Zs}]/u;
const NUMBER =
  /(?:0[xX][\da-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?\d[\d_]*)?)n?/y;

type BraceKind = "block" | "expr" | "template";

/**
 * Splits `source` into tokens, skipping whitespace, comments and a leading `#!` line. Malformed
 * input is tolerated rather than rejected: unterminated strings and regex literals stop at the line
 * end, unterminated template literals and block comments run to the end of the source.
 */
export function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  const braces: BraceKind[] = [];
  const parens: boolean[] = []; // true when the paren is an if/while/for/with head
  let pos = 0;
  let line = 1;
  // Whether a `/` at this point starts a regex (true) or is a division operator (false).
  let regexAllowed = true;

  const n = source.length;
  const push = (type: TokenType, value: string, startLine: number) => {
    tokens.push({ type, value, line: startLine });
  };
  const last = () => tokens[tokens.length - 1];
  const isPropertyName = (index: number) => {
    const before = tokens[index - 1];
    return before !== undefined && before.type === "punct" && (before.value === "." || before.value === "?.");
  };

  const countLines = (from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const c = source[i]!;
      if (c === "\n" || c === "\u2028" || c === "\u2029" || (c === "\r" && source[i + 1] !== "\n")) line++;
    }
  };

  /** Scan template literal text starting after a backtick or a closing `}` of a substitution. */
  const scanTemplate = () => {
    const startLine = line;
    const start = pos;
    while (pos < n) {
      const c = source[pos]!;
      if (c === "\\") {
        pos += 2;
      } else if (c === "`") {
        countLines(start, pos);
        pos++;
        push("template", source.slice(start, pos - 1), startLine);
        regexAllowed = false;
        return;
      } else if (c === "$" && source[pos + 1] === "{") {
        countLines(start, pos);
        pos += 2;
        push("template", source.slice(start, pos - 2), startLine);
        braces.push("template");
        regexAllowed = true;
        return;
      } else {
        pos++;
      }
    }
    // Unterminated: the rest is template text.
    pos = Math.min(pos, n);
    countLines(start, pos);
    push("template", source.slice(start, pos), startLine);
  };

  /** Does a `{` at this point open an expression (object literal) rather than a block? */
  const braceOpensExpression = () => {
    const prev = last();
    if (!prev) return false;
    if (prev.type === "punct") {
      return !(prev.value === ")" || prev.value === "]" || prev.value === "}" || prev.value === ";" || prev.value === "=>");
    }
    if (prev.type === "name") return EXPRESSION_KEYWORDS.has(prev.value) && !isPropertyName(tokens.length - 1);
    return false;
  };

  if (source.startsWith("#!")) {
    while (pos < n && !LINE_TERMINATOR.test(source[pos]!)) pos++;
  }

  while (pos < n) {
    const c = source[pos]!;

    if (LINE_TERMINATOR.test(c)) {
      countLines(pos, pos + 1);
      pos++;
      continue;
    }
    if (WHITESPACE.test(c)) {
      pos++;
      continue;
    }

    // Comments.
    if (c === "/" && source[pos + 1] === "/") {
      while (pos < n && !LINE_TERMINATOR.test(source[pos]!)) pos++;
      continue;
    }
    if (c === "/" && source[pos + 1] === "*") {
      const end = source.indexOf("*/", pos + 2);
      const stop = end === -1 ? n : end + 2;
      countLines(pos, stop);
      pos = stop;
      continue;
    }

    // Strings.
    if (c === '"' || c === "'") {
      const startLine = line;
      const start = ++pos;
      while (pos < n && source[pos] !== c) {
        if (source[pos] === "\\") pos++;
        else if (source[pos] === "\n" || source[pos] === "\r") break; // unterminated
        pos++;
      }
      const value = source.slice(start, Math.min(pos, n));
      countLines(start, Math.min(pos, n));
      if (pos < n && source[pos] === c) pos++;
      push("string", value, startLine);
      regexAllowed = false;
      continue;
    }

    // Template literals.
    if (c === "`") {
      pos++;
      scanTemplate();
      continue;
    }

    // Regex literal or division.
    if (c === "/") {
      if (regexAllowed) {
        const startLine = line;
        const start = ++pos;
        let inClass = false;
        while (pos < n) {
          const r = source[pos]!;
          if (r === "\\") {
            pos += 2;
            continue;
          }
          if (LINE_TERMINATOR.test(r)) break; // unterminated; stop at the line end
          if (r === "[") inClass = true;
          else if (r === "]") inClass = false;
          else if (r === "/" && !inClass) break;
          pos++;
        }
        const body = source.slice(start, Math.min(pos, n));
        if (pos < n && source[pos] === "/") pos++;
        while (pos < n && ID_CONTINUE.test(source[pos]!)) pos++; // flags
        push("regex", body, startLine);
        regexAllowed = false;
        continue;
      }
      const op = source[pos + 1] === "=" ? "/=" : "/";
      pos += op.length;
      push("punct", op, line);
      regexAllowed = true;
      continue;
    }

    // Numbers (before punctuators so `.5` is a number).
    if (/\d/.test(c) || (c === "." && /\d/.test(source[pos + 1] ?? ""))) {
      NUMBER.lastIndex = pos;
      const m = NUMBER.exec(source);
      const text = m ? m[0] : c;
      pos += text.length;
      // Swallow any trailing identifier characters (e.g. invalid `1abc`) so they are not names.
      while (pos < n && ID_CONTINUE.test(source[pos]!)) pos++;
      push("number", text, line);
      regexAllowed = false;
      continue;
    }

    // Identifiers (with unicode escapes decoded) and private names.
    if (ID_START.test(c) || c === "\\" || (c === "#" && pos + 1 < n)) {
      const isPrivate = c === "#";
      if (isPrivate) pos++;
      let value = "";
      while (pos < n) {
        const ch = source[pos]!;
        if (ch === "\\" && source[pos + 1] === "u") {
          const braced = /^\\u\{([\da-fA-F]+)\}/.exec(source.slice(pos, pos + 12));
          const plain = /^\\u([\da-fA-F]{4})/.exec(source.slice(pos, pos + 6));
          const m = braced ?? plain;
          if (!m) {
            pos++;
            break;
          }
          const cp = Number.parseInt(m[1]!, 16);
          value += cp <= 0x10ffff ? String.fromCodePoint(cp) : "";
          pos += m[0].length;
          continue;
        }
        const cp = source.codePointAt(pos)!;
        const chr = String.fromCodePoint(cp);
        if (value === "" ? ID_START.test(chr) : ID_CONTINUE.test(chr)) {
          value += chr;
          pos += chr.length;
          continue;
        }
        break;
      }
      if (value === "" && !isPrivate) {
        // A lone backslash or similar: skip it.
        pos++;
        continue;
      }
      push(isPrivate ? "private" : "name", value, line);
      const index = tokens.length - 1;
      regexAllowed = !isPrivate && EXPRESSION_KEYWORDS.has(value) && !isPropertyName(index);
      continue;
    }

    // Punctuators.
    let op = PUNCTUATORS.find((p) => source.startsWith(p, pos)) ?? c;
    if (op === "?." && /\d/.test(source[pos + 2] ?? "")) op = "?"; // `a?.5:b`
    if (op === "{") {
      braces.push(braceOpensExpression() ? "expr" : "block");
      pos++;
      push("punct", "{", line);
      regexAllowed = true;
      continue;
    }
    if (op === "}") {
      const kind = braces.pop();
      pos++;
      if (kind === "template") {
        scanTemplate();
        continue;
      }
      push("punct", "}", line);
      regexAllowed = kind !== "expr";
      continue;
    }
    if (op === "(") {
      const prev = last();
      const index = tokens.length - 1;
      parens.push(prev !== undefined && prev.type === "name" && CONTROL_KEYWORDS.has(prev.value) && !isPropertyName(index));
      pos++;
      push("punct", "(", line);
      regexAllowed = true;
      continue;
    }
    if (op === ")") {
      const control = parens.pop() ?? false;
      pos++;
      push("punct", ")", line);
      regexAllowed = control;
      continue;
    }
    pos += op.length;
    push("punct", op, line);
    // After `]`, postfix `++`/`--`: an expression just ended. Everything else expects an operand.
    regexAllowed = !(op === "]" || op === "++" || op === "--");
  }

  return tokens;
}
