/** The OpenAI- and Anthropic-compatible routes (`/v1/chat/completions`, `/v1/messages`, `/v1/models`), mounted by the gateway. */
import type { Facades } from "../http";
import { messages } from "./anthropic-messages";
import { facadeErrorBody } from "./facade-errors";
import { chatCompletions, listModels } from "./openai-chat-completions";

export const facades: Facades = {
  routes: [
    { method: "POST", path: "/v1/chat/completions", handle: chatCompletions },
    { method: "POST", path: "/v1/messages", handle: messages },
    { method: "GET", path: "/v1/models", handle: async (_req, ctx) => listModels(ctx) },
  ],
  errorBody: facadeErrorBody,
};
