/**
 * The router's own checks of path parameters, and the spellings of a client tool's schemas: plain
 * values, apart from the zod schemas (request-schemas.ts) so the router and the client tool
 * projection do not load zod at startup.
 */

// Their checks and statuses are the router's: a bad session id is 400, a bad turn id 404.
// "." and ".." are not session ids: a URL's path resolves them away, so no route could reach that session.
export const SESSION_ID = /^(?!\.\.?$)[A-Za-z0-9._\-]{1,128}$/;
export const SESSION_ID_RULE = "1-128 characters of [A-Za-z0-9._-], not . or ..";
export const TURN_ID = /^[A-Za-z0-9\-]{1,64}$/;
export const APPROVAL_ID = /^appr_[A-Za-z0-9\-]{1,64}$/;
// Tool names are plugin-defined (spaces and dots included); only control characters are refused.
export const TOOL_NAME = /^[^\u0000-\u001f\u007f]{1,128}$/;

/** The same schema under the spellings clients use: ours/OpenAI, MCP, Anthropic (input); output. */
export const CLIENT_TOOL_SPELLINGS = {
  input: ["parameters", "inputSchema", "input_schema"] as const,
  output: ["outputSchema", "output_schema"] as const,
};
