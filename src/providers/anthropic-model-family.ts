/**
 * What the AI SDK's Anthropic model catalog (@ai-sdk/anthropic 4.0.105: its runtime rules per model
 * id, read by prepareRequest) decides for one of our Messages calls. Only what our inputs reach is
 * kept: the output-token ceiling, whether sampling settings are taken, whether the id is one it
 * knows (known ids get `max_tokens` capped at the ceiling), and native structured output (with
 * function tools it adds the `structured-outputs-2025-11-13` beta). Thinking, effort and forced
 * tool choice never apply: we pass no provider options but `toolStreaming: false`.
 * test/unit/providers/lean-messages-request.test.ts holds it to the SDK's bytes per family.
 */
export type MessagesFamilyRules = { maxOutputTokens: number; sampling: boolean; known: boolean; structuredOutput: boolean };

const legacy: MessagesFamilyRules = { maxOutputTokens: 4096, sampling: true, known: true, structuredOutput: false };
const current: MessagesFamilyRules = { maxOutputTokens: 128_000, sampling: true, known: true, structuredOutput: true };
const currentWithoutSampling: MessagesFamilyRules = { ...current, sampling: false };

/** The SDK's runtime rules, first match wins (its `runtimeRules`, in its order). */
const RULES: Array<[(id: string) => boolean, MessagesFamilyRules]> = [
  [
    (id) => ["claude-sonnet-5-5", "claude-opus-5-5", "claude-haiku-5-5", "claude-opus-5", "claude-fable-5"].some((f) => id.includes(f)),
    currentWithoutSampling,
  ],
  [(id) => ["claude-opus-4-8", "claude-opus-4-7", "claude-sonnet-5"].some((f) => id.includes(f)), currentWithoutSampling],
  [(id) => id.includes("claude-sonnet-4-6") || id.includes("claude-opus-4-6"), current],
  [
    (id) => ["claude-sonnet-4-5", "claude-opus-4-5", "claude-haiku-4-5"].some((f) => id.includes(f)),
    { ...legacy, maxOutputTokens: 64_000, structuredOutput: true },
  ],
  [(id) => id.includes("claude-opus-4-1"), { ...legacy, maxOutputTokens: 32_000, structuredOutput: true }],
  [(id) => /claude-sonnet-4(?:-|@)/.test(id), { ...legacy, maxOutputTokens: 64_000 }],
  [(id) => /claude-opus-4(?:-|@)/.test(id), { ...legacy, maxOutputTokens: 32_000 }],
  [(id) => id.includes("claude-3-haiku"), legacy],
  [(id) => /claude-(?:instant(?:-|$)|v?2(?=$|[-.:])|3(?=$|[-.]))/.test(id), { ...legacy, known: false }],
];

export function messagesFamilyRules(modelId: string): MessagesFamilyRules {
  const rule = RULES.find(([matches]) => matches(modelId));
  if (rule) return rule[1];
  // An unknown `claude-` id is taken for a current model; anything else for an old one.
  return modelId.includes("claude-") ? { ...currentWithoutSampling, known: false } : { ...legacy, known: false };
}
