import type { Catalog } from "../catalog";
import { boundText, commentLines, jsdocBlock, schemaType } from "../mcp";

/** The virtual declaration file of a turn's plugin namespaces (`API.read("namespaces.d.ts")`). */
export const NAMESPACES_DTS = "namespaces.d.ts";
const MAX_NAMESPACES_DTS_CHARS = 32_000;
const MAX_METHOD_DOC_CHARS = 400;

/**
 * `declare namespace <Name> { function <method>(input): Promise<…>; }` for every visible namespace,
 * each method typed from the tool it runs (its input schema, its trusted output schema) and
 * documented with that tool's name and description. Plugin text is trusted, but still cut and
 * made comment-safe. Bounded as a whole: a namespace that does not fit is named, not declared.
 */
export function renderNamespacesDts(catalog: Catalog): string {
  let out = "// Plugin namespaces of this turn: each is a global and namespaces.<Name>; a method runs the tool its comment names.\n";
  const left: string[] = [];
  for (const ns of catalog.namespaces) {
    let block = jsdocBlock(commentLines(ns.description ?? "", MAX_METHOD_DOC_CHARS), "") + `declare namespace ${ns.name} {\n`;
    for (const m of ns.methods) {
      const entry = catalog.projection.entries.find((e) => e.toolName === m.toolName && e.pluginId === ns.pluginId);
      if (!entry) continue;
      const required = Array.isArray(entry.parameters.required) && entry.parameters.required.length > 0;
      const output = entry.outputSchema ? schemaType(entry.outputSchema) : "unknown";
      block += jsdocBlock(commentLines(`Runs ${entry.callableName}. ${boundText(entry.description, MAX_METHOD_DOC_CHARS)}`), "  ");
      block += `  function ${m.name}(input${required ? "" : "?"}: ${schemaType(entry.parameters)}): Promise<${output}>;\n`;
    }
    block += "}\n";
    if (out.length + block.length > MAX_NAMESPACES_DTS_CHARS) left.push(ns.name);
    else out += block;
  }
  if (left.length > 0) out += `// Not declared here (too large): ${left.join(", ")}; their methods run the tools of the same plugin.\n`;
  return out;
}
