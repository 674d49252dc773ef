// Node-side helpers for test/unit/docs-examples.test.ts (the repo's TypeScript has no Node types).
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../..");

/** README.md and every markdown file under docs/, as `{ file, text }` with repo-relative names. */
export function readDocs() {
  const docs = readdirSync(join(ROOT, "docs"), { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => join(ROOT, "docs", name));
  return [join(ROOT, "README.md"), ...docs].map((path) => ({ file: relative(ROOT, path), text: readFileSync(path, "utf8") }));
}

/** `undefined` when `sh -n` (or `bash -n`) accepts the script, else its complaint. */
export function shellSyntaxError(shell, script) {
  const run = spawnSync(shell, ["-n"], { input: script, encoding: "utf8" });
  return run.status === 0 ? undefined : run.stderr.trim() || `${shell} -n exited ${run.status}`;
}
