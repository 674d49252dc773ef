/**
 * Masks credentials in text that is about to be logged (debug payload snapshots). Masks are full
 * (`***`), never a partial reveal. What is masked (the shapes live in secret-shapes.ts, shared with
 * the stored-source and preview redaction):
 * - registered secret values (the gateway's bearer tokens, provider keys), 8+ chars;
 * - recognizable tokens: OpenAI/Anthropic `sk-…`, GitHub, GitLab, Slack, AWS key ids, Google,
 *   Stripe, npm, Hugging Face, SendGrid, JWTs, PEM private keys, `Bearer`/`Basic` values, URL
 *   userinfo and credential query parameters;
 * - values of credential-named keys (`"apiKey": "…"`, `password=…`, `token: …`; credential-names.ts);
 * - the configured `logging.redactPatterns`, when given.
 * Bound: linear in the text (see secret-shapes.ts). Idempotent.
 */
import { maskKeyedValues, maskSecrets } from "./secret-shapes";

export function redactSecrets(text: string, secrets: readonly string[] = [], patterns: readonly RegExp[] = []): string {
  return maskKeyedValues(maskSecrets(text, { secrets, patterns }));
}
