// Vitest globalSetup (runs in Node, before the `gateway` project's workerd tests): the fake provider
// server (fake-provider/server.mjs: OpenAI Chat Completions and Anthropic Messages, scripted) on the
// loopback port vitest.config.ts picked at load, because the gateway's CODEMODE_CONFIG binding
// (`models.providers.fakeoai/fakeant`, baseUrl `http://127.0.0.1:<port>/v1`) is built from it before
// any worker starts. Tests read the server's root URL with `inject("fakeProviderUrl")`.
//
// The port was free when vitest.config.ts probed it; if another process took it since, the setup
// fails loudly (a new run picks a new port) rather than testing against something else.
import { createFakeProviderServer } from "./fake-provider/server.mjs";

const FAKE_PROVIDER_PORT_ENV = "CODEMODE_FAKE_PROVIDER_PORT";

export default function setup(project) {
  return startFakeProviders(project, FAKE_PROVIDER_PORT_ENV);
}

/** Starts the server on the port named by `portEnv` (one per project that needs it). */
export async function startFakeProviders(project, portEnv) {
  const port = Number(process.env[portEnv]);
  if (!Number.isInteger(port) || port <= 0) {
    throw new Error(`${portEnv} is not set: vitest.config.ts picks the fake provider server's port before the workers start`);
  }
  const server = createFakeProviderServer();
  await new Promise((resolve, reject) => {
    server.once("error", (error) =>
      reject(
        new Error(
          `the fake provider server could not listen on 127.0.0.1:${port}, the port vitest.config.ts picked (${error.code ?? error.message}): ` +
            "another process took it after the probe. Run the tests again (a new port is picked).",
        ),
      ),
    );
    server.listen(port, "127.0.0.1", resolve);
  });
  project.provide("fakeProviderUrl", `http://127.0.0.1:${port}`);
  return async () => {
    server.stopHangs();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
}
