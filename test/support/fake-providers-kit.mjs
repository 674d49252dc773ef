// Vitest globalSetup of the `kit` project: its own fake provider server (fake-providers.mjs), on the
// port vitest.config.ts picked for the kit's CODEMODE_CONFIG (projects may run at the same time).
import { startFakeProviders } from "./fake-providers.mjs";

export default function setup(project) {
  return startFakeProviders(project, "CODEMODE_FAKE_PROVIDER_PORT_KIT");
}
