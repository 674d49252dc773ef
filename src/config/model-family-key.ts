import type { ModelRow } from "./gateway-config";

/**
 * The vendor's own name for a model's weights, used to group catalog rows that describe the same upstream
 * model across providers: the last path segment of `upstreamModel ?? id`, lower-cased. So
 * `together/deepseek-ai/DeepSeek-V4-Pro` and `deepseek/deepseek-v4-pro` share the key `deepseek-v4-pro`,
 * and kimi `k3` (upstreamModel `kimi-k3`) groups with `moonshot/kimi-k3`.
 */
export function modelFamilyKey(row: Pick<ModelRow, "id" | "upstreamModel">): string {
  const name = row.upstreamModel ?? row.id;
  const slash = name.lastIndexOf("/");
  return (slash === -1 ? name : name.slice(slash + 1)).toLowerCase();
}
