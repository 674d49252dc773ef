import { describe, expect, it } from "vitest";
import { registeredSecrets } from "../../../src/session/registered-secrets";
import type { GatewayConfig } from "../../../src/config";

// registeredSecrets keeps the list it built for the last set of values (it is asked several times
// per tool call). Two different sets must never share a list: a secret the list lacks goes unmasked.

const config = { providers: { a: { apiKey: "env:KEY_A" }, b: { apiKey: "env:KEY_B" } } } as unknown as GatewayConfig;

describe("the registered secrets of one set of values are never another set's", () => {
  it("a secret holding a NUL is not taken for the two secrets around it", () => {
    const joined = registeredSecrets({ KEY_A: "alpha-secret-1\u0000bravo-secret-2" }, config, undefined);
    expect(joined).toContain("alpha-secret-1\u0000bravo-secret-2");
    const apart = registeredSecrets({ KEY_A: "alpha-secret-1", KEY_B: "bravo-secret-2" }, config, undefined);
    expect(apart).toContain("alpha-secret-1");
    expect(apart).toContain("bravo-secret-2");
    // And back: the joined secret is masked whole again.
    expect(registeredSecrets({ KEY_A: "alpha-secret-1\u0000bravo-secret-2" }, config, undefined)).toContain("alpha-secret-1\u0000bravo-secret-2");
  });

  it("the same values give the same list (kept, not rebuilt)", () => {
    const env = { KEY_A: "charlie-secret-3", KEY_B: "delta-secret-4" };
    expect(registeredSecrets(env, config, undefined)).toBe(registeredSecrets({ ...env }, config, undefined));
  });
});
