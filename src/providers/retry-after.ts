import { MAX_RETRY_AFTER_SECONDS } from "../limits";

/**
 * `Retry-After` of a provider's 429 (RFC 9110 §10.2.3): delay-seconds (`1*DIGIT`) or an HTTP date.
 * Whole seconds from 0 to MAX_RETRY_AFTER_SECONDS: a longer delay or a later date is clamped to it,
 * a date in the past is 0. Undefined when absent or not one of those two forms (`1.2`, `-5`, `soon`):
 * the value goes out as a header and in the body, so only a plain integer ever leaves.
 */
export function retryAfterSeconds(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  // A long digit string is a huge number (or Infinity): clamped like any other long delay.
  if (/^\d+$/.test(text)) return Math.min(Number(text), MAX_RETRY_AFTER_SECONDS);
  // An HTTP date names its weekday and month; anything else (a negative number) is unreadable.
  if (!/[A-Za-z]/.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.min(Math.max(0, Math.ceil((at - now) / 1000)), MAX_RETRY_AFTER_SECONDS);
}
