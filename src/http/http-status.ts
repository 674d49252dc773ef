import type { ContentfulStatusCode } from "hono/utils/http-status";
import { statusOf, type ErrorCode } from "../errors";

/** The status an error code answers with at the HTTP edge (the table in src/errors). */
export function httpStatus(code: ErrorCode): ContentfulStatusCode {
  return statusOf(code) as ContentfulStatusCode;
}
