import { describe, expect, it } from "vitest";
import { maskSecrets } from "../../../src/observability";

// Shapes that a hostile text repeats at every position (a hostile tester's inputs: each took seconds
// to minutes through a quadratic scan). What each must give; its cost is linear by construction
// (secret-shapes.ts, BOUND), and the bench-free check here is the answer on the largest input a
// request can carry (1 MiB).

const JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";
const MIB = 1 << 20;

describe("secret shapes on hostile repetitions", () => {
  it("a megabyte of `eyJ-` is no token: unchanged; a token after such a run is masked", () => {
    const run = "eyJ-".repeat(MIB / 4);
    expect(maskSecrets(run)).toBe(run);
    expect(maskSecrets(`${run} ${JWT} end`)).toBe(`${run} *** end`);
  });

  it('a JWT starts where its characters start: `x ${JWT}` and `"${JWT}"` are masked, one glued to a word is left', () => {
    expect(maskSecrets(`x ${JWT}`)).toBe("x ***");
    expect(maskSecrets(`"${JWT}"`)).toBe('"***"');
    expect(maskSecrets(`a-${JWT}`)).toBe(`a-${JWT}`);
  });

  it("a megabyte of PEM BEGIN lines with no END: each becomes a mask, the rest is kept", () => {
    const unit = "-----BEGIN PRIVATE KEY-----!";
    const n = Math.floor(MIB / unit.length);
    expect(maskSecrets(unit.repeat(n))).toBe("***!".repeat(n));
  });

  it("a PEM block with an END after many cut-short ones is masked whole", () => {
    const cut = "-----BEGIN PRIVATE KEY-----!".repeat(1000);
    const block = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----";
    expect(maskSecrets(`${cut}${block} after`)).toBe(`${"***!".repeat(1000)}*** after`);
  });
});
