/**
 * The TypeScript compiler (the JS API of `typescript` 5.9, ~3.5 MB of minified JavaScript), loaded
 * lazily on the first TypeScript cell from a module of its own in the upload
 * (src/typescript-module.ts), so JavaScript cells never load or evaluate it.
 * Starting it costs a few hundred milliseconds of CPU once per isolate; the cell that causes it
 * pays for it (see cell-budget.ts).
 */
import type * as TS from "typescript";
import { logRecord } from "../observability";
import { importTypeScriptModule } from "../typescript-module";

export type TypeScriptApi = typeof TS;

let compiler: TypeScriptApi | undefined;
let loading: Promise<TypeScriptApi> | undefined;

/** True once the TypeScript compiler module has been loaded (never before the first transpile). */
export function isTypeScriptCompilerLoaded(): boolean {
  return compiler !== undefined;
}

/**
 * `typescript.js` picks its host "system" when it is first evaluated: if `process` looks like
 * Node's (`process.nextTick` set, `process.browser` unset) and `require` exists, it builds a
 * Node file-system host that reads `__filename`, `process.cwd()`, `fs`, `os` ... With
 * `nodejs_compat` (on by default for this compatibility date) workerd has such a `process`, and
 * the generated module has esbuild's `require` shim, so evaluation throws
 * "__filename is not defined". `process.browser = true` is the switch TypeScript itself honours
 * for browser-like hosts; it is set only while the compiler module evaluates and then restored.
 * A transpile-only compiler never needs a host system.
 */
async function importCompilerAsBrowserHost(): Promise<unknown> {
  const proc = (globalThis as { process?: Record<string, unknown> }).process;
  const patch = proc !== undefined && proc !== null && typeof proc === "object" && !proc.browser;
  const hadOwn = patch && Object.prototype.hasOwnProperty.call(proc, "browser");
  const previous = patch ? proc.browser : undefined;
  if (patch) {
    try {
      proc.browser = true;
    } catch (error) {
      // A frozen `process`: nothing to restore; the import reports its own error if any.
      logRecord("host_error", { where: "typescript.process_patch", error });
    }
  }
  try {
    return await importTypeScriptModule();
  } finally {
    if (patch) {
      try {
        if (hadOwn) proc.browser = previous;
        else delete proc.browser;
      } catch (error) {
        logRecord("host_error", { where: "typescript.process_restore", error });
      }
    }
  }
}

/** The compiler, loading it on first use; concurrent first calls share one load. */
export async function loadTypeScriptCompiler(): Promise<TypeScriptApi> {
  if (compiler) return compiler;
  loading ??= importCompilerAsBrowserHost().then((mod) => {
    // `typescript` is CommonJS: bundlers expose `module.exports` as `default` (and sometimes
    // copy its properties onto the namespace too).
    const api = ((mod as { default?: TypeScriptApi }).default ?? mod) as TypeScriptApi;
    if (typeof api.transpileModule !== "function") throw new Error("typescript.transpileModule is unavailable");
    compiler = api;
    return api;
  });
  try {
    return await loading;
  } catch (error) {
    loading = undefined; // allow a later retry
    throw error;
  }
}
