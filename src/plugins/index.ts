/** The public surface of src/plugins (other folders import from here). */
export { demoPlugin } from "./demo";
