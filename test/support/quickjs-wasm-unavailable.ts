/**
 * What the engine's wasm import (wasm/quickjs.ts) resolves to in the Node `unit` project (vitest.config.ts). The
 * engine's wasm import is a compiled WebAssembly.Module only under workerd (wrangler's module
 * rules); Node cannot import it. Pure modules import the runtime's barrel without ever starting a
 * VM, so they load with this stand-in; anything that does start a VM (QuickJS.create) touches it
 * and fails naming the fix: such a test belongs to the workerd `gateway` project.
 */
const refuse = (): never => {
  throw new Error("QuickJS runs only under workerd: this test starts a VM, so it belongs in the gateway project, not `unit` (vitest.config.ts)");
};

const unavailable = new Proxy(
  {},
  { get: refuse, has: refuse, getPrototypeOf: refuse, ownKeys: refuse, getOwnPropertyDescriptor: refuse },
) as WebAssembly.Module;

export default unavailable;
