// The size check's verdict (scripts/check-bundle-size.mjs) on modules of known sizes: random bytes
// barely compress, so their gzip size is their size plus a few bytes.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import { measure } from "../../scripts/check-bundle-size.mjs";

const KIB = 1024;
const modules = (mainKiB, otherKiB) => [
  { name: "index.js", content: randomBytes(mainKiB * KIB) },
  { name: "generated/typescript.mjs", content: randomBytes(otherKiB * KIB) },
];

test("within both budgets there is nothing to report", () => {
  const m = measure(modules(10, 20), { main: 11, total: 31 });
  assert.deepEqual(m.over, []);
  assert.deepEqual(
    m.rows.map((r) => r.name),
    ["index.js", "generated/typescript.mjs"],
  );
});

test("a main module over its budget fails even when the total fits", () => {
  const m = measure(modules(12, 1), { main: 11, total: 100 });
  assert.equal(m.over.length, 1);
  assert.match(m.over[0], /^main module 12\.\d KiB gzip > budget 11 KiB$/);
});

test("the whole upload over its budget fails even when the main module fits", () => {
  const m = measure(modules(5, 30), { main: 11, total: 31 });
  assert.equal(m.over.length, 1);
  assert.match(m.over[0], /^total upload 35\.\d KiB gzip > budget 31 KiB$/);
});

test("a build without index.js is an error, not a pass", () => {
  assert.throws(() => measure([{ name: "other.mjs", content: Buffer.from("x") }]), /no index\.js among the built modules: other\.mjs/);
});
