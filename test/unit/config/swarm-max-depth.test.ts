import { describe, expect, it } from "vitest";
import { parseGatewayConfig, resolveSwarmMaxDepth, type GatewayConfig } from "../../../src/config";

// tools.swarm.maxDepth (issue 27, "depth is bounded"): levels of sub-agents below a top-level turn,
// 1 unless configured, clamped to 1–3; a value that is not an integer is a config error.

function config(raw: unknown): GatewayConfig {
  const result = parseGatewayConfig(raw);
  if (!result.ok) throw new Error(`unexpected config error at ${result.error.path}: ${result.error.message}`);
  return result.config;
}

describe("tools.swarm.maxDepth", () => {
  it("is 1 unless configured (children spawn no children)", () => {
    expect(resolveSwarmMaxDepth(config({}), undefined)).toBe(1);
    expect(resolveSwarmMaxDepth(config({ tools: { swarm: true } }), undefined)).toBe(1);
    expect(resolveSwarmMaxDepth(config({ tools: { swarm: { enabled: true } } }), undefined)).toBe(1);
  });

  it("clamps an integer to 1–3: 9 is 3, 0 and -2 are 1", () => {
    expect(resolveSwarmMaxDepth(config({ tools: { swarm: { maxDepth: 2 } } }), undefined)).toBe(2);
    expect(resolveSwarmMaxDepth(config({ tools: { swarm: { maxDepth: 9 } } }), undefined)).toBe(3);
    expect(resolveSwarmMaxDepth(config({ tools: { swarm: { maxDepth: 0 } } }), undefined)).toBe(1);
    expect(resolveSwarmMaxDepth(config({ tools: { swarm: { maxDepth: -2 } } }), undefined)).toBe(1);
  });

  it("an agent's setting wins over the gateway's; other agents keep the gateway's", () => {
    const c = config({ tools: { swarm: { maxDepth: 2 } }, agents: { entries: { deep: { tools: { swarm: { maxDepth: 3 } } }, plain: {} } } });
    expect(resolveSwarmMaxDepth(c, "deep")).toBe(3);
    expect(resolveSwarmMaxDepth(c, "plain")).toBe(2);
  });

  it.each([1.5, "2", true, null])("refuses %j with the key's path", (maxDepth) => {
    const result = parseGatewayConfig({ agents: { entries: { deep: { tools: { swarm: { maxDepth } } } } } });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.path).toBe("agents.entries.deep.tools.swarm.maxDepth");
    expect(result.error.message).toContain("must be an integer");
  });
});
