/** The pristine image registry: the base images parked runs are stored against, kept across deploys. */
export { PristineImageRegistry } from "./pristine-image-registry";
