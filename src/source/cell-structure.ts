/**
 * What the source checks need to know about a cell beyond its tokens: which brackets match, the
 * innermost bracket around each token, and which names the cell declares itself (so a variable
 * called `exports`, a parameter called `require` or a user object called `process` is the cell's
 * own, not a module loader).
 *
 * Declarations are found by shape, without scopes: a name bound anywhere (`const`/`let`/`var`
 * and their destructuring patterns, `function`/`class` names, parameters of functions, arrows,
 * methods and `catch`) counts as declared everywhere in the cell. That errs towards accepting
 * code, which is the right side for a guidance check: the guest has no loader either way.
 *
 * Linear in the number of tokens: brackets are matched with one stack, groups are skipped by
 * their matching index, and nested patterns deeper than MAX_PATTERN_DEPTH are not followed.
 */
import { Tok, tokenize, type TokenList } from "../js-tokens";

const MAX_PATTERN_DEPTH = 32;

const CONTROL_HEADS = new Set(["if", "while", "for", "switch", "with"]);
/** TypeScript parameter modifiers (`constructor(private readonly x: T)`). */
const PARAMETER_MODIFIERS = new Set(["public", "private", "protected", "readonly", "override"]);

export type CellStructure = {
  tokens: TokenList;
  /** Index of the matching bracket of each `(`, `[`, `{`, `)`, `]`, `}` token, else -1. */
  match: Int32Array;
  /** Index of the innermost open bracket containing each token, -1 at top level. */
  enclosing: Int32Array;
  /** Names the cell binds itself. */
  declared: ReadonlySet<string>;
};

export function analyzeCell(source: string): CellStructure {
  const tokens = tokenize(source);
  const { match, enclosing } = matchBrackets(tokens);
  const declared = collectDeclaredNames(tokens, match);
  return { tokens, match, enclosing, declared };
}

function matchBrackets(tokens: TokenList): { match: Int32Array; enclosing: Int32Array } {
  const match = new Int32Array(tokens.count).fill(-1);
  const enclosing = new Int32Array(tokens.count);
  const stack: number[] = [];
  const { source } = tokens;
  for (let i = 0; i < tokens.count; i++) {
    enclosing[i] = stack.length > 0 ? stack[stack.length - 1]! : -1;
    if (tokens.kind[i] !== Tok.Punct || tokens.end[i]! - tokens.start[i]! !== 1) continue;
    const c = source.charCodeAt(tokens.start[i]!);
    if (c === 40 || c === 91 || c === 123) {
      stack.push(i);
    } else if ((c === 41 || c === 93 || c === 125) && stack.length > 0) {
      const top = stack[stack.length - 1]!;
      // ( ) are 40 41; [ ] 91 93; { } 123 125.
      if (source.charCodeAt(tokens.start[top]!) === (c === 41 ? 40 : c - 2)) {
        stack.pop();
        match[top] = i;
        match[i] = top;
        enclosing[i] = stack.length > 0 ? stack[stack.length - 1]! : -1;
      }
    }
  }
  return { match, enclosing };
}

/** Words that may precede a method or member name in a class, object literal or interface. */
export const MEMBER_MODIFIERS = new Set([
  "get",
  "set",
  "static",
  "async",
  "public",
  "private",
  "protected",
  "readonly",
  "override",
  "abstract",
  "declare",
  "accessor",
  "function",
]);

/**
 * Whether the name at `i` (or the `?`/`*` right after/before one) sits where a member name or a
 * function name is written: after `{`, `;`, `}`, `,`, a modifier, `*`, or `function`. A call in
 * an expression (`a ? require(x) : b`, `f(require(x))`) is never in such a place.
 */
export function startsMember(t: TokenList, i: number): boolean {
  let k = i;
  if (t.isPunct(k, "?")) k--; // `require?(x): T` (TypeScript optional method)
  if (!t.isName(k)) return false;
  const before = k - 1;
  if (before < 0) return false;
  if (t.isPunct(before, "{") || t.isPunct(before, ";") || t.isPunct(before, "}") || t.isPunct(before, ",") || t.isPunct(before, "*")) return true;
  return t.isName(before) && MEMBER_MODIFIERS.has(t.text(before)) && !t.isProperty(before);
}

function collectDeclaredNames(t: TokenList, match: Int32Array): Set<string> {
  const declared = new Set<string>();
  const isOpen = (i: number) => t.isPunct(i, "(") || t.isPunct(i, "[") || t.isPunct(i, "{");
  const isClose = (i: number) => t.isPunct(i, ")") || t.isPunct(i, "]") || t.isPunct(i, "}");
  const endsExpression = (i: number) =>
    t.kind[i] === Tok.Name ||
    t.kind[i] === Tok.Number ||
    t.kind[i] === Tok.String ||
    t.kind[i] === Tok.Template ||
    t.kind[i] === Tok.Regex ||
    isClose(i) ||
    t.isPunct(i, "++") ||
    t.isPunct(i, "--");

  /**
   * Index of the first `,` or `;` (or `=` when asked) at this level after `from`, or of the
   * closing bracket of the enclosing group; groups are jumped over. An initializer also ends at
   * a line break after a complete operand, so code without semicolons is not walked to its end
   * once per declaration.
   */
  const skipExpression = (from: number, stopAtEquals: boolean): number => {
    let j = from;
    while (j < t.count) {
      if (isOpen(j)) {
        if (match[j]! < 0) return t.count;
        j = match[j]! + 1;
        if (j < t.count && t.line[j]! > t.line[j - 1]! && endsExpression(j - 1)) return j;
        continue;
      }
      if (isClose(j) || t.isPunct(j, ",") || t.isPunct(j, ";") || (stopAtEquals && t.isPunct(j, "="))) return j;
      if (j > from && t.line[j]! > t.line[j - 1]! && endsExpression(j - 1)) return j;
      j++;
    }
    return j;
  };

  /** Binding names of the pattern or parameter list opened at `open`. */
  const bindGroup = (open: number, depth: number): void => {
    const close = match[open]!;
    if (close < 0 || depth > MAX_PATTERN_DEPTH) return;
    const object = t.isPunct(open, "{");
    const params = t.isPunct(open, "(");
    let element = true; // at the start of an element: a target may follow
    for (let j = open + 1; j < close; j++) {
      if (t.isPunct(j, ",")) {
        element = true;
        continue;
      }
      if (t.isPunct(j, "...")) {
        element = true;
        continue;
      }
      if (!element) {
        // A default value, a type annotation, or anything else: skip to the next element.
        if (isOpen(j) && match[j]! > 0) j = match[j]!;
        continue;
      }
      if (params && t.isName(j) && PARAMETER_MODIFIERS.has(t.text(j)) && t.isName(j + 1)) continue;
      const isKey = object && (t.kind[j] === Tok.Name || t.kind[j] === Tok.String || t.kind[j] === Tok.Number) && t.isPunct(j + 1, ":");
      if (isKey) {
        j++; // the target follows the `:`
        continue;
      }
      if (object && t.isPunct(j, "[") && match[j]! > 0 && t.isPunct(match[j]! + 1, ":")) {
        j = match[j]! + 1; // a computed key
        continue;
      }
      if (t.isName(j)) {
        declared.add(t.text(j));
        element = false;
        continue;
      }
      if (isOpen(j) && match[j]! > 0) {
        bindGroup(j, depth + 1);
        j = match[j]!;
        element = false;
        continue;
      }
      element = false;
    }
  };

  /** `const a = 1, { b } = c, [d] = e` after the keyword at `keyword`. */
  const bindDeclarators = (keyword: number): void => {
    let j = keyword + 1;
    while (j < t.count) {
      if (t.isName(j)) {
        declared.add(t.text(j));
        j++;
      } else if ((t.isPunct(j, "{") || t.isPunct(j, "[")) && match[j]! > 0) {
        bindGroup(j, 0);
        j = match[j]! + 1;
      } else {
        return;
      }
      if (t.isPunct(j, "!")) j++; // TypeScript definite assignment
      if (t.isPunct(j, ":")) j = skipExpression(j + 1, true); // TypeScript type annotation
      if (t.isPunct(j, "=")) j = skipExpression(j + 1, false);
      if (!t.isPunct(j, ",")) return;
      j++;
    }
  };

  for (let i = 0; i < t.count; i++) {
    if (t.kind[i] === Tok.Name) {
      // Only `const`, `var`, `let`, `function`, `class` and `catch` matter here.
      const first = t.source.charCodeAt(t.start[i]!);
      if (first !== 99 && first !== 118 && first !== 108 && first !== 102) continue;
      if (t.isProperty(i)) continue;
      const word = t.text(i);
      if (word === "const" || word === "var" || (word === "let" && (t.isName(i + 1) || t.isPunct(i + 1, "{") || t.isPunct(i + 1, "[")))) {
        bindDeclarators(i);
      } else if (word === "function" || word === "class") {
        let j = i + 1;
        if (t.isPunct(j, "*")) j++;
        if (t.isName(j) && !t.isName(j, "extends")) declared.add(t.text(j));
      } else if (word === "catch" && t.isPunct(i + 1, "(")) {
        bindGroup(i + 1, 0);
      }
    } else if (t.isPunct(i, "=>")) {
      // `x => ...`, `async x => ...`, `(a, { b }) => ...`
      if (t.isName(i - 1)) declared.add(t.text(i - 1));
      else if (t.isPunct(i - 1, ")") && match[i - 1]! >= 0) bindGroup(match[i - 1]!, 0);
    } else if (t.isPunct(i, "(") && match[i]! > 0) {
      // Parameters of a function or method: `(...)` followed by its body or a TypeScript return
      // type, and not the head of `if`/`while`/`for`/`switch`/`with`.
      const close = match[i]!;
      const body = t.isPunct(close + 1, "{") && t.line[close + 1] === t.line[close];
      const returnType = t.isPunct(close + 1, ":") && startsMember(t, i - 1);
      if ((body || returnType) && !(t.isName(i - 1) && CONTROL_HEADS.has(t.text(i - 1)) && !t.isProperty(i - 1))) bindGroup(i, 0);
    }
  }
  return declared;
}
