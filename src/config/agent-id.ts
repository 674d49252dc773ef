/**
 * Agent ids a request can name: the `agentId` of `POST …/turns` is validated with this pattern, so a
 * config entry outside it could never be selected and is refused when the config loads.
 */
export const AGENT_ID_PATTERN = /^[A-Za-z0-9_.:\-/ ]{1,128}$/;

/** The rule in words, for error messages on both sides. */
export const AGENT_ID_RULE = "1-128 characters of letters, digits, spaces and _ . : - /";
