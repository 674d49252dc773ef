import { QuickJS } from "quickjs-wasi";
import { QUICKJS_MODULE } from "../wasm/quickjs";
export default {
  async fetch(): Promise<Response> {
    const vm = await QuickJS.create({ wasm: QUICKJS_MODULE });
    const v = vm.evalCode("1+2").consume((h) => h.toNumber());
    vm.dispose();
    return Response.json({ v });
  },
};
export class SessionDurableObject {
  constructor(readonly ctx: DurableObjectState) {}
  async fetch() { return new Response("ok"); }
}
