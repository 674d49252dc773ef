/**
 * Report, section 3: bundle size of the production worker with and without the TypeScript
 * compiler. Pure.
 */
import type { BundleFigures } from "./measure-bundle.ts";
import { kib, ratio, table } from "./report-format.ts";
import type { Bundle } from "./workers.ts";

export function reportBundle(f: BundleFigures): string[] {
  const w = f.withTs;
  const wo = f.withoutTs;
  if (!wo) return [];
  const L: string[] = [];
  L.push("## 3. Bundle size (production worker, `wrangler deploy --dry-run`)", "");
  L.push(
    'Sizes as wrangler prints them (`Total Upload … / gzip …`, every module of the upload). "Without" is the same upload',
    w.compilerModule && w.compilerModule !== w.entry
      ? `without its TypeScript compiler module (${w.compilerModule}, loaded on the first TypeScript cell), the rest gzipped together as wrangler does.`
      : "(wrangler.toml, src/index.ts) built with `--alias typescript:bench/stubs/typescript-empty.mjs`, i.e. the lazily imported TypeScript compiler removed.",
    "Deterministic for a given tree: no rounds.",
    "",
  );
  const row = (name: string, b: Bundle, base: Bundle | null): string[] => [
    name,
    b.uploadKiB.toFixed(2),
    b.gzipKiB.toFixed(2),
    kib(b.files["entry.js"] ?? 0),
    kib(b.files["typescript.mjs"] ?? 0),
    kib(b.files["quickjs.wasm"] ?? 0),
    base ? ratio(b.gzipKiB, base.gzipKiB) : "1×",
  ];
  L.push(
    ...table(
      ["bundle", "total upload (KiB)", "gzip (KiB)", "main module (KiB)", "TypeScript module (KiB)", "quickjs.wasm (KiB)", "ratio vs without (gzip)"],
      [row("**baseline**: without the TypeScript compiler", wo, null), row("with the TypeScript compiler (as deployed)", w, wo)],
    ),
    "",
    `The TypeScript compiler adds ${(w.uploadKiB - wo.uploadKiB).toFixed(0)} KiB uncompressed and ${(w.gzipKiB - wo.gzipKiB).toFixed(0)} KiB gzip to the upload.`,
    "For scale: Cloudflare's Worker size limit is 3 MB (Free) / 10 MB (Paid) after compression.",
    "",
  );
  return L;
}
