/**
 * Section 3: the production worker as a deploy would upload it (`wrangler deploy --dry-run` of
 * wrangler.toml), and, as its baseline, the same upload without the TypeScript compiler: when the
 * compiler is a module of its own (generated/typescript.mjs), the other modules gzipped together
 * as wrangler does; when it is inlined in the entry, the entry built with `typescript` aliased to
 * an empty stub (bench/stubs/typescript-empty.mjs). The production build is also what sections 1
 * and 4 serve. Sizes are deterministic: no rounds.
 */
import fs from "node:fs";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { dryRun, type Bundle, type Paths } from "./workers.ts";

export interface BundleFigures {
  withTs: Bundle;
  /** Null when only the production build was needed (`--only` without `bundle`). */
  withoutTs: Bundle | null;
}

/** The production build; with `baseline`, also the build without the compiler, checked both ways. */
export async function measureBundle(
  paths: Paths,
  configPath: string,
  stub: string,
  baseline: boolean,
  timeoutMs: number,
  log: (msg: string) => void,
): Promise<BundleFigures> {
  log("[3] bundle: wrangler deploy --dry-run (production build, with the TypeScript compiler)");
  const withTs = await dryRun(paths, "with-typescript", configPath, [], timeoutMs);
  if (!withTs.hasCompiler) throw new Error("the production bundle does not contain the TypeScript compiler; the comparison is meaningless");
  if (!baseline) return { withTs, withoutTs: null };
  if (withTs.compilerModule !== withTs.entry) return { withTs, withoutTs: withoutModule(withTs, withTs.compilerModule!) };
  log("[3] bundle: wrangler deploy --dry-run (typescript aliased to an empty stub)");
  const withoutTs = await dryRun(paths, "without-typescript", configPath, ["--alias", `typescript:${stub}`], timeoutMs);
  if (withoutTs.hasCompiler) throw new Error("the stubbed bundle still contains the TypeScript compiler");
  return { withTs, withoutTs };
}

/** The upload without one of its modules, sized as wrangler sizes an upload. */
function withoutModule(b: Bundle, module: string): Bundle {
  const names = (fs.readdirSync(b.outdir, { recursive: true }) as unknown[])
    .map(String)
    .filter((f) => /\.(m?js|wasm)$/.test(f) && f !== module)
    .sort();
  const contents = names.map((f) => fs.readFileSync(path.join(b.outdir, f)));
  const bytes = contents.reduce((n, c) => n + c.length, 0);
  const files = { ...b.files };
  delete files[path.basename(module)];
  const kib = (n: number): number => Math.round((n / 1024) * 100) / 100;
  return { ...b, uploadKiB: kib(bytes), gzipKiB: kib(gzipSync(Buffer.concat(contents)).length), files, hasCompiler: false, compilerModule: null };
}
