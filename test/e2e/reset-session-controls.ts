import { afterEach } from "vitest";
import { resetSessionControls } from "./entry";
import { resetCodecFaults } from "./session-controls";

// What a test set on the session objects' dependencies (test/e2e/entry.ts) ends with the test.
afterEach(() => {
  resetSessionControls();
  resetCodecFaults();
});
