// This repo's own Worker: one consumer of the package, importing it by name like any other.
import { createGateway, swarmPlugin } from "codemode-edge";
import { demoPlugin } from "./plugins";

const gateway = createGateway({ plugins: [swarmPlugin, demoPlugin] });

export default gateway.worker;
export class SessionDurableObject extends gateway.SessionDurableObject {}
export class PristineImageRegistry extends gateway.PristineImageRegistry {}
