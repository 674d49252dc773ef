/**
 * What the AI SDK's OpenAI model catalog (@ai-sdk/openai 4.0.118: createOpenAILanguageModelEntry,
 * then the chat model's getArgs) decides for one of our Chat Completions calls, per wire model id.
 * Only the rules our inputs reach are kept: we never pass provider options, a `reasoning` setting,
 * penalties, logprobs or a response format, so those branches of getArgs never fire for us, and
 * the catalog's per-model definitions differ only in what those branches read (reasoning efforts;
 * sampling at effort "none" for three gpt-6 ids, which never get effort "none" from us).
 * test/unit/providers/lean-chat-request.test.ts sends the corpus for an id of each family both
 * ways and requires identical bytes.
 */
export type ChatFamilyRules = {
  /** Reasoning models: system messages as `developer`, `max_completion_tokens` instead of `max_tokens`, no temperature/top_p. */
  reasoning: boolean;
  /**
   * gpt-5.6 and later 5.x: no function tools with reasoning on Chat Completions, so a call with
   * tools gets `reasoning_effort: "none"` and, at that effort, keeps temperature and top_p (5.x from
   * 5.1 on samples at effort "none").
   */
  effortNoneWithTools: boolean;
  /** False for the search-preview models, which take no temperature. */
  temperature: boolean;
};

/** The SDK's family expressions (getOSeriesVersion, getGptVersion). */
const O_SERIES = /^o(\d+)(?:-|$)/;
const GPT = /^gpt-(\d+)(?:\.(\d+))?(?:-(.+))?$/;

export function chatFamilyRules(modelId: string): ChatFamilyRules {
  const gpt = GPT.exec(modelId);
  const major = gpt ? Number(gpt[1]) : undefined;
  const minor = gpt?.[2] === undefined ? undefined : Number(gpt[2]);
  // `gpt-5-chat-latest` is a chat model; `gpt-5.1-chat-latest` (it has a minor) reasons.
  const gptChat = minor === undefined && (gpt?.[3]?.startsWith("chat") ?? false);
  return {
    reasoning: O_SERIES.test(modelId) || (major !== undefined && major >= 5 && !gptChat),
    effortNoneWithTools: major === 5 && (minor ?? 0) >= 6,
    temperature: !modelId.startsWith("gpt-4o-search-preview") && !modelId.startsWith("gpt-4o-mini-search-preview"),
  };
}
