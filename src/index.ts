import { createGateway } from "./gateway";
import { demoPlugin } from "./plugins";

const gateway = createGateway({ plugins: [demoPlugin] });

export default gateway.worker;
export class SessionDurableObject extends gateway.SessionDurableObject {}
export class PristineImageRegistry extends gateway.PristineImageRegistry {}
