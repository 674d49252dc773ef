/**
 * Is this identifier, property, object key, header or query parameter the name of a credential?
 * Used by the redaction of stored source, previews and logged text: the VALUE of a credential name
 * is masked, the name itself always stays readable.
 *
 * RULE: the name is split into words (camelCase, snake_case, kebab-case, SCREAMING_CASE, digits
 * dropped) and its LAST word decides, because English names end in their noun:
 * - `password`, `passwd`, `pwd`, `pass`, `passphrase`, `secret(s)`, `credential(s)`, `creds`,
 *   `authorization`, `auth`, `cookie(s)`, `jwt`, `bearer`, and the one-word `apikey`, `privkey`:
 *   credential (`clientSecret`, `DB_PASS`, `basicAuth`, `Set-Cookie`, `proxyAuthorization`);
 * - `token`: credential unless a word before it makes it a count or a cursor (`pageToken`,
 *   `nextToken`, `maxToken`, `cancellationToken`, `designToken`); plural `tokens` is a count
 *   (`maxTokens`, `{ tokens: 1234 }`) and is not a credential;
 * - `key`: credential only after a qualifier that makes it secret (`apiKey`, `x-api-key`,
 *   `accessKey`, `secretAccessKey`, `privateKey`, `signingKey`, `subscriptionKey`); `cacheKey`,
 *   `primaryKey`, `publicKey` and a bare `key` are not;
 * - anything else is not (`tokenCount`, `secretName`, `authType`, `passCount`, `cookieName`).
 * DECIDED: `sessionId` (and `sid`) is NOT a credential name. Session ids are logged as identifiers
 * throughout this gateway (routes, records); masking them would make transcripts unreadable. A
 * session's secret parts are named `sessionToken`, `sessionSecret`, `sessionKey` or `cookie`.
 * Query strings add `key`, `sig` and `signature` (`?key=AIza…`, SAS `?sig=…`, `X-Amz-Signature`).
 * BOUND: names longer than MAX_NAME_CHARS are judged by their last MAX_NAME_CHARS characters.
 */

const MAX_NAME_CHARS = 64;

const SECRET_NOUNS = new Set([
  "password",
  "passwords",
  "passwd",
  "pwd",
  "pass",
  "passphrase",
  "secret",
  "secrets",
  "credential",
  "credentials",
  "creds",
  "authorization",
  "auth",
  "cookie",
  "cookies",
  "jwt",
  "bearer",
  "apikey",
  "privkey",
]);

/** `…Key` is a credential after one of these (the word just before `key`). */
const KEY_QUALIFIERS = new Set([
  "api",
  "access",
  "secret",
  "private",
  "signing",
  "encryption",
  "client",
  "master",
  "auth",
  "session",
  "account",
  "subscription",
  "hmac",
  "app",
]);

/** `…Token` is NOT a credential after one of these: it counts or points, it does not authenticate. */
const TOKEN_NON_SECRET = new Set([
  "page",
  "next",
  "prev",
  "previous",
  "continuation",
  "cursor",
  "sync",
  "cancellation",
  "cancel",
  "max",
  "min",
  "num",
  "count",
  "total",
  "input",
  "output",
  "prompt",
  "completion",
  "stop",
  "start",
  "end",
  "special",
  "pad",
  "eos",
  "bos",
  "unk",
  "sep",
  "design",
  "lexer",
  "parser",
  "syntax",
]);

const QUERY_ONLY_NAMES = new Set(["key", "sig", "signature"]);

// Runs of capitals not followed by a lowercase letter (`API` in `APIKey`), capitalized or lowercase words.
const WORD = /[A-Z]+(?![a-z])|[A-Z]?[a-z]+/g;

/** Lowercase words of a name, digits and separators dropped: `X_API_KEY2` → `["x", "api", "key"]`. */
export function nameWords(name: string): string[] {
  const tail = name.length > MAX_NAME_CHARS ? name.slice(-MAX_NAME_CHARS) : name;
  return (tail.match(WORD) ?? []).map((w) => w.toLowerCase());
}

/** True when `name` names a credential (see the module rule). */
export function isCredentialName(name: string): boolean {
  const words = nameWords(name);
  const last = words[words.length - 1];
  if (last === undefined) return false;
  if (SECRET_NOUNS.has(last)) return true;
  const before = words[words.length - 2];
  if (last === "token") return before === undefined || !TOKEN_NON_SECRET.has(before);
  if (last === "key") return before !== undefined && KEY_QUALIFIERS.has(before);
  return false;
}

/** Query parameters also treat `key`, `sig` and `signature` as credentials (`?key=…&sig=…`). */
export function isCredentialParam(name: string): boolean {
  if (isCredentialName(name)) return true;
  const words = nameWords(name);
  return QUERY_ONLY_NAMES.has(words[words.length - 1] ?? "");
}
