// A loopback TCP port that was free a moment ago: bound on 127.0.0.1:0 and released. Whoever binds it
// next must handle losing it to another process in between.
import { createServer } from "node:net";

export function freeLoopbackPort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}
