/** src/generated/typescript.mjs, the TypeScript compiler module; see build-typescript-module.mjs. */
export const TYPESCRIPT_MODULE: string;
/** Builds the module unless an up-to-date one exists; true when it wrote the file. */
export function buildTypeScriptModule(options?: { force?: boolean }): Promise<boolean>;
