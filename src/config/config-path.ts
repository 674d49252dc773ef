const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/**
 * Extends a key path the way the docs write it: `tools.codeMode.timeoutMs`,
 * `agents.defaults.models["openai/gpt-5.6"].codeMode`, `models.providers.openai.models[2].id`.
 * Keys that are not plain identifiers are quoted so a path is unambiguous.
 */
export function configPath(parent: string, key: string | number): string {
  if (typeof key === "number") return `${parent}[${key}]`;
  if (IDENTIFIER.test(key)) return parent === "" ? key : `${parent}.${key}`;
  return `${parent}[${JSON.stringify(key)}]`;
}
