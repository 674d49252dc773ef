// Creates .dev.vars for local development (wrangler dev reads it): a dev bearer token.
// Never overwrites an existing file. Production tokens come from the GATEWAY_TOKENS secret.
import { existsSync, writeFileSync } from "node:fs";

const file = new URL("../.dev.vars", import.meta.url);
if (!existsSync(file)) {
  writeFileSync(file, `GATEWAY_TOKENS='{"codemode-dev-token":"dev"}'\n`);
  console.log("codemode-edge: wrote .dev.vars with the local dev token codemode-dev-token");
}
