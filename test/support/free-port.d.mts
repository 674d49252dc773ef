/** A loopback TCP port that was free a moment ago (free-port.mjs). */
export function freeLoopbackPort(): Promise<number>;
