import { GatewayError } from "../errors";

/** A request field the facade refuses: `invalid_request` naming the client's own path (`param`). */
export const fail = (param: string, message: string): never => {
  throw new GatewayError("invalid_request", message, param);
};

/** A plain JSON object (not null, not an array). */
export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
