import { SELF } from "cloudflare:test";
import { it, expect } from "vitest";
it("runs quickjs", async () => {
  const r = await SELF.fetch("http://x/");
  expect(await r.json()).toEqual({ v: 3 });
});
