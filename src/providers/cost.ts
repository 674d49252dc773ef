import type { ModelCost } from "../config";
import { tokenCount } from "./token-count";
import type { ModelUsage } from "./types";

const PER_MILLION = 1_000_000;

/**
 * What one model call cost in USD, from the catalog row's prices (USD per 1M tokens). Each usage field
 * is billed at its own tier: `inputTokens` (not read from or written to the cache) at `input`,
 * `cacheReadTokens` at `cacheRead`, `cacheWriteTokens` at `cacheWrite`, `outputTokens` at `output`.
 * A tier the row leaves out counts 0; a model with no prices at all (no `cost`, or an empty one) has
 * no cost: `undefined`, never a misleading 0.
 * Never negative or non-finite: counts pass `tokenCount` again (usage may be a stored total from an
 * older gateway), prices are non-negative by config; a product past the double range (an absurd
 * price times a clamped count) has no figure either, `undefined`.
 */
export function costUsd(usage: ModelUsage, cost?: ModelCost): number | undefined {
  if (cost === undefined) return undefined;
  const { input, output, cacheRead, cacheWrite } = cost;
  if (input === undefined && output === undefined && cacheRead === undefined && cacheWrite === undefined) return undefined;
  const micro =
    tokenCount(usage.inputTokens) * (input ?? 0) +
    tokenCount(usage.outputTokens) * (output ?? 0) +
    tokenCount(usage.cacheReadTokens) * (cacheRead ?? 0) +
    tokenCount(usage.cacheWriteTokens) * (cacheWrite ?? 0);
  const usd = micro / PER_MILLION;
  return Number.isFinite(usd) && usd >= 0 ? usd : undefined;
}
