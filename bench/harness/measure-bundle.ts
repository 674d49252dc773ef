/**
 * Section 3: the production worker as a deploy would upload it (`wrangler deploy --dry-run` of
 * wrangler.toml), and the same entry with the lazily imported TypeScript compiler aliased to an
 * empty stub (bench/stubs/typescript-empty.mjs), as its baseline. The production build is also
 * what sections 1 and 4 serve. Sizes are deterministic: no rounds.
 */
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
  log("[3] bundle: wrangler deploy --dry-run (typescript aliased to an empty stub)");
  const withoutTs = await dryRun(paths, "without-typescript", configPath, ["--alias", `typescript:${stub}`], timeoutMs);
  if (withoutTs.hasCompiler) throw new Error("the stubbed bundle still contains the TypeScript compiler");
  return { withTs, withoutTs };
}
