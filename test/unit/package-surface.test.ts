import { describe, expect, expectTypeOf, it } from "vitest";
import * as pkg from "codemode-edge";
import { createGateway, defineToolPlugin, type CodeModeResult, type ErrorCode, type ToolPlugin } from "codemode-edge";

describe("the package entry (codemode-edge, resolved through package.json exports)", () => {
  it("exports exactly the public values: the gateway factory, the config and plugin helpers and the error table", () => {
    expect(Object.keys(pkg).sort()).toEqual(["ERROR_CODES", "createGateway", "defineConfig", "defineToolPlugin", "isRetryable", "swarmPlugin"]);
  });

  it("builds a gateway from a plugin: a Worker handler and both Durable Object classes", () => {
    const plugin = defineToolPlugin({
      id: "pkg-probe",
      name: "Package probe",
      description: "A plugin declared through the package entry.",
      tools: (tool) => [tool({ name: "pkg_probe", description: "Echo.", parameters: { type: "object" }, execute: (input) => input })],
    });
    expectTypeOf(plugin).toMatchTypeOf<ToolPlugin>();
    const gateway = createGateway({ plugins: [plugin] });
    expect(typeof gateway.worker.fetch).toBe("function");
    expect(typeof gateway.SessionDurableObject).toBe("function");
    expect(typeof gateway.PristineImageRegistry).toBe("function");
  });

  it("the error table and the result types are the gateway's own", () => {
    expect(pkg.ERROR_CODES.rate_limited).toEqual({ status: 429, retryable: true });
    expectTypeOf<"unauthorized">().toMatchTypeOf<ErrorCode>();
    expectTypeOf<CodeModeResult["status"]>().toEqualTypeOf<"completed" | "waiting" | "failed">();
  });
});
