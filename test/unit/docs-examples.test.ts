import { describe, expect, it } from "vitest";
import { loadGatewayConfig, resolveActivation } from "../../src/config";
import { readDocs, shellSyntaxError } from "../support/docs-files.mjs";

/**
 * The shell and JSON examples of README.md and docs/ (issue 23, "docs a newcomer reads"):
 * - a ```sh block is valid POSIX sh (`sh -n`); a block that needs bash is fenced ```bash (`bash -n`);
 * - a ```json block is a configuration document: `CODEMODE_CONFIG` set to it loads through the gateway's own
 *   loader and keeps code mode on (CODEMODE_CONFIG replaces the default, so a snippet without
 *   `tools.codeMode` would silently turn it off). A JSON block that is not config (an answer, a body) says so
 *   with `<!-- not-config -->` on the line before its fence: an explicit marker, not a guess by shape;
 * - a `--var CODEMODE_CONFIG:'…'` inside a shell block is checked the same way;
 * - every fence names its language, from a known list, so no example escapes these checks unlabelled.
 */

const NOT_CONFIG = "<!-- not-config -->";
const KNOWN_LANGUAGES = new Set(["sh", "bash", "json", "js", "ts", "text", "toml"]);

type Block = { file: string; line: number; language: string; text: string; notConfig: boolean };

/** Fenced blocks of one markdown text: an opening fence at the start of a line, closed by the same fence. */
function fencedBlocks(file: string, markdown: string): Block[] {
  const lines = markdown.split("\n");
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(`{3,})([\w-]*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const fence = open[1]!;
    const start = i;
    let end = i + 1;
    while (end < lines.length && lines[end]!.trim() !== fence) end++;
    let before = start - 1;
    while (before >= 0 && lines[before]!.trim() === "") before--;
    blocks.push({
      file,
      line: start + 1,
      language: open[2]!,
      text: lines.slice(start + 1, end).join("\n"),
      notConfig: before >= 0 && lines[before]!.trim() === NOT_CONFIG,
    });
    i = end;
  }
  return blocks;
}

/** `undefined` when the text loads as CODEMODE_CONFIG with code mode on, else why not. */
function configProblem(text: string): string | undefined {
  const result = loadGatewayConfig({ CODEMODE_CONFIG: text });
  if (!result.ok) return `${result.error.message} (at ${result.error.path})`;
  if (resolveActivation(result.config, {}).enabled === false) return "the document turns code mode off (no tools.codeMode)";
  return undefined;
}

/** The `CODEMODE_CONFIG:'…'` values a shell block passes to `npm start -- --var`. */
function inlineConfigs(script: string): string[] {
  return [...script.matchAll(/CODEMODE_CONFIG:'([^']*)'/g)].map((m) => m[1]!);
}

const blocks = readDocs().flatMap(({ file, text }) => fencedBlocks(file, text));
const where = (b: Block) => `${b.file}:${b.line}`;

describe("docs examples", () => {
  it("finds the README's shell examples and the docs' config documents", () => {
    expect(blocks.filter((b) => b.file === "README.md" && b.language === "sh").length).toBeGreaterThanOrEqual(4);
    expect(blocks.filter((b) => b.file.startsWith("docs") && b.language === "json" && !b.notConfig).length).toBeGreaterThanOrEqual(3);
  });

  it("labels every fence with a known language", () => {
    const unlabelled = blocks.filter((b) => !KNOWN_LANGUAGES.has(b.language)).map((b) => `${where(b)} \`\`\`${b.language}`);
    expect(unlabelled).toEqual([]);
  });

  for (const block of blocks.filter((b) => b.language === "sh" || b.language === "bash")) {
    const shell = block.language as "sh" | "bash";
    it(`${where(block)}: the ${shell} example is valid ${shell === "sh" ? "POSIX sh" : "bash"}`, () => {
      expect(shellSyntaxError(shell, block.text)).toBeUndefined();
    });
    for (const config of inlineConfigs(block.text)) {
      it(`${where(block)}: its CODEMODE_CONFIG loads and keeps code mode on`, () => {
        expect(configProblem(config)).toBeUndefined();
      });
    }
  }

  for (const block of blocks.filter((b) => b.language === "json" && !b.notConfig)) {
    it(`${where(block)}: the JSON example is a configuration that loads and keeps code mode on`, () => {
      expect(configProblem(block.text)).toBeUndefined();
    });
  }

  for (const block of blocks.filter((b) => b.language === "json" && b.notConfig)) {
    it(`${where(block)}: the JSON example marked not-config is valid JSON`, () => {
      expect(() => JSON.parse(block.text)).not.toThrow();
    });
  }
});

describe("docs example checks", () => {
  it("reject a bash-only script as POSIX sh and accept it as bash", () => {
    const script = "H=(-H 'a: b')\necho \"${H[@]}\" <<<x\n";
    expect(shellSyntaxError("sh", script)).toBeDefined();
    expect(shellSyntaxError("bash", script)).toBeUndefined();
  });

  it("reject a config snippet that would turn code mode off, and one with an unknown key; a snippet that does not mention code mode keeps it on", () => {
    expect(configProblem('{ "tools": { "codeMode": false } }')).toMatch(/code mode off/);
    expect(configProblem('{ "logging": { "redactPatterns": ["acct_[0-9]{6}"] } }')).toBeUndefined();
    expect(configProblem('{ "tool": { "codeMode": true } }')).toMatch(/unknown key "tool"/);
    expect(configProblem('{ "tools": { "codeMode": true }, "logging": { "redactPatterns": ["acct_[0-9]{6}"] } }')).toBeUndefined();
  });

  it("mark a JSON block as not config only by the comment on the line before its fence", () => {
    const md = ["<!-- not-config -->", "", "```json", '{"status":"completed"}', "```", "", "```json", "{}", "```"].join("\n");
    expect(fencedBlocks("x.md", md).map((b) => [b.line, b.notConfig])).toEqual([
      [3, true],
      [7, false],
    ]);
  });
});
