export function readDocs(): { file: string; text: string }[];
export function shellSyntaxError(shell: "sh" | "bash", script: string): string | undefined;
