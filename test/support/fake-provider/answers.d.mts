// Types of the parts of answers.mjs that TypeScript tests and the bench's experiments import.
export function planAnswer(wire: "openai" | "anthropic", step: object, ids: { next(prefix: string): string }): object;
export function fragments(text: string, size?: number): string[];
export function openaiEvents(plan: object, body: object, meta: object, upTo?: "end" | "text"): string[];
export function anthropicEvents(plan: object, body: object, meta: object, upTo?: "end" | "text"): string[];
