import { MAX_PROVIDER_MESSAGE_CHARS } from "../limits";
import { redactSecrets } from "../observability";
import type { RedactOptions } from "../observability";

/**
 * A provider's text (its error message, an error event in its stream) as a client may see it:
 * redacted like the other text the gateway echoes (the key, registered secrets, recognizable
 * tokens, `logging.redactPatterns`), then cut to MAX_PROVIDER_MESSAGE_CHARS characters (UTF-16
 * code units; a surrogate pair is never split) followed by `…[N more characters]`, N counting the
 * redacted text left out. Redaction comes first, so the cut can never expose part of a secret.
 * Linear in the text (the wire client has already read it whole).
 */
export function providerMessage(text: string, redaction: RedactOptions): string {
  const masked = redactSecrets(text, redaction.secrets, redaction.patterns);
  if (masked.length <= MAX_PROVIDER_MESSAGE_CHARS) return masked;
  const last = masked.charCodeAt(MAX_PROVIDER_MESSAGE_CHARS - 1);
  const end = last >= 0xd800 && last <= 0xdbff ? MAX_PROVIDER_MESSAGE_CHARS - 1 : MAX_PROVIDER_MESSAGE_CHARS;
  return `${masked.slice(0, end)}…[${masked.length - end} more characters]`;
}
