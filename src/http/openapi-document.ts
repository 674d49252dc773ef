import { OpenAPIHono } from "@hono/zod-openapi";
import { DOCUMENT_INFO, documentApi } from "./api-routes";

/**
 * The OpenAPI 3.1 document of the routes the app serves (`GET /openapi.json`), loaded and built on
 * its first request: @hono/zod-openapi, the response schemas and the route descriptions are not
 * evaluated at startup. The router itself is a plain Hono; the registry of a throwaway
 * OpenAPIHono only describes it.
 */
export function openApiDocument(mounted: Parameters<typeof documentApi>[1]): object {
  const described = new OpenAPIHono();
  documentApi(described as unknown as OpenAPIHono<never>, mounted);
  return described.getOpenAPI31Document(DOCUMENT_INFO);
}
