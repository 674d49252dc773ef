// What the harness uses from Node, declared here because this project has no @types/node (the
// Worker does not need it, and the bench adds no dependency). The built-in modules are `any`;
// tsc (`npm run typecheck:bench`) checks everything else: figures, statistics, verdicts, report.
declare module "node:child_process" {
  export type ChildProcess = any;
  export const spawn: any;
  export const spawnSync: any;
}
declare module "node:fs";
declare module "node:http";
declare module "node:module";
declare module "node:net";
declare module "node:os";
declare module "node:path";
declare module "node:url";
declare module "node:v8";
declare module "node:vm";
declare module "node:zlib";

// Node has these; workers-types leaves them out (workerd forbids compiling wasm at run time).
interface ImportMeta {
  url: string;
}
declare namespace WebAssembly {
  function compile(bytes: BufferSource): Promise<Module>;
}
