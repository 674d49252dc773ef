import { describe, expect, it } from "vitest";
import { fnv1a64, opaqueToolId } from "../../../src/catalog";

// Tool ids and output digests are stored (turn rows, parked runs): the 32-bit-halves FNV-1a must
// give exactly the digits the BigInt version gave.

function reference(text: string): string {
  let h = 0xcbf29ce484222325n;
  for (let i = 0; i < text.length; i++) {
    h ^= BigInt(text.charCodeAt(i));
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return h.toString(16).padStart(16, "0");
}

describe("fnv1a64 without BigInt", () => {
  it("gives the reference digits for ASCII, non-BMP, control and long texts", () => {
    const texts = ["", "a", "foobar", "mcp\u0000srv\u0000tool", "ünïcødé ✓ 😀", "\uffff\ud800", "x".repeat(10_000)];
    let seed = 7;
    for (let n = 0; n < 200; n++) {
      let t = "";
      for (let i = 0; i < n; i++) {
        seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
        t += String.fromCharCode(seed % 0x10000);
      }
      texts.push(t);
    }
    for (const t of texts) expect(fnv1a64(t)).toBe(reference(t));
  });

  it('known vectors: FNV-1a 64 of the empty string and of "a"', () => {
    expect(fnv1a64("")).toBe("cbf29ce484222325");
    expect(fnv1a64("a")).toBe("af63dc4c8601ec8c");
    expect(opaqueToolId("mcp", "srv", "t")).toBe("t" + reference("mcp\u0000srv\u0000t"));
  });
});
