/** The pristine image registry: the base images parked runs are stored against, kept across deploys. */
export { createImageRegistry, PristineImageRegistry } from "./pristine-image-registry";
