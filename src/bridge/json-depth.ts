import { MAX_JSON_DEPTH } from "../limits";

/** Linear scan: true when `text` (valid JSON) nests arrays/objects deeper than `max`. */
export function jsonTooDeep(text: string, max = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \\ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 /* [ */ || c === 123 /* { */) {
      if (++depth > max) return true;
    } else if (c === 93 /* ] */ || c === 125 /* } */) depth--;
  }
  return false;
}

/**
 * Iterative: true when a parsed value nests arrays/objects deeper than `max`. For values that
 * arrived parsed (an MCP listing): host code that copies or stores them recurses, and would
 * overflow its stack on a value nested thousands of levels deep.
 */
export function valueTooDeep(value: unknown, max = MAX_JSON_DEPTH): boolean {
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 1 }];
  while (stack.length > 0) {
    const { value: v, depth } = stack.pop()!;
    if (v === null || typeof v !== "object") continue;
    if (depth > max) return true;
    for (const child of Object.values(v)) if (child !== null && typeof child === "object") stack.push({ value: child, depth: depth + 1 });
  }
  return false;
}
