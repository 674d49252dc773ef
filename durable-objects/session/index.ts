/** The session Durable Object: one per session (tenant + session id), built for a gateway's plugins. */
export { createSessionObject, type SessionEnv, type SessionObjectOptions } from "./session-object";
