// The QuickJS-WASI engine as a compiled WebAssembly.Module. workerd forbids compiling
// wasm from bytes at run time, so the module must come through the bundler's import.
import quickjsModule from "quickjs-wasi/quickjs.wasm";

export const QUICKJS_MODULE: WebAssembly.Module = quickjsModule;
