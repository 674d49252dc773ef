/**
 * The one import of the TypeScript compiler module (src/generated/typescript.mjs, written by
 * scripts/build-typescript-module.mjs), a module of its own in the upload (wrangler.toml
 * `[[rules]]`, `find_additional_modules`), so the main module does not hold it and only the first
 * TypeScript cell loads it (src/source/typescript-compiler.ts).
 *
 * This file sits next to src/index.ts on purpose: wrangler keeps the specifier of an additional
 * module as written, and workerd resolves it from the main module at the upload's root, so the
 * path must be the same from here and from there.
 */
export function importTypeScriptModule(): Promise<{ default: unknown }> {
  return import("./generated/typescript.mjs");
}
