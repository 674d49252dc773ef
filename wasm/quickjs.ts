// The QuickJS-WASI engine as a compiled WebAssembly.Module. workerd forbids compiling
// wasm from bytes at run time, so the module must come through the bundler's import.
// quickjs.wasm is quickjs-wasi's own build with a stack low-water mark added
// (scripts/instrument-quickjs.mjs; `npm test` checks it is exactly that).
import quickjsModule from "./quickjs.wasm";

export const QUICKJS_MODULE: WebAssembly.Module = quickjsModule;
