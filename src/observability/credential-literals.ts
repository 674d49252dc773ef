/**
 * Which string and template literals of a cell are credential VALUES (redact-source.ts masks
 * their whole content). One forward pass over the js-scanner tokens with a stack of bracket
 * frames; each frame remembers whether the expression being written at its level is the value of
 * a credential name. Only literals are ever masked: computations (`computeToken()`,
 * `vault.get("db")`), `true`/`false`/`null`/`undefined` and names stay as written.
 *
 * A literal is a credential value when, at its own bracket level, it is written:
 * - after `=`, `+=`, `??=`, `||=`, `&&=`, `==`, `===`, `!=`, `!==` whose target is a credential
 *   name (credential-names.ts): `API_TOKEN = "…"`, `obj.password = …`, `headers["Authorization"] = …`,
 *   `const apiKey: string = …` (a short TypeScript annotation is looked through);
 * - after an object key that is a credential name (`{ apiKey: …, "x-api-key": …, ["Cookie"]: … }`);
 * - anywhere in the rest of that expression (`password = cond ? "a" : "b"`, `token = "a" + "b"`),
 *   until `,`, `;`, `=>` or a statement keyword; a nested call or object starts afresh, so
 *   `password = await vault.get("db")` keeps `"db"`;
 * - as an argument of a credential setter (`setApiKey("…")`, `withToken(…)`, `.auth("u", "p")`);
 * - as the value of a (name, value) pair whose name literal is a credential name:
 *   `headers.set("Authorization", …)`, `.append("X-Api-Key", …)`, `new Headers([["Cookie", …]])`;
 * - right after an auth scheme: `"Bearer " + "…"`, `"Basic " + btoa("user:pass")`;
 * - compared with a credential name from the left: `"hunter2" === password`.
 * Template literals are decided once at their first piece; their substitutions are code.
 * BOUND: linear; look-backs are at most TS_ANNOTATION_TOKENS tokens.
 */

import { Tok, type TokenList } from "../js-tokens";
import { isCredentialName, nameWords } from "./credential-names";

type Frame = {
  kind: "root" | "(" | "[" | "{" | "${";
  /** Token index of the opening bracket (-1 for the root). */
  opener: number;
  /** The expression being written at this level is a credential value. */
  target: boolean;
  /** Every argument is a credential value (a credential setter call). */
  setter: boolean;
  /** A (name, value) pair: the second element is a credential value when the first names one. */
  pair: boolean;
  /** Element index within a pair frame. */
  arg: number;
};

const ASSIGN = new Set(["=", "+=", "??=", "||=", "&&=", "==", "===", "!=", "!=="]);
const COMPARE = new Set(["==", "===", "!=", "!=="]);
const STATEMENT_KEYWORDS = new Set([
  "const",
  "let",
  "var",
  "return",
  "if",
  "else",
  "for",
  "while",
  "do",
  "switch",
  "case",
  "default",
  "throw",
  "try",
  "catch",
  "finally",
  "function",
  "class",
  "import",
  "export",
]);
/** Calls whose (name, value) arguments set a header, parameter or form field. */
const PAIR_CALLS = new Set(["set", "append", "setHeader", "header", "setRequestHeader"]);
/** Tokens a short TypeScript annotation (`: string | undefined`, `: Array<Secret>`) is made of; no `,`, which ends a parameter. */
const ANNOTATION_PUNCT = new Set([".", "|", "&", "<", ">", "[", "]", "?"]);
const TS_ANNOTATION_TOKENS = 12;
const ENDS_WITH_SCHEME = /\b(?:Bearer|Basic|Token)\s+$/i;

/** `setApiKey`, `withToken`, `auth`: calls that take credentials as arguments. */
function isCredentialSetter(callee: string): boolean {
  const words = nameWords(callee);
  if (words.length === 1) return words[0] === "auth" || words[0] === "bearer";
  return (words[0] === "set" || words[0] === "with") && isCredentialName(callee);
}

/** One bit per token: 1 when the token is a string or template literal to mask in full. */
export function credentialLiterals(tokens: TokenList): Uint8Array {
  const { source } = tokens;
  const flags = new Uint8Array(tokens.count);
  const root: Frame = { kind: "root", opener: -1, target: false, setter: false, pair: false, arg: 0 };
  const frames: Frame[] = [root];
  const templates: boolean[] = [];
  const isLiteral = (i: number) => i >= 0 && (tokens.kind[i] === Tok.String || tokens.kind[i] === Tok.Template);
  const afterScheme = (i: number) => isLiteral(i) && ENDS_WITH_SCHEME.test(tokens.text(i));
  const top = () => frames[frames.length - 1]!;
  const push = (frame: Omit<Frame, "arg">) => frames.push({ ...frame, arg: 0 });

  for (let i = 0; i < tokens.count; i++) {
    const kind = tokens.kind[i];
    const frame = top();
    if (kind === Tok.String) {
      flags[i] = Number(frame.target || valueByPosition(tokens, i, afterScheme));
    } else if (kind === Tok.Template) {
      const first = source.charCodeAt(tokens.start[i]! - 1) === 96; /* ` */
      const opensSubstitution = source.charCodeAt(tokens.end[i]!) === 36; /* $ */
      let masked: boolean;
      if (first) {
        masked = frame.target || valueByPosition(tokens, i, afterScheme);
        if (opensSubstitution) templates.push(masked);
      } else {
        while (frames.length > 1 && top().kind !== "${") frames.pop();
        if (frames.length > 1) frames.pop();
        masked = templates[templates.length - 1] ?? false;
        if (!opensSubstitution) templates.pop();
      }
      flags[i] = Number(masked);
      if (opensSubstitution) push({ kind: "${", opener: i, target: false, setter: false, pair: false });
    } else if (kind === Tok.Name) {
      if (STATEMENT_KEYWORDS.has(tokens.text(i)) && !tokens.isProperty(i)) frame.target = frame.setter;
    } else if (kind === Tok.Punct) {
      const p = tokens.text(i);
      if (p === "(") {
        const callee = tokens.isName(i - 1) ? tokens.text(i - 1) : "";
        const basicEncode = callee === "btoa" && (afterScheme(i - 2) || (tokens.isPunct(i - 2, "+") && afterScheme(i - 3)));
        const setter = basicEncode || (callee !== "" && isCredentialSetter(callee));
        push({ kind: "(", opener: i, target: setter, setter, pair: PAIR_CALLS.has(callee) });
      } else if (p === "[") {
        const pair = frame.kind === "[" && (tokens.isPunct(i - 1, "[") || tokens.isPunct(i - 1, ","));
        push({ kind: "[", opener: i, target: false, setter: false, pair });
      } else if (p === "{") {
        push({ kind: "{", opener: i, target: false, setter: false, pair: false });
      } else if (p === ")" || p === "]" || p === "}") {
        if (frames.length > 1 && frame.kind !== "${") frames.pop();
      } else if (p === ",") {
        if (frame.pair && frame.arg++ === 0) {
          const named = i - 1 === frame.opener + 1 && tokens.kind[i - 1] === Tok.String && isCredentialName(tokens.text(i - 1));
          frame.target = frame.setter || named;
        } else {
          frame.target = frame.setter;
        }
      } else if (p === ";" || p === "=>") {
        frame.target = frame.setter;
      } else if (ASSIGN.has(p)) {
        frame.target = isCredentialTarget(tokens, i);
      } else if (p === ":") {
        const key = objectKey(tokens, i);
        if (key !== undefined) frame.target = isCredentialName(key);
      }
    }
  }
  return flags;
}

/** Scheme concatenation (`"Bearer " + "…"`) and a left-hand comparison (`"…" === password`). */
function valueByPosition(tokens: TokenList, i: number, afterScheme: (i: number) => boolean): boolean {
  if (tokens.isPunct(i - 1, "+") && afterScheme(i - 2)) return true;
  const next = i + 1 < tokens.count && tokens.kind[i + 1] === Tok.Punct ? tokens.text(i + 1) : "";
  return COMPARE.has(next) && tokens.isName(i + 2) && isCredentialName(tokens.text(i + 2)) && !tokens.isPunct(i + 3, ".");
}

/** The key before an object literal's `:` (`{ apiKey:`, `, "x-api-key":`, `{ ["Cookie"]:`), if it is one. */
function objectKey(tokens: TokenList, colon: number): string | undefined {
  const k = colon - 1;
  const opensEntry = (j: number) => tokens.isPunct(j, "{") || tokens.isPunct(j, ",");
  if ((tokens.isName(k) || tokens.kind[k] === Tok.String) && opensEntry(k - 1)) return tokens.text(k);
  if (tokens.isPunct(k, "]") && tokens.kind[k - 1] === Tok.String && tokens.isPunct(k - 2, "[") && opensEntry(k - 3)) {
    return tokens.text(k - 1);
  }
  return undefined;
}

/** Is the target of the assignment or comparison at `op` a credential name? */
function isCredentialTarget(tokens: TokenList, op: number): boolean {
  const j = op - 1;
  if (tokens.isPunct(j, "]") && tokens.kind[j - 1] === Tok.String && tokens.isPunct(j - 2, "[")) {
    return isCredentialName(tokens.text(j - 1));
  }
  if (tokens.kind[j] === Tok.Private) return isCredentialName(tokens.text(j));
  if (!tokens.isName(j)) return false;
  if (isCredentialName(tokens.text(j))) return true;
  // `const apiKey: string = …`: the name is before the annotation's `:`.
  for (let k = j; k > j - TS_ANNOTATION_TOKENS && k > 0; k--) {
    if (tokens.isPunct(k, ":")) {
      const name = tokens.isPunct(k - 1, "?") || tokens.isPunct(k - 1, "!") ? k - 2 : k - 1;
      return tokens.isName(name) && isCredentialName(tokens.text(name));
    }
    const kind = tokens.kind[k];
    if (kind !== Tok.Name && kind !== Tok.String && kind !== Tok.Number && !(kind === Tok.Punct && ANNOTATION_PUNCT.has(tokens.text(k)))) {
      return false;
    }
  }
  return false;
}
