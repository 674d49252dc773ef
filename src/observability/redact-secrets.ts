/**
 * Masks credentials in text that is about to be logged (debug payload snapshots; later, stored
 * transcripts). Masks are full (`***`), never a partial reveal. What is masked:
 * - recognizable tokens: OpenAI/Anthropic `sk-…`, GitHub `ghp_…`/`github_pat_…`, Slack `xox?-…`,
 *   AWS `AKIA…`, Google `AIza…`, JWTs, `Bearer <token>`;
 * - values of credential-named keys (`"apiKey": "…"`, `password=…`, `token: …`);
 * - any registered secret value passed in (the gateway's bearer tokens, provider keys), 8+ chars.
 * Bound: linear in the text (each pattern is one pass, none can backtrack catastrophically).
 */
const MASK = "***";

const TOKEN_PATTERNS: readonly RegExp[] = [
  /\bsk-(?:ant-)?[A-Za-z0-9_-]{16,}/g,
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g,
  /\bgithub_pat_[A-Za-z0-9_]{20,}/g,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
  /\bAIza[0-9A-Za-z_-]{35}/g,
  /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g,
];
const BEARER = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi;
// "apiKey": "value" (JSON) or api_key=value / token: value (text); the key is kept, the value masked.
const KEYED =
  /((?:"|\b)(?:api[_-]?key|access[_-]?key|secret|client[_-]?secret|password|passwd|token|auth[_-]?token|authorization)"?\s*[:=]\s*)("(?:[^"\\]|\\.){1,512}"|[^\s,;"'}]{4,512})/gi;

export function redactSecrets(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const secret of secrets) if (secret.length >= 8) out = out.split(secret).join(MASK);
  for (const re of TOKEN_PATTERNS) out = out.replace(re, MASK);
  out = out.replace(BEARER, (_m, scheme: string) => `${scheme} ${MASK}`);
  out = out.replace(KEYED, (_m, key: string, value: string) => `${key}${value.startsWith('"') ? `"${MASK}"` : MASK}`);
  return out;
}
